import Colonnade

/// Runs the `colonnade` command line with `arguments` (without the program name) and returns its exit status.
public func runColonnade(_ arguments: [String]) -> Int32 {
    print("colonnade \(Colonnade.version)")
    return 0
}
