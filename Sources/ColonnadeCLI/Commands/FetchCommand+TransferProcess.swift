import DataLink
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension FetchCommand {
    /// The environment variable naming the program `fetch` sends each API request from. Unset:
    /// ``transferProgram`` beside this executable. Tests set it to the built one, or empty to send
    /// requests in the test's own process (``TestTuning/inProcessTransport``).
    static let transferExecutableVariable = "COLONNADE_TRANSFER_EXECUTABLE"

    /// The program each API request runs in: `colonnade-transfer` (target `colonnade-transfer`,
    /// built with `colonnade`), whose `main` is `TransferProcessServer.serve`. It is a program of
    /// its own, not a mode of `colonnade`, because it alone links FoundationNetworking: loading
    /// libcurl and the ~35 libraries it needs was half of every `colonnade` command's start
    /// (docs/MEASUREMENTS.md, *Start of a process*). A trap inside FoundationNetworking (a
    /// `Content-Length` near 2^63) ends that child, and `fetch` reports a malformed response.
    static let transferProgram = "colonnade-transfer"

    /// How `fetch` sends its requests: a child process of ``transferProgram`` (or of the program
    /// the environment names), or in process when a test provides a transport.
    ///
    /// - Throws: ``CommandFailure`` naming where the program was looked for, when it is missing.
    static func transport(_ context: CommandContext) throws -> HTTPTransport {
        if let named = context.environment[transferExecutableVariable] {
            if !named.isEmpty { return .childProcess(TransferProcess(executable: named, arguments: [])) }
            if let inProcess = context.tuning.inProcessTransport { return inProcess }
        }
        let beside = besideThisExecutable(transferProgram)
        guard let beside, access(beside, X_OK) == 0 else {
            throw CommandFailure(
                "fetch sends its requests from the program '\(transferProgram)', which was not found"
                    + (beside.map { " at \($0)" } ?? ""),
                hint: "'swift build' (-c release for a release build) builds it beside 'colonnade'; "
                    + "install the two files together (README, Set up)")
        }
        return .childProcess(TransferProcess(executable: beside, arguments: []))
    }

    /// `name` in the directory of the running executable (its real path, links resolved), or nil
    /// when that is not known.
    static func besideThisExecutable(_ name: String) -> String? {
        guard var path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"), path.hasPrefix("/")
        else { return nil }
        // A binary replaced while it runs (an upgrade) shows as "PATH (deleted)": its new
        // neighbour is the one to run.
        if path.hasSuffix(" (deleted)") { path.removeLast(" (deleted)".count) }
        return URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(name).path
    }
}
