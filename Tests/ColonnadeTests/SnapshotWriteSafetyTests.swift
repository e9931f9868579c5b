import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Colonnade
import ColonnadeTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Saving never loses or destroys data: the write lock (`update(at:)`), permissions carried over,
/// read-only files refused, symbolic links written through, FIFOs refused without blocking, and
/// temporaries that are live never removed.
@Suite struct SnapshotWriteSafetyTests {
    /// A one-row table of ticker `symbol`.
    static func table(_ symbol: String, close: Int = 5) throws -> QuoteTable {
        var dates = Column<Int32>(), closes = Column<Double>()
        dates.append(16_072)  // 2014-01-02
        closes.append(Double(close))
        var table = try QuoteTable(
            sortingRows: [TickerEntry(symbol: symbol)], rowTickers: nil, dates: dates,
            schema: [ColumnDescriptor(name: "Close", type: .float64)], columns: [AnyColumn(closes)])
        table.computeSummaries()
        return table
    }

    static func status(_ path: String) -> stat? {
        var st = stat()
        return lstat(path, &st) == 0 ? st : nil
    }

    static func mode(_ path: String) -> mode_t? { status(path).map { $0.st_mode & 0o7777 } }

    // MARK: Item 2: update(at:) and SnapshotLock

    /// Six threads each add their own ticker to one snapshot through `update(at:)`, all at once:
    /// every ticker is there at the end (without the lock, later saves drop earlier tickers).
    @Test func concurrentUpdatesFromManyThreadsLoseNothing() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("s.snapshot")
        let symbols = (0 ..< 6).map { "T\($0)" }
        let tables = try symbols.map { try Self.table($0) }
        let failures = Mutex<[String]>([])
        let group = DispatchGroup()
        for t in tables {
            group.enter()
            Thread.detachNewThread {
                do {
                    try QuoteTable.update(at: path, durable: false) { table in table.upsert(t) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
                group.leave()
            }
        }
        group.wait()
        #expect(failures.withLock { $0 } == [])
        #expect(try QuoteTable.load(from: path).tickers.map(\.symbol).sorted() == symbols)
        // The first update wrote a single-file snapshot; each later one committed a version of a store.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["s.snapshot", "s.snapshot.data", "s.snapshot.lock"])
        #expect(try SnapshotStore(at: path).log().versions.map(\.number) == Array(1 ... symbols.count))
    }

    /// A released lock is free at once even when another descriptor still refers to its open
    /// file description — as a child forked by this process (another test's, or a transfer
    /// process) holds one until its exec closes it. The duplicate here stands for that child: a
    /// release that only closed its own descriptor left the lock held (a full test run saw an
    /// import wait for "another process" on a snapshot nobody else wrote).
    @Test func aReleasedLockIsFreeWhileACopyOfItsDescriptorLivesOn() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("s.snapshot")
        let lock = try SnapshotLock(snapshotAt: path)
        let copy = dup(lock.descriptor)
        #expect(copy >= 0)
        defer { close(copy) }
        lock.release()
        let again = try SnapshotLock(snapshotAt: path, wait: false)
        again.release()
    }

    @Test func aSecondWriterWaitsForTheHolderAndIsToldItsPID() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("s.snapshot")
        try Self.table("A").save(to: path)
        let lock = try SnapshotLock(snapshotAt: path)
        #expect(try String(contentsOfFile: lock.lockPath, encoding: .utf8) == "\(getpid())\n")
        let waiting = DispatchSemaphore(value: 0), finished = DispatchSemaphore(value: 0)
        let seen = Mutex<(holder: Int32?, error: String?)>((nil, nil))
        Thread.detachNewThread {
            do {
                try QuoteTable.update(
                    at: path,
                    whileWaiting: { holder in
                        seen.withLock { $0.holder = holder }
                        waiting.signal()
                    }
                ) { table in table.upsert(try Self.table("B")) }
            } catch {
                seen.withLock { $0.error = "\(error)" }
                waiting.signal()
            }
            finished.signal()
        }
        // The timeout only bounds a failing test.
        #expect(waiting.wait(timeout: .now() + 60) == .success)
        #expect(seen.withLock { $0.holder } == getpid())
        #expect(try QuoteTable.load(from: path).tickers.map(\.symbol) == ["A"])  // it has not run yet
        lock.release()
        #expect(finished.wait(timeout: .now() + 60) == .success)
        #expect(seen.withLock { $0.error } == nil)
        #expect(try QuoteTable.load(from: path).tickers.map(\.symbol) == ["A", "B"])
    }

    @Test func notWaitingThrowsLockedNamingTheHolderAndChangesNothing() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("s.snapshot")
        try Self.table("A").save(to: path)
        let before = readBytes(path)
        let lock = try SnapshotLock(snapshotAt: path)
        defer { lock.release() }
        var ran = false
        #expect(throws: SnapshotError.locked(file: path, lockFile: path + ".lock", holder: getpid())) {
            try QuoteTable.update(at: path, wait: false) { _ in ran = true }
        }
        #expect(!ran)
        #expect(readBytes(path) == before)
        #expect(
            SnapshotError.locked(file: path, lockFile: path + ".lock", holder: 42).description
                == "\(path): another process (PID 42) is writing it (lock file \(path).lock)")
    }

    @Test func updateStartsEmptyOnlyWhereNothingExistsAndSavesNothingWhenTheBodyThrows() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("s.snapshot")
        struct Stop: Error {}
        #expect(throws: Stop.self) { try QuoteTable.update(at: path) { _ in throw Stop() } }
        #expect(!FileManager.default.fileExists(atPath: path))
        let saved = try QuoteTable.update(at: path) { table in
            #expect(table.rowCount == 0 && table.tickers.isEmpty)
            table.upsert(try Self.table("A"))
        }
        #expect(try QuoteTable.load(from: path) == saved)
        // A damaged snapshot is an error, never a fresh start.
        writeBytes(Array("not a snapshot".utf8), to: path)
        #expect(throws: SnapshotError.notASnapshot(file: path)) { try QuoteTable.update(at: path) { _ in } }
        #expect(readBytes(path) == Array("not a snapshot".utf8))
        // Only ENOENT means "new": a path whose parent is a file (ENOTDIR) is an error before the
        // body runs, not an empty table.
        let underAFile = path + "/inner.snapshot"
        var ran = false
        #expect(throws: SnapshotError.self) { try QuoteTable.update(at: underAFile) { _ in ran = true } }
        #expect(!ran)
    }

    // MARK: Item 9: permissions

    @Test(arguments: [0o600, 0o640, 0o604] as [mode_t])
    func saveKeepsTheModeOfTheFileItReplaces(mode: mode_t) throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("s.snapshot")
        try Self.table("A").save(to: path)
        #expect(chmod(path, mode) == 0)
        try Self.table("B").save(to: path)
        #expect(Self.mode(path) == mode)
        #expect(try QuoteTable.load(from: path).tickers.map(\.symbol) == ["B"])
    }

    /// Without privilege the owner cannot be carried over (EPERM is ignored), so there is nothing to
    /// check; Swift Testing reports the test as skipped.
    @Test(.enabled(if: geteuid() == 0, "needs root: only root may set a file's owner"))
    func saveKeepsOwnerAndGroupWherePermitted() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("s.snapshot")
        try Self.table("A").save(to: path)
        #expect(chown(path, 4242, 4343) == 0)
        #expect(chmod(path, 0o640) == 0)
        try Self.table("B").save(to: path)
        let st = try #require(Self.status(path))
        #expect(st.st_uid == 4242 && st.st_gid == 4343)
        #expect(st.st_mode & 0o7777 == 0o640)
    }

    @Test func aReadOnlySnapshotIsRefusedEvenAsRootAndLeftUntouched() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("s.snapshot")
        try Self.table("A").save(to: path)
        #expect(chmod(path, 0o444) == 0)
        let before = readBytes(path)
        #expect(throws: SnapshotError.readOnly(file: path, mode: 0o444)) { try Self.table("B").save(to: path) }
        var ran = false
        #expect(throws: SnapshotError.readOnly(file: path, mode: 0o444)) {
            try QuoteTable.update(at: path) { _ in ran = true }
        }
        #expect(!ran, "refused before the work, not after")
        #expect(readBytes(path) == before)
        #expect(Self.mode(path) == 0o444)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["s.snapshot", "s.snapshot.lock"])
        #expect(SnapshotError.readOnly(file: path, mode: 0o444).description == "\(path): is read-only (mode 0444); not replacing it")
    }

    // MARK: Item 12: symbolic links and FIFOs

    @Test func saveWritesThroughAChainOfSymbolicLinksAndKeepsThem() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.file("data"), withIntermediateDirectories: false)
        let target = dir.file("data/real.snapshot")
        try Self.table("A").save(to: target)
        #expect(chmod(target, 0o600) == 0)
        #expect(symlink("data/real.snapshot", dir.file("middle.snapshot")) == 0)  // relative
        #expect(symlink(dir.file("middle.snapshot"), dir.file("outer.snapshot")) == 0)  // absolute
        try QuoteTable.update(at: dir.file("outer.snapshot")) { table in table.upsert(try Self.table("B")) }
        for link in ["middle.snapshot", "outer.snapshot"] {
            #expect(Self.status(dir.file(link)).map { $0.st_mode & S_IFMT } == S_IFLNK, "\(link)")
        }
        #expect(try QuoteTable.load(from: target).tickers.map(\.symbol) == ["A", "B"])
        #expect(Self.mode(target) == 0o600)
        // The lock is the target's, shared by every path to it.
        #expect(FileManager.default.fileExists(atPath: target + ".lock"))
        #expect(!FileManager.default.fileExists(atPath: dir.file("outer.snapshot.lock")))
    }

    @Test func aDanglingSymbolicLinkIsNeverReplacedByANewSnapshot() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let link = dir.file("link.snapshot"), missing = dir.file("gone/real.snapshot")
        #expect(symlink(missing, link) == 0)
        let expected = SnapshotError.danglingSymlink(file: link, target: missing)
        #expect(throws: expected) { try Self.table("A").save(to: link) }
        var ran = false
        #expect(throws: expected) { try QuoteTable.update(at: link) { _ in ran = true } }
        #expect(!ran)
        #expect(Self.status(link).map { $0.st_mode & S_IFMT } == S_IFLNK)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == missing)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["link.snapshot"])
    }

    /// Runs `body` on a thread; if it has not returned within `timeout` (it blocks opening the
    /// FIFO), records a failure and opens the FIFO's other end so that it returns.
    static func withinDeadline(fifo: String, writer: Bool, _ body: @escaping @Sendable () -> String) -> String {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<String>("")
        Thread.detachNewThread {
            let text = body()
            result.withLock { $0 = text }
            done.signal()
        }
        if done.wait(timeout: .now() + 30) == .timedOut {
            Issue.record("blocked on the FIFO \(fifo)")
            let fd = open(fifo, (writer ? O_RDONLY : O_RDWR) | O_NONBLOCK)
            done.wait()
            close(fd)
        }
        return result.withLock { $0 }
    }

    @Test func aFIFOIsRefusedAtOnceWhenLoadingSavingOrUpdating() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let fifo = dir.file("q.fifo")
        #expect(mkfifo(fifo, 0o644) == 0)
        let kind = "a FIFO (named pipe)"
        let load = Self.withinDeadline(fifo: fifo, writer: false) { "\(String(describing: loadError(fifo)))" }
        #expect(load == "\(String(describing: SnapshotError.notARegularFile(file: fifo, kind: kind) as SnapshotError?))")
        let save = Self.withinDeadline(fifo: fifo, writer: true) {
            do {
                try Self.table("A").save(to: fifo)
                return "saved"
            } catch { return "\(error)" }
        }
        #expect(save == SnapshotError.notARegularFile(file: fifo, kind: kind).description)
        let update = Self.withinDeadline(fifo: fifo, writer: false) {
            do {
                try QuoteTable.update(at: fifo) { _ in }
                return "updated"
            } catch { return "\(error)" }
        }
        #expect(update == SnapshotError.notARegularFile(file: fifo, kind: kind).description)
        #expect(Self.status(fifo).map { $0.st_mode & S_IFMT } == S_IFIFO)
    }

    // MARK: Item 11: temporaries

    /// A temporary whose lock is held belongs to a live saver, whatever its PID says (here one that
    /// does not exist in this namespace): another save must leave it; once released, it is stale.
    @Test func aLiveSaversTemporarySurvivesAnotherSavesCleanup() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("t.snapshot")
        let live = dir.file(".t.snapshot.tmp-2147483647-00000000000000bb")
        writeBytes(Array("a snapshot being written".utf8), to: live)
        let fd = open(live, O_RDONLY | O_CLOEXEC)
        #expect(fd >= 0 && flock(fd, LOCK_EX) == 0)
        try Self.table("A").save(to: path)
        #expect(readBytes(live) == Array("a snapshot being written".utf8))
        close(fd)
        try Self.table("B").save(to: path)
        #expect(!FileManager.default.fileExists(atPath: live))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["t.snapshot"])
    }

    /// While a save writes, its temporary is locked (so no other save's cleanup can take it).
    @Test func aReplacementHoldsItsTemporaryLockedUntilRenamed() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("out.txt")
        writeBytes(Array("old".utf8), to: path)
        let file = try ReplacementFile(replacing: path)
        _ = "new".withCString { write(file.fileDescriptor, $0, 3) }
        let probe = open(file.temporaryPath, O_RDONLY | O_CLOEXEC)
        defer { close(probe) }
        #expect(flock(probe, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK)
        #expect(readBytes(path) == Array("old".utf8))
        try file.commit()
        #expect(readBytes(path) == Array("new".utf8))
        // Released without commit: the target is untouched, the temporary gone.
        let abandoned = try ReplacementFile(replacing: path)
        _ = "half".withCString { write(abandoned.fileDescriptor, $0, 4) }
        abandoned.discard()
        #expect(readBytes(path) == Array("new".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["out.txt"])
    }
}
