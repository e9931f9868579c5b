import Colonnade
import DataLinkFormat
@_exported import ColonnadeTestSupport
import Foundation

extension Fixtures {
    /// The URL of fixture `name`.
    public static func url(_ name: String) -> URL { quandlDirectory.appendingPathComponent(name) }

    /// Every fixture file name (not SOURCES.md), sorted, for parameterized tests. An unreadable
    /// folder yields one name that does not exist, so the test fails instead of running on nothing.
    public static var allNames: [String] {
        (try? quandlNames()) ?? ["(Tests/Fixtures/quandl could not be read)"]
    }
}

/// One row as an obviously-correct reference reads it.
public struct ReferenceRow: Equatable {
    public var ticker: String
    public var day: Int32
    public var values: [String: Double?]  // by source column name
}

/// Readers used only in tests: Foundation's JSON parser and split-and-`Double(String)` CSV.
public enum ReferenceReader {
    public struct Failure: Error { public var why: String }

    /// Rows of a JSON response, via `JSONSerialization` and `NSNumber.doubleValue`.
    public static func json(_ data: Data, ticker: String) throws -> [ReferenceRow] {
        guard let top = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { throw Failure(why: "not an object") }
        if let table = top["datatable"] as? [String: Any] {
            let columns = (table["columns"] as! [[String: Any]]).map { $0["name"] as! String }
            let rows = table["data"] as! [[Any]]
            let tickerIndex = columns.firstIndex(of: "ticker")!, dateIndex = columns.firstIndex(of: "date")!
            return try rows.map { row in
                var values: [String: Double?] = [:]
                for (i, name) in columns.enumerated() where i != tickerIndex && i != dateIndex {
                    values[name] = try number(row[i])
                }
                let symbol = (row[tickerIndex] as! String).replacingOccurrences(of: "_", with: ".")
                return ReferenceRow(ticker: symbol, day: Day(row[dateIndex] as! String)!.daysSinceEpoch, values: values)
            }
        }
        let series = (top["dataset_data"] ?? top["dataset"] ?? top) as! [String: Any]
        let names = series["column_names"] as! [String]
        return try (series["data"] as! [[Any]]).map { row in
            var values: [String: Double?] = [:]
            for i in 1 ..< names.count { values[names[i]] = try number(row[i]) }
            return ReferenceRow(ticker: ticker, day: Day(row[0] as! String)!.daysSinceEpoch, values: values)
        }
    }

    private static func number(_ v: Any) throws -> Double? {
        if v is NSNull { return nil }
        if let n = v as? NSNumber { return n.doubleValue }
        if let s = v as? String, let d = Double(s) { return d }
        throw Failure(why: "not a number: \(v)")
    }

    /// Rows of a CSV response: split on newlines and commas, `Double(String)` per field.
    public static func csv(_ text: String, ticker: String) throws -> [ReferenceRow] {
        let lines = text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            .map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) }
        let header = lines[0].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let tickerIndex = header.firstIndex(of: "ticker")
        let dateIndex = tickerIndex == nil ? 0 : header.firstIndex(of: "date")!
        return try lines.dropFirst().map { line in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == header.count else { throw Failure(why: "width of \(line)") }
            var values: [String: Double?] = [:]
            for (i, name) in header.enumerated() where i != dateIndex && i != tickerIndex {
                if fields[i].isEmpty {
                    values[name] = .some(nil)
                } else {
                    guard let d = Double(fields[i]) else { throw Failure(why: "number \(fields[i])") }
                    values[name] = d
                }
            }
            let symbol = tickerIndex.map { fields[$0].replacingOccurrences(of: "_", with: ".") } ?? ticker
            return ReferenceRow(ticker: symbol, day: Day(fields[dateIndex])!.daysSinceEpoch, values: values)
        }
    }

    /// The first row (as a reference row) where `table` differs from `rows`, or nil; also checks the
    /// row count and that rows ascend by date within each ticker.
    public static func firstDifference(_ table: QuoteTable, _ rows: [ReferenceRow]) -> String? {
        if table.rowCount != rows.count { return "row count \(table.rowCount), reference \(rows.count)" }
        var rowOf: [String: [Int32: Int]] = [:]
        for t in table.tickers {
            var byDay: [Int32: Int] = [:]
            for r in t.rows { byDay[table.dates[r]] = r }
            rowOf[t.symbol] = byDay
        }
        var columns: [String: [Double?]] = [:]
        for (i, d) in table.schema.enumerated() {
            let c = table.columns[i].convertedToFloat64()
            columns[d.name] = (0 ..< table.rowCount).map { c.value(at: $0) }
        }
        for row in rows {
            guard let byDay = rowOf[row.ticker] else { return "no ticker \(row.ticker)" }
            guard let r = byDay[row.day] else { return "\(row.ticker) has no row for \(Day(daysSinceEpoch: row.day).description)" }
            for (name, expected) in row.values {
                guard let column = columns[name] else { return "no column \(name)" }
                let actual = column[r]
                if actual?.bitPattern != expected?.bitPattern {
                    return
                        "\(row.ticker) \(Day(daysSinceEpoch: row.day).description) \(name): \(String(describing: actual)) vs \(String(describing: expected))"
                }
            }
        }
        for t in table.tickers where t.rowCount > 1 {
            for r in t.rows.dropFirst() where table.dates[r] <= table.dates[r - 1] { return "\(t.symbol) not ascending at row \(r)" }
        }
        return nil
    }
}

/// Decoding helpers for tests.
public enum Decode {
    public static func bytes(_ bytes: [UInt8], ticker: String? = nil, source: String = "input") throws(ResponseError) -> DecodedResponse {
        try QuoteDecoder.decode(bytes, ticker: ticker, source: source)
    }

    public static func text(_ text: String, ticker: String? = "T", source: String = "input") throws(ResponseError) -> DecodedResponse {
        try QuoteDecoder.decode(Array(text.utf8), ticker: ticker, source: source)
    }

    /// The error decoding `text` throws, or nil when it decodes.
    public static func failure(_ text: String, ticker: String? = "T", source: String = "input") -> ResponseError? {
        do {
            _ = try Self.text(text, ticker: ticker, source: source)
            return nil
        } catch { return error }
    }

    /// The byte-level error decoding `text` throws (`ResponseError.decoding`), or nil when it
    /// decodes or fails for another reason.
    public static func error(_ text: String, ticker: String? = "T", source: String = "input") -> DecodeError? {
        guard case .decoding(let error)? = failure(text, ticker: ticker, source: source) else { return nil }
        return error
    }

    /// A copy of `table` with every column converted to Float64, ticker metadata and table
    /// metadata cleared (what survives a dataset_data or CSV round trip).
    public static func comparable(_ table: QuoteTable, keepTickerMetadata: Bool = false) -> QuoteTable {
        let schema = table.schema.map { ColumnDescriptor(name: $0.name, type: .float64) }
        let columns = table.columns.map { AnyColumn.float64($0.convertedToFloat64()) }
        let tickers = table.tickers.map {
            TickerEntry(
                symbol: $0.symbol, metadata: keepTickerMetadata ? $0.metadata : [:],
                firstRow: $0.firstRow, rowCount: $0.rowCount)
        }
        var out = try! QuoteTable(
            schema: schema, columns: columns, dates: table.dates, tickers: tickers,
            dateColumnName: table.dateColumnName)
        out.shrinkToFit()
        out.computeSummaries()
        return out
    }
}
