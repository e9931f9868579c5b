import Colonnade
@testable import ColonnadeCLI
import ColonnadeTestSupport
import Foundation
import Testing

/// `colonnade import` of CSV into a snapshot that does not exist yet (`QuoteImporter.importDirect`:
/// CSV files are counted ahead too) against the ordinary path (`TestTuning.ordinaryImport`):
/// the same bytes and output, the same error with nothing left. (A CSV of 16 MiB or more is
/// decoded in pieces; DirectCSVImportTests covers that with small pieces.)
@Suite struct ImportDirectCSVCommandTests {
    typealias D = ImportDirectCommandTests

    /// A datatable CSV whose rows are grouped by ticker: CR LF and LF, blank lines, quoted fields
    /// with line ends inside, a trailing line end or not; with `nulls`, empty fields.
    static func csv(seed: UInt64, nulls: Bool = false, trailingLineEnd: Bool) -> String {
        var rng = SplitMix64(seed: seed)
        func below(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        var lines: [String] = []
        for t in 0 ..< 15 {
            let symbol = ["T\(t)", "\"T\(t)\nX\"", "\"T\(t)\r\nX,Y\""][t % 3]
            var day = below(30)
            for _ in 0 ..< below(30) {
                let date = Day(daysSinceEpoch: Int32(15_000 + day)).description
                var fields: [String] = [symbol, below(4) == 0 ? "\"" + date + "\"" : date]
                for _ in 0 ..< 3 {
                    let value = nulls && below(5) == 0 ? "" : "\(below(100_000)).\(below(1_000))"
                    fields.append(below(5) == 0 && !value.isEmpty ? "\"" + value + "\"" : value)
                }
                lines.append(fields.joined(separator: ","))
                day += 1 + below(3)
            }
        }
        var text = "ticker,date,open,high,close\r\n"
        for (i, line) in lines.enumerated() {
            if below(8) == 0 { text += "\n" }
            text += line
            if i + 1 < lines.count || trailingLineEnd { text += below(2) == 0 ? "\r\n" : "\n" }
        }
        return text
    }

    /// Imports `files` into a new snapshot both ways for 1–3 threads: the same status, output,
    /// error and bytes, and nothing else left in `out`.
    static func compareBothWays(_ files: [String], in scratch: Scratch, succeeds: Bool = true) async throws {
        try? FileManager.default.createDirectory(atPath: scratch.file("out"), withIntermediateDirectories: true)
        for threads in 1 ... 3 {
            let direct = scratch.file("out/direct.snapshot"), ordinary = scratch.file("out/ordinary.snapshot")
            let a = await runOffPool(["import"] + files + ["--threads", "\(threads)", "--snapshot", direct], in: scratch)
            let b = await runOffPool(
                ["import"] + files + ["--threads", "\(threads)", "--snapshot", ordinary], in: scratch,
                tuning: D.ordinary)
            #expect(a.status == b.status && a.status == (succeeds ? 0 : 1), "\(a.standardError) \(b.standardError)")
            #expect(a.standardOutput.replacingOccurrences(of: direct, with: ordinary) == b.standardOutput)
            #expect(a.standardError.replacingOccurrences(of: direct, with: ordinary) == b.standardError)
            if succeeds && a.standardError.contains("has no rows") {
                // Nothing to import: no snapshot is written either way (and no ticker added).
                #expect(scratch.bytes("out/direct.snapshot") == nil && scratch.bytes("out/ordinary.snapshot") == nil)
            } else if succeeds {
                let bytes = try #require(scratch.bytes("out/direct.snapshot"))
                #expect(bytes == scratch.bytes("out/ordinary.snapshot"), "threads \(threads)")
                #expect(
                    try D.outNames(scratch) == ["direct.snapshot", "direct.snapshot.lock", "ordinary.snapshot", "ordinary.snapshot.lock"],
                    "threads \(threads): no temporary left: \((try? D.outNames(scratch)) ?? [])")
                try FileManager.default.removeItem(atPath: direct)
                try FileManager.default.removeItem(atPath: ordinary)
            } else {
                // (The direct path locks before decoding; the ordinary path after, so it leaves no lock file.)
                #expect(try D.outNames(scratch).allSatisfy { $0.hasSuffix(".lock") }, "threads \(threads): no snapshot, no temporary")
            }
        }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func writesTheSameBytesAsTheOrdinaryPath(seed: UInt64) async throws {
        let scratch = try Scratch()
        try scratch.write(Self.csv(seed: seed, trailingLineEnd: seed != 2), to: "quotes.csv")
        try await Self.compareBothWays([scratch.file("quotes.csv")], in: scratch)
        // With nulls (saved the ordinary way from the draft), and the generator's CSV.
        try scratch.write(Self.csv(seed: seed, nulls: true, trailingLineEnd: true), to: "nulls.csv")
        try await Self.compareBothWays([scratch.file("nulls.csv")], in: scratch)
        let made = await runOffPool(
            ["generate", "--tickers", "20", "--days", "50", "--seed", "\(seed)", "--csv", scratch.file("gen.csv")], in: scratch)
        #expect(made.status == 0, "\(made.standardError)")
        try await Self.compareBothWays([scratch.file("gen.csv")], in: scratch)
    }

    @Test func noRowsUngroupedRowsAndPerTickerFilesGiveTheSameBytes() async throws {
        let scratch = try Scratch()
        try scratch.write("ticker,date,open\r\n\r\n", to: "none.csv")
        try scratch.write("ticker,date,open\nB,2020-01-02,1\nA,2020-01-02,2\nB,2020-01-03,3\n", to: "mixed.csv")
        try scratch.write("Date,Open,Close\n2020-01-03,1,2\r\n\n2020-01-02,\"3\",4", to: "WIKI-AA.csv")
        try scratch.write("Date,Open,Close\n2020-01-03,5,6\n", to: "WIKI-BB.csv")
        for files in [["none.csv"], ["mixed.csv"], ["WIKI-AA.csv", "WIKI-BB.csv"], ["none.csv", "WIKI-AA.csv"]] {
            try await Self.compareBothWays(files.map(scratch.file), in: scratch)
        }
        // A date column named "date" is "Date" after the ordinary path's upsert into an empty
        // table; the direct path names it so too (JSON as well as CSV).
        try await Self.compareBothWays([Fixtures.quandlPath("WIKI-PRICES.datatable.json")], in: scratch)
        // A file with no rows adds nothing: a note, exit 0, no snapshot written.
        let none = await runOffPool(["import", scratch.file("none.csv"), "--snapshot", scratch.file("out/none.snapshot")], in: scratch)
        #expect(none.status == 0 && none.standardError.contains("note: \(scratch.file("none.csv")) has no rows"), "\(none)")
        #expect(scratch.bytes("out/none.snapshot") == nil)
    }

    @Test func aFailingCSVGivesTheOrdinaryErrorAndLeavesNothing() async throws {
        let scratch = try Scratch()
        // Line 11 (after quoted tickers holding a line end, and a blank line): a bad 'high'.
        var text = "ticker,date,open,high,close\n"
        for day in 2 ... 5 { text += "\"A\nB\",2020-01-0\(day),1,2,3\r\n" }
        text += "\nC,2020-01-02,1.5,4x,2\nC,2020-01-03,1,2,3\n"
        try scratch.write(text, to: "bad.csv")
        let column = "C,2020-01-02,1.5,".utf8.count + 1
        try await Self.compareBothWays([scratch.file("bad.csv")], in: scratch, succeeds: false)
        let run = await runOffPool(["import", scratch.file("bad.csv"), "--snapshot", scratch.file("out/q.snapshot")], in: scratch)
        #expect(run.status == 1 && run.standardError.contains("bad.csv:11:\(column) "), "\(run.standardError)")
    }
}
