import Colonnade
import Foundation
import Testing
@testable import ColonnadeCLI

/// Every option of `filter`, alone and with every other, either applies or is refused with a
/// usage error naming both: never silently ignored.
@Suite struct FilterOptionCombinationTests {
    /// One in-process run in `directory` (for `-o`), standard output a terminal or not.
    static func filter(_ arguments: [String], in directory: URL, terminal: Bool = false) throws -> Invocation {
        let output = MemoryOutputWriter(), errors = MemoryOutputWriter()
        output.isTerminal = terminal
        let context = CommandContext(
            standardOutput: output, standardError: errors, environment: [:],
            currentDirectory: directory.path)
        let status = runColonnade(["filter", "--snapshot", try EndToEndFixture.get().snapshot] + arguments, context: context)
        return Invocation(status: status, standardOutput: output.text, standardError: errors.text)
    }

    /// One value for each option (`--snapshot` is always given).
    static let representative: [(option: String, value: String?)] = [
        ("--where", "close > 50"), ("--tickers", "AAPL"), ("--from", "2000-03-01"), ("--to", "2000-06-30"),
        ("--on", "latest"), ("--columns", "date,close"), ("--format", "csv"), ("-o", "out.ndjson"), ("--count", nil),
        ("--agg", "count(*),avg(close)"), ("--by", "ticker"), ("--sort", "-close"), ("--limit", "3"), ("--timing", nil),
        ("--repeat", "2"), ("--threads", "1"), ("--no-verify", nil), ("--no-zonemaps", nil), ("--all", nil), ("--precision", "2"),
        ("--having", "count > 1"),
    ]

    /// The pairs refused, each with why: everything else must run.
    static let refusedPairs: [Set<String>: String] = {
        var refused: [Set<String>: String] = [:]
        for (option, _) in representative where option != "--by" && option != "--repeat" {
            if option != "--count" && option != "--agg" { refused[["--by", option]] = "needs" }
            if option != "--timing" { refused[["--repeat", option]] = "needs" }
        }
        refused[["--by", "--repeat"]] = "needs"
        // --having needs --by (which needs --count or --agg): refused beside any one other option.
        for (option, _) in representative where option != "--having" { refused[["--having", option]] = "needs" }
        refused[["--count", "--agg"]] = "conflicting"
        for summary in ["--count", "--agg"] {
            for option in ["--sort", "--limit", "--columns"] { refused[[option, summary]] = "does not apply" }
        }
        // -o out.ndjson says ndjson; --format csv contradicts it.
        refused[["-o", "--format"]] = "its extension says ndjson but --format is csv"
        // --all and --precision are about tables.
        for option in ["--format", "-o"] {
            refused[["--all", option]] = "does not apply"
            refused[["--precision", option]] = "does not apply"
        }
        refused[["--all", "--limit"]] = "does not apply"
        refused[["--all", "--count"]] = "does not apply"
        refused[["--all", "--agg"]] = "does not apply"
        refused[["--precision", "--count"]] = "does not apply"
        return refused
    }()

    static func arguments(_ entries: [(option: String, value: String?)]) -> [String] {
        entries.flatMap { [$0.option] + ($0.value.map { [$0] } ?? []) }
    }

    @Test func everyPairOfOptionsEitherRunsOrIsRefusedNamingBoth() throws {
        let directory = try EndToEndFixture.scratchDirectory("pairs")
        for (i, first) in Self.representative.enumerated() {
            for second in Self.representative[(i + 1)...] {
                let pair: Set<String> = [first.option, second.option]
                let run = try Self.filter(Self.arguments([first, second]), in: directory)
                if let why = Self.refusedPairs[pair] {
                    #expect(run.status == 2, "\(pair) is refused")
                    let message = run.standardError.split(separator: "\n").first.map(String.init) ?? ""
                    #expect(message.contains(why), "\(pair): \(message)")
                    let named = [first.option, second.option].filter { message.contains($0 == "-o" ? "--output" : $0) }
                    #expect(named.count == 2 || why == "needs" && !named.isEmpty, "\(pair): \(message)")
                    #expect(run.standardOutput.isEmpty)
                } else {
                    #expect(run.status == 0, "\(pair) runs: \(run.standardError)")
                }
            }
        }
    }

    /// What each option does, seen in the output: a row per case, applied or refused.
    enum Outcome {
        case applied((_ output: String, _ errors: String, _ directory: URL) throws -> Bool)
        case refused(naming: [String])
    }

    static func csvRows(_ text: String) -> [String] { text.split(separator: "\n").dropFirst().map(String.init) }

    static var cases: [(arguments: [String], outcome: Outcome)] {
        let fx = try! EndToEndFixture.get()
        let table = fx.table
        let count = { (predicate: String) in try! table.select(where: predicate).count }
        let a = table.tickers[0].symbol
        return [
            (["--where", "close > 50", "--count"], .applied { out, _, _ in out == "\(count("close > 50"))\n" }),
            (["--tickers", a, "--count"], .applied { out, _, _ in out == "\(table.tickers[0].rowCount)\n" }),
            (
                ["--from", "2000-03-01", "--to", "2000-03-31", "--count"],
                .applied { out, _, _ in out == "\(count("date >= 2000-03-01 and date <= 2000-03-31"))\n" }
            ),
            (["--on", "latest", "--format", "csv"], .applied { out, _, _ in csvRows(out).count == table.tickers.count }),
            (["--columns", "date,close", "--format", "csv"], .applied { out, _, _ in out.hasPrefix("date,close\n") }),
            (["--format", "json", "--limit", "2"], .applied { out, _, _ in out.hasPrefix("[\n{\"ticker\":") }),
            (["--limit", "3", "--format", "csv"], .applied { out, _, _ in csvRows(out).count == 3 }),
            (
                ["--sort", "-close", "--limit", "1", "--columns", "close", "--format", "csv"],
                .applied { out, _, _ in
                    let highest = (0 ..< table.rowCount).compactMap { table.column(named: "close")?.doubleValue(at: $0) }.max()!
                    return csvRows(out).count == 1 && Double(csvRows(out)[0]) == highest
                }
            ),
            (["--count", "--by", "ticker", "--format", "csv"], .applied { out, _, _ in csvRows(out).count == table.tickers.count }),
            (
                ["--agg", "count(*),avg(close)", "--format", "csv"],
                .applied { out, _, _ in out.hasPrefix("count(*),avg(close)\n") && csvRows(out).count == 1 }
            ),
            (["--timing", "--count"], .applied { _, err, _ in err.hasPrefix("{\"load_ms\":") }),
            (["--timing", "--repeat", "3", "--count"], .applied { _, err, _ in err.contains("\"repeat\":3") }),
            (["--timing", "--threads", "1", "--count"], .applied { _, err, _ in err.contains("\"threads\":1") }),
            (["--timing", "--no-verify", "--count"], .applied { _, err, _ in err.contains("\"verified\":false") }),
            (["--timing", "--no-zonemaps", "--count"], .applied { _, err, _ in err.contains("\"zonemaps\":false") }),
            (
                ["-o", "rows.ndjson", "--limit", "4"],
                .applied { out, _, dir in
                    let written = try String(contentsOf: dir.appendingPathComponent("rows.ndjson"), encoding: .utf8)
                    return out.isEmpty && written.split(separator: "\n").count == 4
                }
            ),
            (
                ["-o", "ROWS.JSON", "--tickers", a],
                .applied { _, _, dir in
                    (try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("ROWS.JSON"))) as? [Any])?.count
                        == table.tickers[0].rowCount
                }
            ),
            (
                ["-o", "counts.csv", "--count", "--by", "ticker"],
                .applied { _, _, dir in
                    try String(contentsOf: dir.appendingPathComponent("counts.csv"), encoding: .utf8).hasPrefix("ticker,count\n")
                }
            ),
            (
                ["-o", "rows.parquet", "--where", "close > 50"],
                .applied { _, _, dir in
                    try Data(contentsOf: dir.appendingPathComponent("rows.parquet")).prefix(4) == Data("PAR1".utf8)
                }
            ),
            (
                ["-o", "rows.data", "--format", "arrow"],
                .applied { _, _, dir in
                    try Data(contentsOf: dir.appendingPathComponent("rows.data")).prefix(6) == Data("ARROW1".utf8)
                }
            ),
            (
                ["--precision", "2", "--agg", "avg(close)"],
                .applied { out, _, _ in
                    let value = out.split(separator: "\n").last.map(String.init) ?? ""
                    return value.split(separator: ".").last.map { $0.count <= 2 } == true && value.contains(".")
                }
            ),
            (
                ["--agg", "avg(close)"],
                .applied { out, _, _ in
                    let value = out.split(separator: "\n").last.map(String.init) ?? ""
                    return value.split(separator: ".").last.map { $0.count <= 6 } == true
                }
            ),
            // Refused: nothing would apply them.
            (["--sort", "date", "--count"], .refused(naming: ["--sort", "--count"])),
            (["--sort", "date", "--agg", "avg(close)", "--by", "ticker"], .refused(naming: ["--sort", "date"])),
            (["--limit", "2", "--count"], .refused(naming: ["--limit", "--count"])),
            (["--columns", "close", "--agg", "avg(close)"], .refused(naming: ["--columns", "--agg"])),
            (["--repeat", "3", "--count"], .refused(naming: ["--repeat", "--timing"])),
            (["-o", "x.csv", "--format", "json"], .refused(naming: ["--output", "x.csv", "csv", "json"])),
            (["-o", "x.txt"], .refused(naming: ["--output", "x.txt", "--format"])),
            (["-o", "x.csv", "--format", "table"], .refused(naming: ["--format", "table"])),
            (["-o", "x.parquet", "--sort", "close"], .refused(naming: ["--sort", "--format parquet"])),
            (["--format", "arrow", "--columns", "close", "-o", "x.arrow"], .refused(naming: ["--columns", "--format arrow"])),
            (["--format", "parquet"], .refused(naming: ["--output"])),
        ]
    }

    @Test func eachOptionAppliesOrIsRefused() throws {
        let directory = try EndToEndFixture.scratchDirectory("cases")
        for (arguments, outcome) in Self.cases {
            let run = try Self.filter(arguments, in: directory)
            switch outcome {
            case .applied(let check):
                #expect(run.status == 0, "\(arguments): \(run.standardError)")
                #expect(try check(run.standardOutput, run.standardError, directory), "\(arguments): \(run.standardOutput.prefix(300))")
            case .refused(let words):
                #expect(run.status == 2, "\(arguments) is refused")
                let first = run.standardError.split(separator: "\n").first.map(String.init) ?? ""
                for word in words { #expect(first.contains(word), "\(arguments): '\(word)' in \(first)") }
                #expect(run.standardOutput.isEmpty)
            }
        }
        // A refused -o leaves nothing behind.
        for name in ["x.csv", "x.txt", "x.parquet", "x.arrow"] {
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path), "\(name)")
        }
    }

    @Test func aTableOnATerminalIsCappedUnlessAll() throws {
        let directory = try EndToEndFixture.scratchDirectory("cap")
        let total = try EndToEndFixture.get().table.rowCount
        let capped = try Self.filter(["--columns", "ticker,date"], in: directory, terminal: true)
        #expect(capped.status == 0)
        let lines = capped.standardOutput.split(separator: "\n")
        #expect(lines.count == 2 + 40 + 1, "header, rule, 40 rows (no known height: 40), the gap line")
        #expect(lines[22] == "… \((total - 40).groupedText) more rows …")
        #expect(capped.standardError.hasPrefix("40 of \(total.groupedText) matching rows shown in "))
        let all = try Self.filter(["--columns", "ticker,date", "--all"], in: directory, terminal: true)
        #expect(all.standardOutput.split(separator: "\n").count == 2 + total)
        #expect(all.standardError.hasPrefix("\(total.groupedText) of \(total.groupedText) matching rows shown in "))
        // Not a terminal: every row, and no statistics line.
        let piped = try Self.filter(["--columns", "ticker,date"], in: directory)
        #expect(piped.standardOutput.split(separator: "\n").count == 2 + total)
        #expect(piped.standardError.isEmpty)
    }

    @Test(arguments: ["arrows", "arrow", "parquet"])
    func binaryFormatsAreRefusedOnATerminal(format: String) throws {
        let run = try Self.filter(["--format", format], in: try EndToEndFixture.scratchDirectory("tty"), terminal: true)
        #expect(run.status == 2)
        #expect(
            run.standardError.hasPrefix(
                "error: invalid value '\(format)' for '--format' in 'colonnade filter': binary output to a terminal"))
        #expect(run.standardOutput.isEmpty)
    }

    @Test func exportRefusesArrowsOnATerminal() throws {
        let output = MemoryOutputWriter(), errors = MemoryOutputWriter()
        output.isTerminal = true
        let context = CommandContext(standardOutput: output, standardError: errors, environment: [:], currentDirectory: "/tmp")
        let status = runColonnade(["export", "--format", "arrows", "--snapshot", try EndToEndFixture.get().snapshot], context: context)
        #expect(status == 2)
        #expect(errors.text.hasPrefix("error: invalid value 'arrows' for '--format' in 'colonnade export': binary output to a terminal"))
        #expect(output.text.isEmpty)
    }

    @Test func chartWritesOnlySVGOrStandardOutput() throws {
        let directory = try EndToEndFixture.scratchDirectory("chart-o")
        let snapshot = try EndToEndFixture.get().snapshot
        func chart(_ output: String) -> Int32 {
            let context = CommandContext(
                standardOutput: MemoryOutputWriter(), standardError: MemoryOutputWriter(), environment: [:],
                currentDirectory: directory.path)
            return runColonnade(["chart", "AAPL", "--snapshot", snapshot, "-o", output], context: context)
        }
        #expect(chart("x.png") == 2)
        #expect(chart("x") == 2)
        #expect(chart("x.svg") == 0)
        #expect(chart("Y.SVG") == 0)
        #expect(chart("-") == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["Y.SVG", "x.svg"])
    }
}
