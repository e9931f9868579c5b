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
        /// Split and dividend days (nil when the table has no ex_dividend and split_ratio columns).
        var splits: Int?
        var dividends: Int?
    }

    /// What `info` reports of one snapshot: its structure (read without the payloads), whether the
    /// checksums verify, and each ticker's rows and date range (when it loads).
    struct Report {
        var path: String
        var info: SnapshotInfo
        /// `verified`, or `FAILED: …` with the first problem.
        var verification: String
        var tickers: [TickerLine]
        /// `--ticker`: its symbol and events (docs/ADJUSTMENTS.md).
        var events: (ticker: String, list: [CorporateEvent])?
        /// A store's version log (nil for a single-file snapshot): versions and history's disk cost.
        var log: SnapshotLog?
        var firstDay: Int32? { tickers.compactMap(\.first).min() }
        var lastDay: Int32? { tickers.compactMap(\.last).max() }
        var isVerified: Bool { verification == "verified" }

        /// Whether a value column may hold nulls.
        func isNullable(_ column: ColumnDescriptor) -> Bool {
            info.nullableColumns.contains(column.identifier) || info.nullableColumns.contains(column.name)
        }
    }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let source = try SnapshotLocation.forReading(parsed, Options.snapshot, context: context)
        let ticker = parsed[Options.ticker]
        var report = try source.withFile { try Self.report($0, eventsOf: ticker) }
        report.path = source.displayName
        if let path = source.path, SnapshotStore.isStore(path) { report.log = try? SnapshotStore(at: path).log() }
        switch parsed[Options.format] {
        case .json: try Self.writeJSON(report, to: context.standardOutput)
        case .table: try Self.writeText(report, to: context.standardOutput)
        }
        return report.isVerified ? ExitStatus.success : ExitStatus.failure
    }

    /// Reads the structure, then loads with verification; a snapshot that fails to load is
    /// still described (its structure), with the failure.
    static func report(_ path: String, eventsOf ticker: String? = nil) throws -> Report {
        let info = try QuoteTable.snapshotInfo(at: path)
        var verification = "verified"
        var table: QuoteTable?
        do {
            table = try QuoteTable.load(from: path, verify: true)
        } catch {
            verification = "FAILED: \(error)"
        }
        let tickers: [TickerLine] =
            table.map { t in
                t.tickers.enumerated().map { number, e -> TickerLine in
                    let events = try? t.corporateEvents(ofTicker: number)
                    return TickerLine(
                        symbol: e.symbol, rows: e.rowCount, first: e.rowCount > 0 ? t.dates[e.firstRow] : nil,
                        last: e.rowCount > 0 ? t.dates[e.firstRow + e.rowCount - 1] : nil, name: e.metadata["name"],
                        splits: events?.filter { $0.split != nil }.count, dividends: events?.filter { $0.dividend != nil }.count)
                }
            } ?? []
        var report = Report(path: path, info: info, verification: verification, tickers: tickers)
        if let ticker, let table {
            guard let number = table.tickerNumber(of: ticker) else {
                throw CommandFailure("no ticker \(ticker) in \(path)", hint: "'colonnade info' lists the tickers")
            }
            report.events = (ticker, try table.corporateEvents(ofTicker: Int(number)))
        }
        return report
    }

    /// `--format json`: one pretty-printed object.
    static func writeJSON(_ report: Report, to out: any OutputWriter) throws {
        let info = report.info
        var object: [String: Any] = [
            "path": report.path, "format_version": info.formatVersion, "file_bytes": info.fileSize, "rows": info.rowCount,
            "ticker_count": info.tickerCount, "date_column": info.dateColumnName, "metadata": info.metadata,
            "checksums": report.verification, "block_summaries": info.hasBlockSummaries,
            "columns": [["name": info.dateColumnName, "identifier": "date", "type": "date", "nullable": false] as [String: Any]]
                + info.schema.map {
                    [
                        "name": $0.name, "identifier": $0.identifier, "type": $0.type.description,
                        "nullable": report.isNullable($0),
                    ]
                },
            "tickers": report.tickers.map { t -> [String: Any] in
                var o: [String: Any] = ["symbol": t.symbol, "rows": t.rows]
                if let f = t.first { o["first_date"] = Day(daysSinceEpoch: f).description }
                if let l = t.last { o["last_date"] = Day(daysSinceEpoch: l).description }
                if let n = t.name { o["name"] = n }
                if let n = t.splits { o["splits"] = n }
                if let n = t.dividends { o["dividends"] = n }
                return o
            },
        ]
        if let events = report.events {
            object["events"] =
                [
                    "ticker": events.ticker,
                    "list": events.list.map { e -> [String: Any] in
                        var o: [String: Any] = ["date": Day(daysSinceEpoch: e.day).description]
                        if let s = e.split { o["split_ratio"] = s }
                        if let d = e.dividend { o["ex_dividend"] = d }
                        if e.ignored { o["ignored"] = true }
                        return o
                    },
                ] as [String: Any]
        }
        if let log = report.log {
            object["versions"] = [
                "count": log.versions.count, "current": log.current.number, "current_files": log.current.files.count,
                "current_bytes": log.bytes(of: log.current), "history_bytes": log.totalBytes - log.bytes(of: log.current),
            ]
        }
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
        try out.writeLine(
            "rows        \(info.rowCount.groupedText) in \(info.tickerCount.groupedText) tickers"
                + (report.firstDay.map { " from \(Day(daysSinceEpoch: $0).description)" } ?? "")
                + (report.lastDay.map { " to \(Day(daysSinceEpoch: $0).description)" } ?? ""))
        if let log = report.log {
            let current = log.bytes(of: log.current)
            try out.writeLine(
                "versions    \(log.versions.count) (current: \(log.current.number), \(log.current.files.count) file\(log.current.files.count == 1 ? "" : "s")); "
                    + "history \(Self.bytes(log.totalBytes - current)) in \(log.files.count - log.current.files.count) more files ('colonnade gc' removes it)"
            )
        }
        try out.writeLine("checksums   \(TerminalText.escaped(report.verification))")
        try out.writeLine("zone maps   \(info.hasBlockSummaries ? "yes (min/max per \(zoneMapBlockRows) rows)" : "no")")
        for (k, v) in info.metadata.sorted(by: { $0.key < $1.key }) {
            try out.writeLine("metadata    \(TerminalText.escaped(k)): \(TerminalText.escaped(v))")
        }
        try out.writeLine("")
        var columns = MaterializedRows(
            columns: [
                ResultColumn(name: "column"), ResultColumn(name: "source name"), ResultColumn(name: "type"), ResultColumn(name: "nulls"),
            ],
            rows: [[.text("date"), .text(info.dateColumnName), .text("date (int32 days)"), .text("no")]]
                + info.schema.map {
                    [.text($0.identifier), .text($0.name), .text($0.type.description), .text(report.isNullable($0) ? "yes" : "no")]
                })
        try TableFormatter().write(&columns, to: out)
        try out.writeLine("")
        let withEvents = report.tickers.contains { $0.splits != nil }
        var list = MaterializedRows(
            columns: (withEvents
                ? ["ticker", "rows", "first", "last", "splits", "dividends", "name"]
                : ["ticker", "rows", "first", "last", "name"]).map(ResultColumn.init(name:)),
            rows: tickerRows(report.tickers, withEvents: withEvents))
        try TableFormatter().write(&list, to: out)
        if let events = report.events {
            try out.writeLine("")
            try out.writeLine(
                "events of \(TerminalText.escaped(events.ticker)): \(events.list.count) (splits and dividends; docs/ADJUSTMENTS.md)")
            var rows = MaterializedRows(
                columns: ["date", "split_ratio", "ex_dividend", "note"].map(ResultColumn.init(name:)),
                rows: events.list.map { e in
                    [
                        .day(e.day), e.split.map(Cell.number) ?? .null, e.dividend.map(Cell.number) ?? .null,
                        .text(e.ignored ? "no close: ignored by the rule" : ""),
                    ]
                })
            try TableFormatter().write(&rows, to: out)
        }
    }

    /// One row per ticker, or beyond ``tickerListLimit`` the first 20, a summary line, the last 5.
    static func tickerRows(_ tickers: [TickerLine], withEvents: Bool = false) -> [[Cell]] {
        var shown = tickers
        var omitted = 0
        if tickers.count > Self.tickerListLimit {
            shown = Array(tickers.prefix(20)) + Array(tickers.suffix(5))
            omitted = tickers.count - shown.count
        }
        var rows = shown.map { t -> [Cell] in
            var cells: [Cell] = [.text(t.symbol), .integer(Int64(t.rows)), t.first.map(Cell.day) ?? .null, t.last.map(Cell.day) ?? .null]
            if withEvents {
                let splits: Cell = t.splits.map { .integer(Int64($0)) } ?? .null
                let dividends: Cell = t.dividends.map { .integer(Int64($0)) } ?? .null
                cells += [splits, dividends]
            }
            cells.append(.text(t.name ?? ""))
            return cells
        }
        if omitted > 0 {
            let counts = tickers.map(\.rows)
            var summary: [Cell] = [
                .text("…"), .text("\(omitted.groupedText) more tickers, \(counts.min() ?? 0)–\(counts.max() ?? 0) rows each"),
                .null, .null,
            ]
            if withEvents { summary += [.null, .null] }
            summary.append(.text(""))
            rows.insert(summary, at: 20)
        }
        return rows
    }

    /// `n` bytes for people: `1.2 MiB (1,234,567 bytes)`.
    static func bytes(_ n: Int) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(n), unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(n) bytes" : String(format: "%.1f %@ (%@ bytes)", value, units[unit], n.groupedText)
    }
}
