import Colonnade
import Foundation

/// `colonnade info`: what a snapshot holds.
struct InfoCommand: Command {
    var spec: CommandSpec { .info }

    /// Tickers listed one by one up to this many; beyond, the first and last few and a summary.
    static let tickerListLimit = 30

    /// One ticker as `info` lists it.
    struct TickerLine {
        var symbol: String
        var rows: Int
        var first: Int32?
        var last: Int32?
        var name: String?
    }

    /// What `info` reports of one snapshot: its structure (read without the payloads), whether the
    /// checksums verify, and each ticker's rows and date range (when it loads).
    struct Report {
        var path: String
        var info: SnapshotInfo
        /// `verified`, or `FAILED: …` with the first problem.
        var verification: String
        var tickers: [TickerLine]
        var firstDay: Int32? { tickers.compactMap(\.first).min() }
        var lastDay: Int32? { tickers.compactMap(\.last).max() }
        var isVerified: Bool { verification == "verified" }

        /// Whether a value column may hold nulls.
        func isNullable(_ column: ColumnDescriptor) -> Bool {
            info.nullableColumns.contains(column.identifier) || info.nullableColumns.contains(column.name)
        }
    }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let source = try SnapshotLocation.forReading(parsed[Options.snapshot], context: context)
        var report = try source.withFile { try Self.report($0) }
        report.path = source.displayName
        switch parsed[Options.format] {
        case .json: try Self.writeJSON(report, to: context.standardOutput)
        case .table: try Self.writeText(report, to: context.standardOutput)
        }
        return report.isVerified ? ExitStatus.success : ExitStatus.failure
    }

    /// Reads the structure, then loads with verification; a snapshot that fails to load is
    /// still described (its structure), with the failure.
    static func report(_ path: String) throws -> Report {
        let info = try QuoteTable.snapshotInfo(at: path)
        var verification = "verified"
        var table: QuoteTable?
        do {
            table = try QuoteTable.load(from: path, verify: true)
        } catch {
            verification = "FAILED: \(error)"
        }
        let tickers = table.map { t in
            t.tickers.map { e in
                TickerLine(symbol: e.symbol, rows: e.rowCount, first: e.rowCount > 0 ? t.dates[e.firstRow] : nil,
                           last: e.rowCount > 0 ? t.dates[e.firstRow + e.rowCount - 1] : nil, name: e.metadata["name"])
            }
        } ?? []
        return Report(path: path, info: info, verification: verification, tickers: tickers)
    }

    /// `--format json`: one pretty-printed object.
    static func writeJSON(_ report: Report, to out: any OutputWriter) throws {
        let info = report.info
        var object: [String: Any] = [
            "path": report.path, "format_version": info.formatVersion, "file_bytes": info.fileSize, "rows": info.rowCount,
            "ticker_count": info.tickerCount, "date_column": info.dateColumnName, "metadata": info.metadata,
            "checksums": report.verification, "block_summaries": info.hasBlockSummaries,
            "columns": [["name": info.dateColumnName, "identifier": "date", "type": "date", "nullable": false] as [String: Any]]
                + info.schema.map { ["name": $0.name, "identifier": $0.identifier, "type": $0.type.description,
                                     "nullable": report.isNullable($0)] },
            "tickers": report.tickers.map { t -> [String: Any] in
                var o: [String: Any] = ["symbol": t.symbol, "rows": t.rows]
                if let f = t.first { o["first_date"] = Day(daysSinceEpoch: f).description }
                if let l = t.last { o["last_date"] = Day(daysSinceEpoch: l).description }
                if let n = t.name { o["name"] = n }
                return o
            },
        ]
        if let firstDay = report.firstDay { object["first_date"] = Day(daysSinceEpoch: firstDay).description }
        if let lastDay = report.lastDay { object["last_date"] = Day(daysSinceEpoch: lastDay).description }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
        // JSONSerialization leaves DEL, C1 and bidirectional controls raw: escape them.
        try out.writeLine(TerminalText.escapedJSON(String(decoding: data, as: UTF8.self)))
    }

    /// `--format table`: a header of facts, the columns, then the tickers.
    static func writeText(_ report: Report, to out: any OutputWriter) throws {
        let info = report.info
        // Everything below but the fixed labels comes from the file (or its name): escaped.
        try out.writeLine("snapshot    \(TerminalText.escaped(report.path))")
        try out.writeLine("format      version \(info.formatVersion), \(Self.bytes(info.fileSize))")
        try out.writeLine("rows        \(info.rowCount.groupedText) in \(info.tickerCount.groupedText) tickers"
            + (report.firstDay.map { " from \(Day(daysSinceEpoch: $0).description)" } ?? "")
            + (report.lastDay.map { " to \(Day(daysSinceEpoch: $0).description)" } ?? ""))
        try out.writeLine("checksums   \(TerminalText.escaped(report.verification))")
        try out.writeLine("zone maps   \(info.hasBlockSummaries ? "yes (min/max per \(zoneMapBlockRows) rows)" : "no")")
        for (k, v) in info.metadata.sorted(by: { $0.key < $1.key }) {
            try out.writeLine("metadata    \(TerminalText.escaped(k)): \(TerminalText.escaped(v))")
        }
        try out.writeLine("")
        var columns = MaterializedRows(
            columns: [ResultColumn(name: "column"), ResultColumn(name: "source name"), ResultColumn(name: "type"), ResultColumn(name: "nulls")],
            rows: [[.text("date"), .text(info.dateColumnName), .text("date (int32 days)"), .text("no")]] + info.schema.map {
                [.text($0.identifier), .text($0.name), .text($0.type.description), .text(report.isNullable($0) ? "yes" : "no")]
            })
        try TableFormatter().write(&columns, to: out)
        try out.writeLine("")
        var list = MaterializedRows(columns: ["ticker", "rows", "first", "last", "name"].map(ResultColumn.init(name:)),
                                    rows: tickerRows(report.tickers))
        try TableFormatter().write(&list, to: out)
    }

    /// One row per ticker, or beyond ``tickerListLimit`` the first 20, a summary line, the last 5.
    static func tickerRows(_ tickers: [TickerLine]) -> [[Cell]] {
        var shown = tickers
        var omitted = 0
        if tickers.count > Self.tickerListLimit {
            shown = Array(tickers.prefix(20)) + Array(tickers.suffix(5))
            omitted = tickers.count - shown.count
        }
        var rows = shown.map { t -> [Cell] in
            [.text(t.symbol), .integer(Int64(t.rows)), t.first.map(Cell.day) ?? .null, t.last.map(Cell.day) ?? .null, .text(t.name ?? "")]
        }
        if omitted > 0 {
            let counts = tickers.map(\.rows)
            rows.insert([.text("…"), .text("\(omitted.groupedText) more tickers, \(counts.min() ?? 0)–\(counts.max() ?? 0) rows each"),
                         .null, .null, .text("")], at: 20)
        }
        return rows
    }

    /// `n` bytes for people: `1.2 MiB (1,234,567 bytes)`.
    static func bytes(_ n: Int) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(n), unit = 0
        while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
        return unit == 0 ? "\(n) bytes" : String(format: "%.1f %@ (%@ bytes)", value, units[unit], n.groupedText)
    }
}
