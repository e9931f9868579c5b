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

let arguments = CommandLine.arguments
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
