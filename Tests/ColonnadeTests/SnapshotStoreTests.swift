import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Stores of versions and appends (docs/SNAPSHOT_FORMAT.md, *Stores*): every version reads as
/// the plain table a model keeps for it, through appends, full writes, compactions, restores and
/// gcs; crashes, damage and readers during gc are covered here and in `SnapshotStoreCrashTests`.
@Suite struct SnapshotStoreTests {
    /// A segment: random rows over tickers `T0…` (so some replace stored rows and some tickers are
    /// new), with a varying subset of columns, one of them sometimes new (`extra_N`).
    static func segment(seed: UInt64, rows: Int = 300, tickers: Int = 9) -> QuoteTable {
        let t = TestTables.random(rows: rows, tickers: tickers, seed: seed)
        var schema = [ColumnDescriptor](), columns = [AnyColumn]()
        for (i, (d, c)) in zip(t.schema, t.columns).enumerated() where (seed >> UInt64(i)) & 1 == 1 || i == 3 {
            schema.append(i == 0 && seed % 3 == 0 ? ColumnDescriptor(name: "extra_\(seed % 4)", type: d.type) : d)
            columns.append(c)
        }
        do {
            var table = try QuoteTable(schema: schema, columns: columns, dates: t.dates, tickers: t.tickers)
            table.computeSummaries()
            return table
        } catch {
            preconditionFailure("segment: \(error)")
        }
    }

    static func model(_ base: QuoteTable, _ segments: [QuoteTable]) -> QuoteTable {
        var m = base
        for s in segments { m.upsert(s) }  // one upsert per write, as a rewriting import did
        return m
    }

    /// 1 full write plus 0, 1, 5 and 40 appends: the store reads as the table a rewrite gave,
    /// current and every earlier version; only the segment and the log are written.
    @Test(arguments: [0, 1, 5, 40])
    func appendedStoreReadsAsTheRewrittenTable(appends: Int) throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("quotes.snapshot")
        let store = SnapshotStore(at: path)
        let base = TestTables.random(rows: 3_000, tickers: 7, seed: 1)
        try store.write(base, command: "write", durable: false)
        var segments = [QuoteTable]()
        for i in 0 ..< appends {
            let s = Self.segment(seed: UInt64(100 + i))
            segments.append(s)
            let before = try store.log().totalBytes
            let commit = try store.append(s, command: "append \(i)", durable: false)
            #expect(commit.version.number == i + 2)
            #expect(commit.version.kind == .append)
            // Only the new rows' file and the log were written; the files already there stay.
            let after = try store.log()
            #expect(after.totalBytes - before == commit.version.writtenBytes)
            #expect(commit.version.writtenBytes < 200_000)
            #expect(commit.version.rowCount == Self.model(base, segments).rowCount)
        }
        let expected = Self.model(base, segments)
        #expect(try QuoteTable.load(from: path) == expected)
        #expect(try store.table() == expected)
        #expect(QuoteTable.verifySnapshot(at: path).isValid)
        // Every earlier version is still readable as it was.
        for k in stride(from: 0, through: appends, by: max(1, appends / 4)) {
            #expect(try store.table(atVersion: k + 1) == Self.model(base, Array(segments.prefix(k))))
        }
        // Compaction keeps the table and makes it one file.
        if appends > 0 {
            let commit = try #require(try store.compact(durable: false))
            #expect(commit.version.kind == .compact)
            #expect(try store.log().current.files.count == 1)
            #expect(try store.table() == expected)
        }
        // Queries answer as on the rewritten table.
        let loaded = try QuoteTable.load(from: path)
        for q in ["80 < f64 < 83", "i32 > 70 and f32 < 90", "not (i64 >= 75000)"] {
            #expect(try loaded.select(where: q).rows() == expected.select(where: q).rows(), "\(q)")
        }
    }

    /// A random sequence of appends, full writes, compactions, restores and gcs against a model
    /// that keeps every version as a plain table.
    @Test(arguments: [UInt64(7), 8, 9])
    func randomHistoryMatchesTheModel(seed: UInt64) throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("s.snapshot")
        let store = SnapshotStore(at: path)
        var rng = SplitMix64(seed: seed)
        var model: [(number: Int, time: Int64, table: QuoteTable)] = []
        var clock: Int64 = 1_700_000_000_000
        let first = TestTables.random(rows: 1_500, tickers: 5, seed: seed)
        // The first write of a new path is a single-file snapshot; the second upgrades it.
        try first.save(to: path, durable: false)
        let single = try store.log()
        #expect(single.isSingleFile && single.versions.count == 1 && single.current.kind == .single)
        model.append((1, single.current.millisecondsSince1970, first))
        for step in 0 ..< 40 {
            clock += Int64(rng.next() % 3) * 86_400_000 + 1
            let current = model[model.count - 1].table
            let op = rng.next() % 10
            switch op {
            case 0 ..< 5:
                let s = Self.segment(seed: seed &* 1000 &+ UInt64(step), rows: Int(rng.next() % 400))
                guard s.rowCount > 0 else { continue }
                let c = try store.appendLocked(s, command: "append", durable: false, threads: 2, now: clock)
                var t = current
                t.upsert(s)
                model.append((c.version.number, clock, t))
                #expect(c.version.rowCount == t.rowCount)
            case 5:
                let t = TestTables.random(rows: 800, tickers: 4, seed: seed &+ UInt64(step))
                let c = try store.writeLocked(t, command: "write", durable: false, threads: 2, now: clock)
                model.append((c.version.number, clock, t))
            case 6:
                if let c = try store.compactLocked(command: "compact", durable: false, threads: 2, now: clock) {
                    model.append((c.version.number, clock, current))
                }
            case 7:
                let pick = model[Int(rng.next() % UInt64(model.count))]
                if pick.number == model[model.count - 1].number {
                    #expect(throws: SnapshotError.self) {
                        try store.restoreLocked(pick.number, command: "restore", durable: false, now: clock)
                    }
                } else {
                    let c = try store.restoreLocked(pick.number, command: "restore \(pick.number)", durable: false, now: clock)
                    #expect(c.version.restoredFrom == pick.number)
                    model.append((c.version.number, clock, pick.table))
                }
            default:
                let keep = Int(rng.next() % 4) + 1
                if rng.next() % 2 == 0 {
                    let removed = try store.collectGarbageLocked(keepLast: keep, keepDays: nil, durable: false).removedVersions
                    let kept = Array(model.suffix(keep))
                    #expect(removed == model.dropLast(keep).map(\.number))
                    model = kept
                } else {
                    let cutoff = clock - Int64(keep) * 86_400_000
                    _ = try store.collectGarbageLocked(keepLast: nil, keepDays: keep, now: clock, durable: false)
                    model = model.enumerated().filter { $0.offset == model.count - 1 || $0.element.time >= cutoff }.map(\.element)
                }
            }
            // The log holds exactly the model's versions, and each reads as the model's table.
            let log = try store.log()
            #expect(log.versions.map(\.number) == model.map(\.number), "step \(step)")
            if step % 5 == 4 || step == 39 {
                for m in model { #expect(try store.table(atVersion: m.number) == m.table, "step \(step) version \(m.number)") }
            }
            #expect(try store.table() == model[model.count - 1].table, "step \(step)")
        }
        #expect(QuoteTable.verifySnapshot(at: path).isValid)
        // gc leaves no file that no version names, and a version it removed is refused by name.
        let log = try store.log()
        if !log.isSingleFile {
            let files = Set(try FileManager.default.contentsOfDirectory(atPath: dir.file("s.snapshot.data")))
            #expect(files == Set(log.files.map(\.name)))
        }
        let first1 = log.versions[0].number
        if first1 > 1 {
            #expect(throws: SnapshotError.self) { _ = try store.table(atVersion: first1 - 1) }
        }
    }

    /// A reader that loaded a version keeps reading it while a writer appends, compacts and
    /// collects every old version's files.
    @Test func readerIsUndisturbedByCompactionAndGC() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("r.snapshot")
        let store = SnapshotStore(at: path)
        let base = TestTables.random(rows: 5_000, tickers: 6, seed: 3)
        try store.write(base, durable: false)
        try store.append(Self.segment(seed: 44), durable: false)
        try store.append(Self.segment(seed: 45), durable: false)
        let before = try store.log()
        // A single-file version maps its file: check one of those too.
        let reader = try store.table(atVersion: 1, verify: true)
        let merged = try store.table()
        let expectedRows = try merged.select(where: "80 < f64 < 83").rows()
        try store.append(Self.segment(seed: 46), durable: false)
        #expect(try store.compact(durable: false) != nil)
        let gc = try store.collectGarbage(keepLast: 1, keepDays: nil, durable: false)
        #expect(gc.removedVersions == before.versions.map(\.number) + [before.current.number + 1])
        #expect(gc.removedFiles == 4)
        // The files version 1 mapped are gone from the directory; the mapping still reads them.
        for f in before.files { #expect(!FileManager.default.fileExists(atPath: dir.file("r.snapshot.data/" + f.name))) }
        #expect(reader == base)
        #expect(try merged.select(where: "80 < f64 < 83").rows() == expectedRows)
        #expect(throws: SnapshotError.self) { _ = try store.table(atVersion: 1) }
    }

    /// A single-file snapshot loads unchanged; the first write upgrades it by a hard link
    /// (nothing copied), and an old (1.x) reader refuses the log clearly.
    @Test func singleFileUpgradesOnFirstWriteAndOldReadersRefuseTheLog() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("q.snapshot")
        let base = TestTables.random(rows: 2_000, tickers: 5, seed: 5)
        try base.save(to: path, durable: false)
        let original = readBytes(path)
        var st = stat()
        stat(path, &st)
        let inode = st.st_ino
        let store = SnapshotStore(at: path)
        try store.append(Self.segment(seed: 50), command: "colonnade import x.csv", durable: false)
        let log = try store.log()
        #expect(log.versions.map(\.kind) == [.single, .append])
        // Version 1's file is the old snapshot's inode, byte for byte.
        let v1 = dir.file("q.snapshot.data/" + log.files[log.versions[0].files[0]].name)
        stat(v1, &st)
        #expect(st.st_ino == inode)
        #expect(sameBytes(readBytes(v1), original))
        #expect(try store.table(atVersion: 1) == base)
        // What a 1.x binary does with the log: its reader refuses major version 2 by name.
        #expect(throws: SnapshotError.self) { _ = try SnapshotReader(path: path) }
        do {
            _ = try SnapshotReader(path: path)
        } catch {
            guard case let .unsupportedVersion(_, found, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(found == "2.0")
        }
    }

    /// The command is stored with credentials removed.
    @Test func commandTextRedactsCredentials() {
        let text = SnapshotStore.commandText([
            "colonnade", "fetch", "--api-key", "abcDEF1234567890xyzQ", "--base-url",
            "https://user:secret@example.com/api?x=1", "--api-key=zzzYYY9876543210abcd", "AAPL MSFT",
            "/tmp/colonnade-e2e-29092-4D1ECDAC/day.csv", "token=abcDEF1234567890xyzQ",
        ])
        #expect(!text.contains("abcDEF1234567890xyzQ"))
        #expect(!text.contains("secret"))
        #expect(!text.contains("zzzYYY9876543210abcd"))
        #expect(text.contains("https://<redacted>@example.com/api?x=1"))
        #expect(text.contains("'AAPL MSFT'"))
        #expect(text.hasPrefix("colonnade fetch --api-key <redacted>"))
        #expect(text.contains(" /tmp/colonnade-e2e-29092-4D1ECDAC/day.csv "), "paths are kept as typed")
        #expect(text.hasSuffix("token=<redacted>"))
    }

    /// Damage to a segment, a base or the log is found by checksums: load refuses, verify names
    /// the file.
    @Test func corruptionInAnyFileIsDetected() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("c.snapshot")
        let store = SnapshotStore(at: path)
        try store.write(TestTables.random(rows: 3_000, tickers: 5, seed: 9), durable: false)
        try store.append(Self.segment(seed: 61), durable: false)
        try store.append(Self.segment(seed: 62), durable: false)
        let log = try store.log()
        let pristine = try store.table()
        var rng = SplitMix64(seed: 77)
        for f in log.files + [SnapshotDataFile(name: "", size: 0, footerChecksum: 0, rowCount: 0)] {
            let p = f.name.isEmpty ? path : dir.file("c.snapshot.data/" + f.name)
            let bytes = readBytes(p)
            for _ in 0 ..< 6 {
                var damaged = bytes
                let at = Int(rng.next() % UInt64(bytes.count))
                damaged[at] ^= UInt8(1 << (rng.next() % 8))
                writeBytes(damaged, to: p)
                let loaded = try? store.table(verify: true)
                let report = QuoteTable.verifySnapshot(at: path)
                // A flipped bit is always noticed: by the load, or it is in a version the current
                // one does not read (then verify still reports it).
                #expect(!report.isValid, "\(p) byte \(at)")
                if let loaded { #expect(loaded == pristine || !log.current.files.contains(where: { log.files[$0].name == f.name })) }
                writeBytes(bytes, to: p)
            }
            // Truncated: refused too.
            writeBytes(Array(bytes.prefix(bytes.count - 1)), to: p)
            #expect(!QuoteTable.verifySnapshot(at: path).isValid)
            #expect((try? store.table()) == nil)
            writeBytes(bytes, to: p)
        }
        #expect(QuoteTable.verifySnapshot(at: path).isValid)
    }

    /// Segments are loaded side by side; with two of them damaged the error names the earlier
    /// one, as loading them in order did, for one and two threads.
    @Test func theFirstDamagedSegmentInOrderIsTheOneReported() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("d.snapshot")
        let store = SnapshotStore(at: path)
        try store.write(TestTables.random(rows: 2_000, tickers: 5, seed: 3), durable: false)
        for seed in UInt64(71) ... 76 { try store.append(Self.segment(seed: seed), durable: false) }
        let log = try store.log()
        let names = log.current.files.map { log.files[$0].name }
        #expect(names.count == 7)
        for (first, second) in [(2, 5), (1, 6), (4, 5)] {
            var originals: [(String, [UInt8])] = []
            for k in [second, first] {  // the later one damaged first: no order of damage helps
                let p = dir.file("d.snapshot.data/" + names[k])
                let bytes = readBytes(p)
                originals.append((p, bytes))
                writeBytes(Array(bytes.prefix(bytes.count - 1)), to: p)
            }
            for threads in [1, 2] {
                do {
                    _ = try store.table(verify: true, threads: threads)
                    Issue.record("damaged segments \(first) and \(second) loaded")
                } catch {
                    #expect("\(error)".contains(names[first]), "\(error)")
                    #expect(!"\(error)".contains(names[second]), "\(error)")
                }
            }
            for (p, bytes) in originals { writeBytes(bytes, to: p) }
        }
        #expect(
            try store.table()
                == Self.model(TestTables.random(rows: 2_000, tickers: 5, seed: 3), (UInt64(71) ... 76).map { Self.segment(seed: $0) }))
    }

    /// The promises made about a snapshot file hold for a store: writes go through a symbolic
    /// link, mode is kept on the log and given to new data files, and the lock file is beside the target.
    @Test func symlinkModeAndLockAreKept() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let real = dir.file("real.snapshot"), link = dir.file("link.snapshot")
        try TestTables.random(rows: 1_000, tickers: 3, seed: 2).save(to: real, durable: false)
        chmod(real, 0o600)
        symlink(real, link)
        let store = SnapshotStore(at: link)
        try store.append(Self.segment(seed: 70), durable: false)
        var st = stat()
        lstat(link, &st)
        #expect((st.st_mode & S_IFMT) == S_IFLNK)
        stat(real, &st)
        #expect(st.st_mode & 0o777 == 0o600)
        #expect(SnapshotStore.isStore(real))
        let log = try store.log()
        for f in log.files {
            stat(dir.file("real.snapshot.data/" + f.name), &st)
            #expect(st.st_mode & 0o777 == 0o600, "\(f.name)")
        }
        #expect(FileManager.default.fileExists(atPath: real + ".lock"))
        #expect(!FileManager.default.fileExists(atPath: dir.file("link.snapshot.data")))
    }
}
