// A helper for SnapshotCrashTests: saves snapshots to one path over and over until it is killed.
//
//     SnapshotCrashWriter TARGET SOURCE_A SOURCE_B
//
// Loads the two source snapshots (memory-mapped, so start-up is instant), prints "ready" on stdout,
// then saves A, B, A, B, … to TARGET with durable saves, printing "saved N" after the N-th. The
// test kills it with SIGKILL at random moments and checks that TARGET is always a whole snapshot, A or B.
import Colonnade
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
