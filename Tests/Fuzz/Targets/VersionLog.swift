// fuzz-modules: Colonnade
//
// A store's version log (docs/SNAPSHOT_FORMAT.md, *The version log*): `SnapshotLog.decode`.
//
// Input = the log's body (from byte 64); the harness writes the header (magic, major 2, length,
// body checksum, header checksum) so that mutations reach the body's parser rather than dying at a
// checksum. Oracle: a body that decodes encodes back to a log that decodes to the same value
// (`decode(encode(decode(x))) == decode(x)`), and no input traps. `FUZZ_MAKE_SEEDS=dir` writes
// seed bodies and exits.
@testable import Colonnade
import Foundation

@_cdecl("LLVMFuzzerInitialize")
public func initialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    if let dir = ProcessInfo.processInfo.environment["FUZZ_MAKE_SEEDS"] {
        makeSeeds(into: dir)
        exit(0)
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    let file = seal(body)
    let decoded = file.withUnsafeBytes { b -> SnapshotLog? in try? SnapshotLog.decode(b, file: "fuzz") }
    guard let log = decoded else { return 0 }
    let again = log.encoded().withUnsafeBytes { b -> SnapshotLog? in try? SnapshotLog.decode(b, file: "fuzz") }
    guard again == log else { fatalError("a decoded log does not survive encoding: \(log)") }
    _ = log.versions.map { log.bytes(of: $0) }
    return 0
}

/// The header a writer puts before `body` (SnapshotLog.encoded's layout).
func seal(_ body: [UInt8]) -> [UInt8] {
    var header = [UInt8](repeating: 0, count: 64)
    header.replaceSubrange(0 ..< 8, with: Array("COLNSNAP".utf8))
    header[8] = 2
    func put(_ v: UInt64, at o: Int) { for i in 0 ..< 8 { header[o + i] = UInt8(truncatingIfNeeded: v >> (8 * UInt64(i))) } }
    put(UInt64(64 + body.count), at: 16)
    put(SnapshotChecksum.hash(body, seed: 64), at: 24)
    put(SnapshotChecksum.hash(header, seed: 0), at: 56)
    return header + body
}

func makeSeeds(into dir: String) {
    let file = SnapshotDataFile(name: "v000001-0123456789abcdef.snapshot", size: 8192, footerChecksum: 42, rowCount: 100)
    let segment = SnapshotDataFile(name: "v000002-fedcba9876543210.snapshot", size: 5000, footerChecksum: 7, rowCount: 10)
    let v1 = SnapshotVersion(
        number: 1, millisecondsSince1970: 1_700_000_000_000, kind: .single, command: "", rowCount: 100,
        writtenRows: 100, writtenBytes: 8192, restoredFrom: nil, files: [0])
    let v2 = SnapshotVersion(
        number: 2, millisecondsSince1970: 1_700_000_060_000, kind: .append, command: "colonnade import day.csv",
        rowCount: 110, writtenRows: 10, writtenBytes: 5000, restoredFrom: nil, files: [0, 1])
    var v3 = v1
    v3.number = 3
    v3.kind = .restore
    v3.restoredFrom = 1
    let logs = [
        SnapshotLog(dataDirectory: "q.snapshot.data", files: [file], versions: [v1]),
        SnapshotLog(dataDirectory: "q.snapshot.data", files: [file, segment], versions: [v1, v2, v3]),
    ]
    for (i, log) in logs.enumerated() {
        let bytes = Array(log.encoded().dropFirst(64))
        FileManager.default.createFile(atPath: "\(dir)/seed-\(i)", contents: Data(bytes))
    }
}
