/// The columns a reader decoded from one Arrow or Parquet input, before they become a table:
/// tickers as indices into the file's own symbol list, dates, and the value columns by name.
/// A note about a column of an Arrow or Parquet file: one that is not a quote (a string other
/// than the ticker, a boolean, a nested column, …), left out of the table (`import --strict`
/// refuses the file instead); or (`kind == .timeOfDay`) a date column whose timestamps hold a time
/// of day other than midnight, each row taken as its day.
public struct InteropSkippedColumn: Sendable, Hashable {
    /// What the note says.
    public enum Kind: Sendable, Hashable {
        /// The column is not a quote and was left out.
        case notAQuote
        /// The date column holds times of day other than midnight (`type` names the first).
        case timeOfDay
    }

    /// The file, as the caller named it.
    public var file: String
    /// The column's name (a nested column's as `group.leaf`).
    public var column: String
    /// What it is: "type byteArray (converted type #0), which is not a ticker, a date or a number";
    /// for a time of day, the first one: "row 0: 16:00:00".
    public var type: String
    public var kind: Kind = .notAQuote

    public init(file: String, column: String, type: String) {
        self.file = file
        self.column = column
        self.type = type
    }

    /// The note for a date column whose first time of day other than midnight is in `row`.
    init(timeOfDayIn file: String, column: String, row: Int, text: String) {
        self.init(file: file, column: column, type: "row \(row): \(text)")
        kind = .timeOfDay
    }
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

    /// The columns of several files of one dataset, one after another, as if one file held
    /// them: symbols interned anew, value columns matched by name (a column a file lacks is null
    /// in its rows), the first file's date column name, metadata and Colonnade information.
    /// - Throws: `InteropError.schemaMismatch` when files give one column different types.
    /// - Complexity: one copy of every value.
    static func joining(_ parts: [ImportedColumns], name: String) throws(InteropError) -> ImportedColumns {
        guard parts.count > 1, let first = parts.first else { return parts.first ?? ImportedColumns(file: name) }
        var out = ImportedColumns(file: name)
        out.dateName = first.dateName
        out.metadata = first.metadata
        out.info = first.info
        var interner = InteropValues.SymbolInterner()
        var columnIndex: [String: Int] = [:]
        var types: [ElementType] = []
        for part in parts {
            out.skipped += part.skipped
            for (i, n) in part.names.enumerated() {
                let id = ColumnDescriptor.identifier(for: n)
                if let c = columnIndex[id] {
                    guard types[c] == part.values[i].elementType else {
                        throw .schemaMismatch(
                            file: part.file,
                            detail: "column '\(n)' is \(part.values[i].elementType) here and \(types[c]) in an earlier file of \(name)")
                    }
                } else {
                    columnIndex[id] = out.names.count
                    out.names.append(n)
                    types.append(part.values[i].elementType)
                }
            }
        }
        var chunks = [[AnyColumn]](repeating: [], count: out.names.count)
        var dates: [Column<Int32>] = []
        // Reserved once: per part it would reallocate exactly and copy the rows so far each time.
        out.rowTickers.reserveCapacity(out.rowTickers.count + parts.reduce(0) { $0 + $1.rowTickers.count })
        for part in parts {
            let numbers = part.symbols.map { interner.number($0) }
            for t in part.rowTickers { out.rowTickers.append(numbers[Int(t)]) }
            dates.append(part.dates)
            var present = [AnyColumn?](repeating: nil, count: out.names.count)
            for (i, n) in part.names.enumerated() { present[columnIndex[ColumnDescriptor.identifier(for: n)] ?? 0] = part.values[i] }
            for c in 0 ..< out.names.count {
                chunks[c].append(present[c] ?? AnyColumn.nulls(types[c], count: part.dates.count))
            }
        }
        out.symbols = interner.symbols
        out.dates = InteropValues.concatenate(dates)
        out.values = (0 ..< out.names.count).map { InteropValues.concatenate(chunks[$0], as: types[$0]) }
        return out
    }

    /// Builds the table: tickers in the order Colonnade's information gives (else first
    /// appearance), rows grouped by ticker and sorted by date.
    /// - Throws: `InteropError.table` for a date that appears twice for one ticker.
    /// - Complexity: O(rows) when each ticker's rows are contiguous with ascending dates (as every
    ///   Colonnade file and most others are); O(rows log rows) otherwise.
    func assemble() throws(InteropError) -> QuoteTable {
        let useInfo =
            info.map { info in
                info.columnNames.count == names.count
                    && zip(info.columnNames, names).allSatisfy {
                        ColumnDescriptor.identifier(for: $0) == ColumnDescriptor.identifier(for: $1)
                    }
            } ?? false
        var entries: [TickerEntry] = useInfo ? info!.tickers : []
        var codeOf: [String: Int32] = [:]
        for (i, e) in entries.enumerated() { codeOf[e.symbol] = Int32(i) }
        var global = [Int32](repeating: 0, count: symbols.count)
        for (i, s) in symbols.enumerated() {
            if let c = codeOf[s] {
                global[i] = c
                continue
            }
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
        var runs: [(ticker: Int32, rows: Range<Int>)] = []
        var grouped = true
        dates.withUnsafeBufferPointer { d in
            rowTickers.withUnsafeBufferPointer { t in
                var seen = [Bool](repeating: false, count: entries.count)
                var start = 0
                while start < n {
                    let local = t[start]
                    var end = start + 1
                    while end < n && t[end] == local {
                        if d[end] <= d[end - 1] {
                            grouped = false
                            return
                        }
                        end += 1
                    }
                    let number = global[Int(local)]
                    if seen[Int(number)] {
                        grouped = false
                        return
                    }
                    seen[Int(number)] = true
                    runs.append((number, start ..< end))
                    start = end
                }
            }
        }
        do throws(TableError) {
            if !grouped {
                var numbers = [Int32](repeating: 0, count: n)
                for r in 0 ..< n { numbers[r] = global[Int(rowTickers[r])] }
                return try QuoteTable(
                    sortingRows: entries, rowTickers: numbers, dates: dates, schema: schema, columns: values,
                    dateColumnName: dateColumnName, metadata: metadata)
            }
            var ranges = [Range<Int>?](repeating: nil, count: entries.count)
            for run in runs { ranges[Int(run.ticker)] = run.rows }
            var next = 0
            var inOrder = true
            var ordered: [Range<Int>] = []
            for (number, range) in ranges.enumerated() {
                let rows = range ?? next ..< next
                entries[number].firstRow = next
                entries[number].rowCount = rows.count
                if rows.lowerBound != next { inOrder = false }
                if !rows.isEmpty { ordered.append(rows) }
                next += rows.count
            }
            if inOrder {
                return try QuoteTable(
                    schema: schema, columns: values, dates: dates, tickers: entries,
                    dateColumnName: dateColumnName, metadata: metadata, checkDates: false)
            }
            let mapper = RangeConcatenation(ranges: ordered)
            return try QuoteTable(
                schema: schema, columns: values.map { $0.map(mapper) }, dates: mapper.map(dates),
                tickers: entries, dateColumnName: dateColumnName, metadata: metadata, checkDates: false)
        } catch {
            // Rows that fell on one day only because their times of day were dropped.
            if case let .duplicateDate(ticker, day, rows) = error, let note = skipped.first(where: { $0.kind == .timeOfDay }) {
                throw .timesOnOneDay(file: file, column: note.column, ticker: ticker, day: day, rows: rows)
            }
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
                for row in r {
                    if !validity[row] { bits[at] = false }
                    at += 1
                }
            }
            out.setValidity(bits)
        }
        return out
    }
}

extension AnyColumn {
    /// A column of `count` nulls of `type`.
    static func nulls(_ type: ElementType, count: Int) -> AnyColumn {
        func make<T: ColumnElement>(_: T.Type) -> Column<T> {
            var c = Column<T>(unsafeUninitializedCount: count) { d in
                // Safe: d holds count elements; the values under nulls are zero.
                if count > 0 {
                    UnsafeMutableRawPointer(d.baseAddress!).initializeMemory(
                        as: UInt8.self, repeating: 0, count: count * MemoryLayout<T>.stride)
                }
            }
            c.setValidity(Bitmask(count: count))
            return c
        }
        switch type {
        case .int32: return .int32(make(Int32.self))
        case .int64: return .int64(make(Int64.self))
        case .float32: return .float32(make(Float.self))
        case .float64: return .float64(make(Double.self))
        }
    }
}
