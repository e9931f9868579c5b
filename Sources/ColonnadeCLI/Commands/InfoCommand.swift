import Colonnade
import Foundation

/// `colonnade info`: what a snapshot holds.
struct InfoCommand: Command {
    var spec: CommandSpec { .info }

    /// Tickers listed one by one up to this many; beyond, the first and last few and a summary.
    static let tickerListLimit = 30

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let (path, _) = try SnapshotLocation.forReading(parsed[Options.snapshot], context: context)
        let info = try QuoteTable.snapshotInfo(at: path)
        var verification = "verified"
        var table: QuoteTable?
        do {
            table = try QuoteTable.load(from: path, verify: true)
        } catch {
            verification = "FAILED: \(error)"
        }
        let tickers: [(symbol: String, rows: Int, first: Int32?, last: Int32?, name: String?)] = table.map { t in
            t.tickers.map { e in
                (e.symbol, e.rowCount, e.rowCount > 0 ? t.dates[e.firstRow] : nil,
                 e.rowCount > 0 ? t.dates[e.firstRow + e.rowCount - 1] : nil, e.metadata["name"])
            }
        } ?? []
        let firstDay = tickers.compactMap(\.first).min(), lastDay = tickers.compactMap(\.last).max()

        if parsed[Options.format] == .json {
            var object: [String: Any] = [
                "path": path, "format_version": info.formatVersion, "file_bytes": info.fileSize, "rows": info.rowCount,
                "ticker_count": info.tickerCount, "date_column": info.dateColumnName, "metadata": info.metadata,
                "checksums": verification, "block_summaries": info.hasBlockSummaries,
                "columns": [["name": info.dateColumnName, "identifier": "date", "type": "date", "nullable": false] as [String: Any]]
                    + info.schema.map { ["name": $0.name, "identifier": $0.identifier, "type": $0.type.description,
                                         "nullable": info.nullableColumns.contains($0.identifier) || info.nullableColumns.contains($0.name)] },
                "tickers": tickers.map { t -> [String: Any] in
                    var o: [String: Any] = ["symbol": t.symbol, "rows": t.rows]
                    if let f = t.first { o["first_date"] = Day(daysSinceEpoch: f).description }
                    if let l = t.last { o["last_date"] = Day(daysSinceEpoch: l).description }
                    if let n = t.name { o["name"] = n }
                    return o
                },
            ]
            if let firstDay { object["first_date"] = Day(daysSinceEpoch: firstDay).description }
            if let lastDay { object["last_date"] = Day(daysSinceEpoch: lastDay).description }
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
            // JSONSerialization leaves DEL, C1 and bidirectional controls raw: escape them.
            try context.standardOutput.writeLine(TerminalText.escapedJSON(String(decoding: data, as: UTF8.self)))
        } else {
            let out = context.standardOutput
            // Everything below but the fixed labels comes from the file (or its name): escaped.
            try out.writeLine("snapshot    \(TerminalText.escaped(path))")
            try out.writeLine("format      version \(info.formatVersion), \(Self.bytes(info.fileSize))")
            try out.writeLine("rows        \(info.rowCount.groupedText) in \(info.tickerCount.groupedText) tickers"
                + (firstDay.map { " from \(Day(daysSinceEpoch: $0).description)" } ?? "") + (lastDay.map { " to \(Day(daysSinceEpoch: $0).description)" } ?? ""))
            try out.writeLine("checksums   \(TerminalText.escaped(verification))")
            try out.writeLine("zone maps   \(info.hasBlockSummaries ? "yes (min/max per \(zoneMapBlockRows) rows)" : "no")")
            for (k, v) in info.metadata.sorted(by: { $0.key < $1.key }) {
                try out.writeLine("metadata    \(TerminalText.escaped(k)): \(TerminalText.escaped(v))")
            }
            try out.writeLine("")
            var columns = MaterializedRows(
                columns: [ResultColumn(name: "column"), ResultColumn(name: "source name"), ResultColumn(name: "type"), ResultColumn(name: "nulls")],
                rows: [[.text("date"), .text(info.dateColumnName), .text("date (int32 days)"), .text("no")]] + info.schema.map {
                    [.text($0.identifier), .text($0.name), .text($0.type.description),
                     .text(info.nullableColumns.contains($0.identifier) || info.nullableColumns.contains($0.name) ? "yes" : "no")]
                })
            try TableFormatter().write(&columns, to: out)
            try out.writeLine("")
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
            var list = MaterializedRows(columns: ["ticker", "rows", "first", "last", "name"].map(ResultColumn.init(name:)), rows: rows)
            try TableFormatter().write(&list, to: out)
        }
        return verification == "verified" ? ExitStatus.success : ExitStatus.failure
    }

    static func bytes(_ n: Int) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(n), unit = 0
        while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
        return unit == 0 ? "\(n) bytes" : String(format: "%.1f %@ (%@ bytes)", value, units[unit], n.groupedText)
    }
}
