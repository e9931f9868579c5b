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
        candidates.append(
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("SnapshotCrashWriter").path)
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
        var sawA = false, sawB = false
        for kill in 0 ..< 15 {
            let child = Process()
            child.executableURL = URL(fileURLWithPath: writer)
            child.arguments = [target, a, b]
            let out = Pipe()
            child.standardOutput = out
            try child.run()
            // Wait until it has loaded its tables and finished `kill % 4` saves (counted, not
            // timed: a loaded machine may take seconds per save), then let it save for a random
            // while — none after the second save (B), so that at least one kill finds B (the second save) whole.
            let wanted = kill % 4
            var said = ""
            while !said.contains(wanted == 0 ? "ready\n" : "saved \(wanted)\n") {
                let chunk = out.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                said += String(decoding: chunk, as: UTF8.self)
            }
            #expect(said.hasPrefix("ready"), "kill \(kill): child did not start: \(said)")
            if wanted != 2 { usleep(UInt32(rng.next() % 300_000)) }
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
        #expect(sawB, "the child never finished a save before being killed")
        #expect(QuoteTable.verifySnapshot(at: target).isValid)
        // The next save (in this process) succeeds and removes the killed children's temporaries.
        try QuoteTable.load(from: b, verify: false).save(to: target)
        #expect(sameBytes(readBytes(target), bBytes))
        let strays = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".target.snapshot.tmp-") }
        #expect(strays == [])
    }
}
