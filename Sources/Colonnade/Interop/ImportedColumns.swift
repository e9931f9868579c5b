/// The columns a reader decoded from one Arrow or Parquet input, before they become a table:
/// tickers as indices into the file's own symbol list, dates, and the value columns by name.
/// A column an Arrow or Parquet file holds that is not a quote (a string other than the ticker,
/// a boolean, a nested column, …): left out of the table, with a note (`import --strict`
/// refuses the file instead).
public struct InteropSkippedColumn: Sendable, Hashable {
    /// The file, as the caller named it.
    public var file: String
    /// The column's name (a nested column's as `group.leaf`).
    public var column: String
    /// What it is: "type byteArray (converted type #0), which is not a ticker, a date or a number".
    public var type: String
}

struct ImportedColumns {
    /// The input's name, for messages.
    var file: String
    /// The symbols the rows refer to.
    var symbols: [String] = []
    /// The index into `symbols` of each row.
    var rowTickers: [Int32] = []
    /// Days since 1970-01-01 of each row.
    var dates = Column<Int32>()
    /// The value columns' names as the file gives them, parallel to `values`.
    var names: [String] = []
    var values: [AnyColumn] = []
    /// The date column's name in the file.
    var dateName = "date"
    /// Key-value metadata of the file (without Colonnade's and Arrow's own keys).
    var metadata: [String: String] = [:]
    /// Colonnade's round-trip information, when the file was written by Colonnade.
    var info: InteropTableInfo?
    /// Columns that are not quotes, left out.
    var skipped: [InteropSkippedColumn] = []

    /// Keys other tools keep for themselves; they do not become table metadata.
    static func isToolKey(_ key: String) -> Bool {
        key == InteropTableInfo.key || key.hasPrefix("ARROW:") || key == "pandas" || key.hasPrefix("polars") || key.hasPrefix("duckdb")
    }

    /// Builds the table: tickers in the order Colonnade's information gives (else first
    /// appearance), rows grouped by ticker and sorted by date.
    /// - Throws: `InteropError.table` for a date that appears twice for one ticker.
    /// - Complexity: O(rows) when each ticker's rows are contiguous with ascending dates (as every
    ///   Colonnade file and most others are); O(rows log rows) otherwise.
    func assemble() throws(InteropError) -> QuoteTable {
        let useInfo = info.map { info in
            info.columnNames.count == names.count
                && zip(info.columnNames, names).allSatisfy { ColumnDescriptor.identifier(for: $0) == ColumnDescriptor.identifier(for: $1) }
        } ?? false
        var entries: [TickerEntry] = useInfo ? info!.tickers : []
        var codeOf: [String: Int32] = [:]
        for (i, e) in entries.enumerated() { codeOf[e.symbol] = Int32(i) }
        var global = [Int32](repeating: 0, count: symbols.count)
        for (i, s) in symbols.enumerated() {
            if let c = codeOf[s] { global[i] = c; continue }
            let c = Int32(entries.count)
            codeOf[s] = c
            entries.append(TickerEntry(symbol: s))
            global[i] = c
        }
        let schema = names.enumerated().map { i, name in
            ColumnDescriptor(name: useInfo ? info!.columnNames[i] : name, type: values[i].elementType)
        }
        let dateColumnName = useInfo ? info!.dateColumnName : dateName
        let n = dates.count

        // Runs of one ticker; the fast path needs each ticker in one run with ascending dates.
        var runs: [(code: Int32, rows: Range<Int>)] = []
        var grouped = true
        dates.withUnsafeBufferPointer { d in
            rowTickers.withUnsafeBufferPointer { t in
                var seen = [Bool](repeating: false, count: entries.count)
                var start = 0
                while start < n {
                    let local = t[start]
                    var end = start + 1
                    while end < n && t[end] == local {
                        if d[end] <= d[end - 1] { grouped = false; return }
                        end += 1
                    }
                    let code = global[Int(local)]
                    if seen[Int(code)] { grouped = false; return }
                    seen[Int(code)] = true
                    runs.append((code, start ..< end))
                    start = end
                }
            }
        }
        do throws(TableError) {
            if !grouped {
                var codes = [Int32](repeating: 0, count: n)
                for r in 0 ..< n { codes[r] = global[Int(rowTickers[r])] }
                return try QuoteTable(sortingRows: entries, rowTickers: codes, dates: dates, schema: schema, columns: values,
                                      dateColumnName: dateColumnName, metadata: metadata)
            }
            var ranges = [Range<Int>?](repeating: nil, count: entries.count)
            for run in runs { ranges[Int(run.code)] = run.rows }
            var next = 0
            var inOrder = true
            var ordered: [Range<Int>] = []
            for (code, range) in ranges.enumerated() {
                let rows = range ?? next ..< next
                entries[code].firstRow = next
                entries[code].rowCount = rows.count
                if rows.lowerBound != next { inOrder = false }
                if !rows.isEmpty { ordered.append(rows) }
                next += rows.count
            }
            if inOrder {
                return try QuoteTable(schema: schema, columns: values, dates: dates, tickers: entries,
                                      dateColumnName: dateColumnName, metadata: metadata, checkDates: false)
            }
            let mapper = RangeConcatenation(ranges: ordered)
            return try QuoteTable(schema: schema, columns: values.map { $0.map(mapper) }, dates: mapper.map(dates),
                                  tickers: entries, dateColumnName: dateColumnName, metadata: metadata, checkDates: false)
        } catch {
            throw .table(file: file, error)
        }
    }
}

/// A column of the rows `ranges` of another, in that order: one copy per range.
struct RangeConcatenation: ColumnMapper {
    let ranges: [Range<Int>]

    func map<T: ColumnElement>(_ column: Column<T>) -> Column<T> {
        let total = ranges.reduce(0) { $0 + $1.count }
        var out = column.withUnsafeBufferPointer { src in
            Column<T>(unsafeUninitializedCount: total) { dst in
                var at = 0
                for r in ranges {
                    // Safe: every range lies within the column; the ranges add up to total.
                    (dst.baseAddress! + at).update(from: src.baseAddress! + r.lowerBound, count: r.count)
                    at += r.count
                }
            }
        }
        if let validity = column.validity {
            var bits = Bitmask(count: total, allSet: true)
            var at = 0
            for r in ranges {
                for row in r { if !validity[row] { bits[at] = false }; at += 1 }
            }
            out.setValidity(bits)
        }
        return out
    }
}
