import Colonnade
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `colonnade import` when the decoded rows do not fit in memory: a clear error naming the file,
/// exit status 1 (no crash), and the snapshot exactly as it was. The memory is really short: the
/// built executable runs under a data-segment limit (`ulimit -d`, RLIMIT_DATA, which counts
/// `malloc`'s private writable pages but not the program's read-only mappings) of 128 MiB, and
/// the file's rows need far more: 60,000 rows of 400 empty values are 24 MB of CSV but 192 MB of
/// row buffers (8 bytes per value). The limit is generous for everything before the rows (the
/// runtime and the file itself need about 40 MiB), so the allocation that fails is the decoder's.
@Suite struct OutOfMemoryTests {
    static let limitKiB = 131_072

    /// A dataset CSV (`Date,V0,…`) of `rows` days, every value empty (null).
    static func wideEmptyCSV(rows: Int, columns: Int) -> Data {
        var text = "Date," + (0 ..< columns).map { "V\($0)" }.joined(separator: ",") + "\n"
        let empty = String(repeating: ",", count: columns) + "\n"
        text.reserveCapacity(rows * (11 + empty.utf8.count) + text.utf8.count)
        for row in 0 ..< rows {
            text += Day(daysSinceEpoch: Int32(-25_000 + row)).description
            text += empty
        }
        return Data(text.utf8)
    }

    /// A bound on how long a run may take before it counts as hung: a guard against a hang, far
    /// above any run on a loaded machine, never a measure of speed (the work these imports do on
    /// a gigabyte of garbage is counted in bytes by GarbageWorkTests).
    static let hangGuard: Duration = .seconds(900)

    /// Runs `colonnade arguments` under the data-segment limit.
    static func runLimited(_ arguments: [String], in directory: URL) throws -> BuiltExecutable.Result {
        try RunningExecutable(
            ["-c", "ulimit -d \(limitKiB); exec \"$0\" \"$@\"", try BuiltExecutable.url().path] + arguments,
            environment: EndToEndFixture.cleanEnvironment, in: directory, executable: "/bin/sh"
        ).finish(timeout: Self.hangGuard)
    }

    @Test func rowsThatDoNotFitInMemoryAreAnErrorAndTheSnapshotStaysUntouched() throws {
        let directory = try EndToEndFixture.scratchDirectory("oom")
        defer { try? FileManager.default.removeItem(at: directory) }
        let snapshot = directory.appendingPathComponent("quotes.snapshot").path
        let small = directory.appendingPathComponent("WIKI-SMALL.csv")
        try Self.wideEmptyCSV(rows: 2_000, columns: 400).write(to: small)
        // The same shape, small: under the same limit it imports (the limit alone breaks nothing).
        let control = try Self.runLimited(["import", small.path, "--snapshot", snapshot, "--threads", "2"], in: directory)
        #expect(control.status == 0, "\(control.standardError)")
        #expect(control.standardOutput.contains("imported 2,000 rows for 1 ticker"))
        let before = try Data(contentsOf: URL(fileURLWithPath: snapshot))

        let big = directory.appendingPathComponent("WIKI-HUGE.csv")
        try Self.wideEmptyCSV(rows: 60_000, columns: 400).write(to: big)
        let failed = try Self.runLimited(["import", small.path, big.path, "--snapshot", snapshot, "--threads", "2"], in: directory)
        #expect(failed.status == 1, "\(failed.standardError)")
        #expect(!failed.terminatedBySignal)
        let lines = failed.standardError.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(failed.standardError)")
        #expect(lines.first?.hasPrefix("error: WIKI-HUGE.csv: out of memory: cannot allocate ") == true, "\(failed.standardError)")
        #expect(lines.first?.hasSuffix(" decoded rows") == true, "\(failed.standardError)")
        #expect(
            lines.last == "hint: the decoded rows did not fit in memory: import fewer or smaller files at a time, "
                + "or where more memory is free")
        #expect(!failed.standardError.contains("Fatal error"))
        #expect(failed.standardOutput.isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: snapshot)) == before)
        #expect(try QuoteTable.load(from: snapshot).rowCount == 2_000)
    }

    /// A file larger than the memory left (a sparse 1 GiB file of zeros under the 128 MiB limit):
    /// it is mapped, not read, so no memory of its size is needed, and its first "column name"
    /// (a gigabyte without a comma or a line end) is refused rather than copied: an error naming
    /// the file and the byte, for one thread and for several. (A file that cannot be mapped is
    /// read; MappedReadTests covers a buffer that cannot be allocated.)
    @Test(arguments: ["1", "2"])
    func aFileLargerThanTheMemoryLeftIsAnErrorNotACrash(threads: String) throws {
        let directory = try EndToEndFixture.scratchDirectory("oom-file")
        defer { try? FileManager.default.removeItem(at: directory) }
        let big = directory.appendingPathComponent("WIKI-BIG.json")
        #expect(FileManager.default.createFile(atPath: big.path, contents: nil))
        let handle = try FileHandle(forWritingTo: big)
        try handle.truncate(atOffset: 1 << 30)
        try handle.close()
        let snapshot = directory.appendingPathComponent("quotes.snapshot").path
        let failed = try Self.runLimited(["import", big.path, "--snapshot", snapshot, "--threads", threads], in: directory)
        #expect(failed.status == 1, "\(failed.standardError)")
        #expect(!failed.terminatedBySignal)
        #expect(failed.standardError == "error: WIKI-BIG.json:1:1 (byte 0): expected a column name of at most 4096 bytes, found more\n")
        #expect(!FileManager.default.fileExists(atPath: snapshot))
    }

    /// `import -` reading more from a pipe than the memory left (a sparse 1 GiB file, zeros after
    /// a prefix, through `cat`, under the 128 MiB limit). A datatable CSV is decoded as it is read;
    /// when that stops (a bad date in its first row) the rest is read whole for the exact error,
    /// and JSON is read whole: the body does not fit. Zeros alone are a CSV line that never ends:
    /// the streaming reader's chunk cannot grow. Each is an error naming standard input, exit
    /// status 1, not a crash, and no snapshot. (`cat`'s own complaint when the import stops
    /// reading, a broken pipe, goes to /dev/null: only the import's standard error is checked.)
    @Test(arguments: ["", "{", "ticker,date,open\nA,2020-01-0x,1\n"])
    func aStreamLargerThanTheMemoryLeftIsAnErrorNotACrash(prefix: String) throws {
        let directory = try EndToEndFixture.scratchDirectory("oom-stream")
        defer { try? FileManager.default.removeItem(at: directory) }
        let big = directory.appendingPathComponent("body")
        #expect(FileManager.default.createFile(atPath: big.path, contents: Data(prefix.utf8)))
        let handle = try FileHandle(forWritingTo: big)
        try handle.truncate(atOffset: 1 << 30)
        try handle.close()
        let snapshot = directory.appendingPathComponent("quotes.snapshot").path
        let failed = try RunningExecutable(
            [
                "-c", "ulimit -d \(Self.limitKiB); cat \"$1\" 2>/dev/null | \"$0\" import - --snapshot \"$2\"",
                try BuiltExecutable.url().path, big.path, snapshot,
            ],
            environment: EndToEndFixture.cleanEnvironment, in: directory,
            executable: "/bin/sh"
        ).finish(timeout: Self.hangGuard)
        #expect(failed.status == 1, "\(failed.standardError)")
        #expect(!failed.terminatedBySignal)
        #expect(
            failed.standardError.hasPrefix("error: standard input: cannot read: out of memory: cannot allocate "), "\(failed.standardError)"
        )
        #expect(failed.standardError.hasSuffix(prefix.isEmpty ? " to read into\n" : " to hold the input\n"), "\(failed.standardError)")
        #expect(!failed.standardError.contains("Fatal error"))
        #expect(!FileManager.default.fileExists(atPath: snapshot))
    }
}
