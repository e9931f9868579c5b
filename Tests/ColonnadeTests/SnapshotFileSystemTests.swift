import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport
#if canImport(Glibc)
import Glibc
#endif

@Suite struct SnapshotFileSystemTests {
    @Test func loadingAMissingFileOrADirectoryNamesTheProblem() {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        #expect(loadError(dir.file("nope.snapshot")) == .noSuchFile(file: dir.file("nope.snapshot")))
        #expect(loadError(dir.path) == .isADirectory(file: dir.path))
        #expect(caseName(QuoteTable.verifySnapshot(at: dir.file("nope.snapshot")).problems.first?.error) == "noSuchFile")
    }

    @Test func savingIntoAMissingDirectoryOrOverADirectoryFailsAndLeavesNothing() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let table = sampleTestTable(rows: 100, tickers: 2)
        let missing = dir.file("no/such/dir/t.snapshot")
        #expect(throws: SnapshotError.noSuchFile(file: missing)) { try table.save(to: missing) }
        try FileManager.default.createDirectory(atPath: dir.file("d.snapshot"), withIntermediateDirectories: false)
        #expect(throws: SnapshotError.isADirectory(file: dir.file("d.snapshot"))) { try table.save(to: dir.file("d.snapshot")) }
        #expect(throws: SnapshotError.isADirectory(file: dir.path + "/")) { try table.save(to: dir.path + "/") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["d.snapshot"])
    }

    /// Root ignores directory permissions, so this runs unprivileged; as root, the sysfs case below
    /// runs instead. Swift Testing reports the other one as skipped, with its reason.
    @Test(.enabled(if: geteuid() != 0, "root ignores directory permissions; the sysfs case runs instead"))
    func savingIntoAReadOnlyDirectoryIsPermissionDenied() throws {
        let table = sampleTestTable(rows: 100, tickers: 2)
        let dir = ScratchDirectory()
        defer {
            chmod(dir.path, 0o755)
            dir.remove()
        }
        chmod(dir.path, 0o555)
        let error = #expect(throws: SnapshotError.self) { try table.save(to: dir.file("t.snapshot")) }
        #expect(caseName(error) == "permissionDenied")
    }

    /// sysfs refuses new files even to root.
    @Test(
        .enabled(if: geteuid() == 0, "runs as root only (unprivileged, the read-only directory case runs)"),
        .enabled(if: FileManager.default.fileExists(atPath: "/sys/kernel"), "needs sysfs at /sys"))
    func savingIntoSysfsAsRootIsPermissionDenied() throws {
        let table = sampleTestTable(rows: 100, tickers: 2)
        let error = #expect(throws: SnapshotError.self) { try table.save(to: "/sys/colonnade-test.snapshot") }
        #expect(caseName(error) == "permissionDenied", "\(String(describing: error))")
    }

    /// Whether a temporary is stale is decided by its lock, not by the PID in its name: a PID
    /// that exists here may be an unrelated process, one that does not may be a live saver in
    /// another PID namespace (see SnapshotWriteSafetyTests for the locked case).
    @Test func strayUnlockedTemporariesAreRemovedAndNeverBreakASave() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("t.snapshot")
        let dead = dir.file(".t.snapshot.tmp-2147483647-00000000deadbeef")  // no such pid
        let unlocked = dir.file(".t.snapshot.tmp-\(getppid())-0000000000000001")  // a live pid, but nobody holds the file
        let other = dir.file(".other.snapshot.tmp-2147483647-0000000000000002")  // another target's
        for p in [dead, unlocked, other] { writeBytes(Array("half a snapshot".utf8), to: p) }
        try sampleTestTable().save(to: path)
        #expect(try QuoteTable.load(from: path) == sampleTestTable())
        #expect(!FileManager.default.fileExists(atPath: dead))
        #expect(!FileManager.default.fileExists(atPath: unlocked))
        #expect(FileManager.default.fileExists(atPath: other))
    }

    @Test func concurrentSavesToOnePathLeaveOneWholeSnapshot() async throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("t.snapshot")
        let tables = (0 ..< 4).map { sampleTestTable(rows: 3_000, tickers: 3, seed: UInt64($0)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for t in tables { group.addTask { for _ in 0 ..< 5 { try t.save(to: path, durable: false) } } }
            try await group.waitForAll()
        }
        let loaded = try QuoteTable.load(from: path)
        #expect(tables.contains(loaded))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["t.snapshot"])
    }
}
