import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A writer of a store killed with SIGKILL at any instant of an append, a compaction or a gc
/// leaves the last committed version readable, `verify` clean, and holding exactly the rows of
/// the appends committed: never a partial segment.
@Suite struct SnapshotStoreCrashTests {
    /// As `SnapshotCrashWriter`'s store mode makes them.
    static func base() -> QuoteTable { QuoteGenerator(tickers: 40, days: 150, seed: 1).makeTable() }
    static func segment(_ i: Int) -> QuoteTable {
        let last = QuoteGenerator(tickers: 40, days: 150, seed: 1).lastTradingDay
        return QuoteGenerator(tickers: 40, days: 1, seed: UInt64(1_000 + i), start: Int32(last + 7 * (i + 1))).makeTable()
    }

    @Test func killedStoreWriterLeavesTheLastCommittedVersion() throws {
        guard let writer = SnapshotCrashTests.crashWriter else {
            Issue.record("SnapshotCrashWriter not found next to the test binary; run `swift build --build-tests` first")
            return
        }
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let target = dir.file("store.snapshot")
        let base = Self.base()
        try base.save(to: target)
        let segments = (0 ..< 200).map(Self.segment)
        var appended = 0
        var rng = SplitMix64(seed: UInt64(getpid()))
        for kill in 0 ..< 12 {
            let child = Process()
            child.executableURL = URL(fileURLWithPath: writer)
            child.arguments = ["--store", target, String(appended)]
            let out = Pipe()
            child.standardOutput = out
            try child.run()
            // Counted, not timed: wait for a few steps, then kill after a random while.
            let wanted = 1 + kill % 3
            var said = "", steps = 0
            while steps < wanted {
                let chunk = out.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                said += String(decoding: chunk, as: UTF8.self)
                steps = said.components(separatedBy: "done ").count - 1
            }
            usleep(UInt32(rng.next() % 200_000))
            Glibc.kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            said += String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(child.terminationReason == .uncaughtSignal, "kill \(kill): the child ended by itself: \(said)")
            // The appends the child reported are committed; at most one more may be.
            let reported =
                said.components(separatedBy: "\n").compactMap { line -> Int? in
                    guard line.hasPrefix("done ") else { return nil }
                    return Int(line.dropFirst(5).prefix { $0.isNumber })
                }.max() ?? appended
            let table = try QuoteTable.load(from: target, verify: true)
            let days = (table.rowCount - base.rowCount) / 40
            #expect(days >= reported && days <= reported + 1, "kill \(kill): \(days) days appended, \(reported) reported")
            var expected = base
            expected.upsert(contentsOf: Array(segments.prefix(days)))
            #expect(table == expected, "kill \(kill)")
            #expect(QuoteTable.verifySnapshot(at: target).isValid, "kill \(kill)")
            appended = days
        }
        #expect(appended > 0, "the child never committed an append")
        // The next writer (here) removes what killed writers left; gc leaves only named files.
        let store = SnapshotStore(at: target)
        try store.collectGarbage(keepLast: 1, keepDays: nil)
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: dir.file("store.snapshot.data")))
        #expect(names == Set(try store.log().files.map(\.name)))
        #expect(
            try store.table()
                == {
                    var e = base
                    e.upsert(contentsOf: Array(segments.prefix(appended)))
                    return e
                }())
    }
}
