import Colonnade
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `colonnade import` when the snapshot cannot be written: an error naming the snapshot, exit
/// status 1 (no crash), the snapshot at the path exactly as it was (or none, for a new one), and
/// no temporary left beside it. The failure is real: the built executable runs under a file-size
/// limit (`ulimit -f`, RLIMIT_FSIZE) with SIGXFSZ ignored, so a write or reservation past the
/// limit fails with EFBIG instead of killing the process. For a new snapshot that is the direct
/// path's draft whose reservation (`fallocate` of the payload area) fails: the import gives up
/// on it, removes its temporary and takes the ordinary path, whose save fails the same way.
@Suite struct ImportWriteFailureTests {
    /// Runs `colonnade arguments` with SIGXFSZ ignored, under a limit of `blocks` 512-byte blocks.
    static func runLimited(_ arguments: [String], blocks: Int, in directory: URL) throws -> BuiltExecutable.Result {
        try RunningExecutable(
            ["-c", "trap '' XFSZ; ulimit -f \(blocks); exec \"$0\" \"$@\"", try BuiltExecutable.url().path] + arguments,
            environment: EndToEndFixture.cleanEnvironment, in: directory, executable: "/bin/sh"
        ).finish(timeout: .seconds(120))
    }

    /// Per-ticker JSON responses generated with `seed`, in `directory/name`.
    static func responses(seed: Int, into directory: URL, name: String) throws -> [String] {
        let folder = directory.appendingPathComponent(name).path
        let made = try RunningExecutable(
            ["generate", "--tickers", "20", "--days", "250", "--seed", "\(seed)", "--json-dir", folder],
            environment: EndToEndFixture.cleanEnvironment, in: directory
        ).finish()
        #expect(made.status == 0, "\(made.standardError)")
        return try FileManager.default.contentsOfDirectory(atPath: folder).sorted().map { folder + "/" + $0 }
    }

    static func temporaries(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.contains(".tmp-") }
    }

    @Test func aSnapshotPastTheFileSizeLimitIsAnErrorAndLeavesNothingBehind() throws {
        let directory = try EndToEndFixture.scratchDirectory("fsize")
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try Self.responses(seed: 5, into: directory, name: "first")
        let second = try Self.responses(seed: 6, into: directory, name: "second")
        let out = directory.appendingPathComponent("out").path
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let limit = 64  // 32 KiB; the snapshot of 5,000 rows is about 500 KB

        // Control: under a limit far above the snapshot's size, the same import succeeds.
        let snapshot = out + "/quotes.snapshot"
        let control = try Self.runLimited(["import"] + first + ["--snapshot", snapshot], blocks: 1 << 20, in: directory)
        #expect(control.status == 0, "\(control.standardError)")
        let before = try Data(contentsOf: URL(fileURLWithPath: snapshot))
        #expect(before.count > limit * 512 * 4)

        // A new snapshot (the direct path first, then the ordinary one): nothing is left at all.
        let fresh = out + "/new.snapshot"
        let failed = try Self.runLimited(["import"] + first + ["--snapshot", fresh, "--threads", "2"], blocks: limit, in: directory)
        #expect(failed.status == 1, "\(failed.standardError)")
        #expect(!failed.terminatedBySignal)
        #expect(
            failed.standardError.hasPrefix("error: \(fresh): write failed: \(String(cString: strerror(EFBIG))) (errno \(EFBIG))"),
            "\(failed.standardError)")
        #expect(!failed.standardError.contains("Fatal error"))
        #expect(!FileManager.default.fileExists(atPath: fresh))
        #expect(try Self.temporaries(in: out).isEmpty)

        // An existing snapshot (the ordinary path, an update): byte for byte as it was.
        let update = try Self.runLimited(["import"] + second + ["--snapshot", snapshot], blocks: limit, in: directory)
        #expect(update.status == 1, "\(update.standardError)")
        #expect(!update.terminatedBySignal)
        // The update appends a version: the file that failed is its new segment in the data directory.
        #expect(update.standardError.hasPrefix("error: \(snapshot).data/v"), "\(update.standardError)")
        #expect(
            update.standardError.contains(".snapshot: write failed: \(String(cString: strerror(EFBIG))) (errno \(EFBIG))"),
            "\(update.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: snapshot)) == before)
        #expect(try Self.temporaries(in: out).isEmpty)

        // And without the limit, the update goes through (it was the limit that stopped it).
        let unlimited = try Self.runLimited(["import"] + second + ["--snapshot", snapshot], blocks: 1 << 20, in: directory)
        #expect(unlimited.status == 0, "\(unlimited.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: snapshot)) != before)
    }
}
