// A child process for tests that need a writer stopped at a point the shipped `colonnade` has no
// switch for (it reads no test-only environment variable; issue 29). Two uses:
//
//     SnapshotCrashWriter TARGET SOURCE_A SOURCE_B
//
// (SnapshotCrashTests) Loads the two source snapshots (memory-mapped, so start-up is instant),
// prints "ready" on stdout, then saves A, B, A, B, … to TARGET with durable saves, printing
// "saved N" after the N-th. The test kills it with SIGKILL at random moments and checks that TARGET
// is always a whole snapshot, A or B.
//
//     SnapshotCrashWriter import-holding-lock SNAPSHOT FILE TICKER PREFIX
//
// (EndToEndWriteSafetyTests) `colonnade import FILE --ticker TICKER --snapshot SNAPSHOT` through
// the same library call (`QuoteStore.import`), except that once the snapshot is locked and loaded
// it creates PREFIX.held and waits until PREFIX.release exists: the real `colonnade` processes the
// test starts meanwhile meet a writer that holds the lock.
//
//     SnapshotCrashWriter delta-append-killed-at STEP SNAPSHOT WHERE TABLE [year|month]
//
// (LakehouseCommandTests, Benchmarks/peers/lakehouse.py) `colonnade export --snapshot SNAPSHOT
// --where WHERE --format delta --mode append -o TABLE [--partition-by …]` through the same
// writer (`DeltaWriter`), which kills itself (SIGKILL) when its commit reaches STEP (`data`,
// `temporary`, `linked`, `synced`): a crash at a known point of the commit.
//
//     SnapshotCrashWriter --store TARGET FIRST
//
// (SnapshotStoreCrashTests) Appends, compacts and collects garbage in the store at TARGET in a
// loop until killed.
import Colonnade
import ColonnadeIngest
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writes `text` to a file descriptor (stdio's globals are not concurrency-safe in Swift 6).
func say(_ text: String, to fd: Int32) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}

/// The store mode's rows (the same in `SnapshotStoreCrashTests`): the base, and append `i`'s one
/// new trading day for the base's 40 tickers, a week after the previous one.
func storeBase() -> QuoteTable { QuoteGenerator(tickers: 40, days: 150, seed: 1).makeTable() }
func storeSegment(_ i: Int) -> QuoteTable {
    let last = QuoteGenerator(tickers: 40, days: 150, seed: 1).lastTradingDay
    return QuoteGenerator(tickers: 40, days: 1, seed: UInt64(1_000 + i), start: Int32(last + 7 * (i + 1))).makeTable()
}

let arguments = CommandLine.arguments
// SnapshotCrashWriter --store TARGET FIRST: appends, compacts and collects garbage in the store at
// TARGET in a loop (append FIRST, FIRST+1, … ; every 4th step a compaction, every 5th a gc
// keeping 2 versions), printing "done N appends" after each step, until killed.
if arguments.count == 4, arguments[1] == "--store", let first = Int(arguments[3]) {
    do {
        let store = SnapshotStore(at: arguments[2])
        say("ready\n", to: 1)
        var next = first, step = 0
        while true {
            step += 1
            if step % 4 == 0 {
                _ = try store.compact()
            } else if step % 5 == 0 {
                _ = try store.collectGarbage(keepLast: 2, keepDays: nil)
            } else {
                try store.append(storeSegment(next), command: "crash writer append \(next)")
                next += 1
            }
            say("done \(next) appends\n", to: 1)
        }
    } catch {
        say("SnapshotCrashWriter: \(error)\n", to: 2)
        exit(1)
    }
}
if arguments.count == 6, arguments[1] == "import-holding-lock" {
    let prefix = arguments[5]
    var options = ImportOptions()
    options.ticker = arguments[4]
    options.whileLocked = {
        _ = FileManager.default.createFile(atPath: prefix + ".held", contents: Data("\(getpid())\n".utf8))
        while !FileManager.default.fileExists(atPath: prefix + ".release") { usleep(5_000) }
    }
    do {
        _ = try QuoteStore(at: arguments[2]).import([arguments[3]], options: options)
        exit(0)
    } catch {
        say("SnapshotCrashWriter: \(error)\n", to: 2)
        exit(1)
    }
}
if arguments.count >= 6, arguments[1] == "delta-append-killed-at" {
    let step = arguments[2]
    do {
        let table = try QuoteTable.load(from: arguments[3])
        var writer = DeltaWriter(table: try table.subtable(table.select(where: arguments[4])))
        if arguments.count > 6 {
            guard let partitioning = ParquetWriter.Partitioning(rawValue: arguments[6]) else {
                say("SnapshotCrashWriter: no partitioning '\(arguments[6])'\n", to: 2)
                exit(2)
            }
            writer.partitioning = partitioning
        }
        writer.step = { if $0 == step { kill(getpid(), SIGKILL) } }
        _ = try writer.write(to: arguments[5], mode: .append)
        say("SnapshotCrashWriter: the commit ended without reaching step '\(step)'\n", to: 2)
        exit(1)
    } catch {
        say("SnapshotCrashWriter: \(error)\n", to: 2)
        exit(1)
    }
}
guard arguments.count == 4 else {
    say("usage: SnapshotCrashWriter TARGET SOURCE_A SOURCE_B\n", to: 2)
    exit(2)
}
do {
    let tables = [try QuoteTable.load(from: arguments[2], verify: false), try QuoteTable.load(from: arguments[3], verify: false)]
    say("ready\n", to: 1)
    var i = 0
    while true {
        try tables[i & 1].save(to: arguments[1])
        i += 1
        say("saved \(i)\n", to: 1)
    }
} catch {
    say("SnapshotCrashWriter: \(error)\n", to: 2)
    exit(1)
}
