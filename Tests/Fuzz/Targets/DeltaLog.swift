// fuzz-modules: Colonnade
//
// The Delta Lake log reader (`DeltaTable`, Sources/Colonnade/Interop/Delta) on any commit file: the
// input is written as version 0 of a table in a temporary directory and read back. Oracle: no
// crash; a malformed commit is reported with a line inside the file; a snapshot's files are
// unique paths; `files(at:)` either refuses the table or names those files.
@testable import Colonnade
import Foundation

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-delta-\(getpid())").path

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    try? FileManager.default.createDirectory(atPath: directory + "/_delta_log", withIntermediateDirectories: true)
    let commit = directory + "/_delta_log/00000000000000000000.json"
    FileManager.default.createFile(atPath: commit, contents: Data(bytes: data, count: size))
    let lines = UnsafeBufferPointer(start: data, count: size).reduce(1) { $0 + ($1 == 10 ? 1 : 0) }
    do {
        let snapshot = try DeltaTable.snapshot(at: directory)
        precondition(Set(snapshot.files.map(\.path)).count == snapshot.files.count, "a path listed twice")
        if let files = try? DeltaTable.files(at: directory) { precondition(files.count == snapshot.files.count) }
    } catch let DeltaError.malformed(_, line, _) {
        precondition(line >= 1 && line <= lines, "line \(line) of a commit of \(lines) lines")
    } catch {
        _ = "\(error)"
    }
    return 0
}
