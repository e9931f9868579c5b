import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A saver killed with SIGKILL at any instant leaves the old snapshot or the new one, never a torn
/// file, and its stray temporary does not trip the next save.
@Suite struct SnapshotCrashTests {
    /// `SnapshotCrashWriter`, built beside the test bundle by `swift build` / `swift test`.
    static var crashWriter: String? {
        var candidates = [String]()
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("SnapshotCrashWriter").path)
        }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("SnapshotCrashWriter").path)
        candidates.append(SnapshotGoldenTests.packageRoot + "/.build/debug/SnapshotCrashWriter")
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test func killedSaverAlwaysLeavesTheOldOrTheNewSnapshot() throws {
        guard let writer = Self.crashWriter else {
            Issue.record("SnapshotCrashWriter not found next to the test binary; run `swift build --build-tests` first")
            return
        }
        let dir = ScratchDirectory()
        defer { dir.remove() }
        // Two different large tables (about 21 MB each: 200 × 1,000 rows; 200 × 5,000 takes too long to generate and hash in debug builds), saved once here; the child maps them.
        let a = dir.file("a.snapshot"), b = dir.file("b.snapshot"), target = dir.file("target.snapshot")
        try QuoteGenerator(tickers: 200, days: 1_000, seed: 1).makeTable().save(to: a, durable: false)
        try QuoteGenerator(tickers: 200, days: 1_000, seed: 2).makeTable().save(to: b, durable: false)
        let aBytes = readBytes(a), bBytes = readBytes(b)
        #expect(!sameBytes(aBytes, bBytes))
        try FileManager.default.copyItem(atPath: a, toPath: target)

        var rng = SplitMix64(seed: UInt64(getpid()))
        var sawA = false, sawB = false, reportedSavedB = false
        // 15 kills at random moments; on a machine so loaded that none of them came after a whole
        // save, one more that waits for the child to report a finished save of B first.
        var kill = 0
        while kill < 15 || (!sawB && kill == 15) {
            defer { kill += 1 }
            let waitForSavedB = kill == 15
            let child = Process()
            child.executableURL = URL(fileURLWithPath: writer)
            child.arguments = [target, a, b]
            let out = Pipe()
            child.standardOutput = out
            try child.run()
            // Wait until it has loaded its tables, then let it save for a random while.
            var said = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
            #expect(said.hasPrefix("ready"), "kill \(kill): child did not start")
            if waitForSavedB {
                while !said.contains("saved B") {
                    let more = out.fileHandleForReading.availableData
                    if more.isEmpty { break }  // the child ended
                    said += String(decoding: more, as: UTF8.self)
                }
                reportedSavedB = said.contains("saved B")
            } else {
                usleep(UInt32(rng.next() % 700_000))
            }
            Glibc.kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            #expect(child.terminationReason == .uncaughtSignal, "kill \(kill): the child ended by itself")

            let now = readBytes(target)
            let isA = sameBytes(now, aBytes), isB = sameBytes(now, bBytes)
            #expect(isA || isB, "kill \(kill): target is neither snapshot (\(now.count) bytes)")
            sawA = sawA || isA
            sawB = sawB || isB
            #expect(loadError(target, verify: false) == nil, "kill \(kill)")
        }
        #expect(sawB || reportedSavedB, "the child never finished a save of B before being killed")
        #expect(QuoteTable.verifySnapshot(at: target).isValid)
        // The next save (in this process) succeeds and removes the killed children's temporaries.
        try QuoteTable.load(from: b, verify: false).save(to: target)
        #expect(sameBytes(readBytes(target), bBytes))
        let strays = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".target.snapshot.tmp-") }
        #expect(strays == [])
    }
}
