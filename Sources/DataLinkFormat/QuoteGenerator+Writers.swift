#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Colonnade

/// Writers that turn a `QuoteTable` into response files shaped like the API's, for round trips,
/// fixtures of any size and decoding benchmarks.
///
///     let table = QuoteGenerator(tickers: 2_000, days: 5_000, seed: 7).makeTable()
///     let files = try QuoteGenerator.writeDatasetDataJSON(table, toDirectory: "/tmp/quotes")
///     try QuoteGenerator.writeDatatableCSV(table, to: "/tmp/quotes/PRICES.csv")
///
/// Output is compact and byte-for-byte what the API would send for the same values:
/// - JSON: `{"dataset_data":{…,"column_names":["Date","Open",…],…,"data":[["2017-09-29",960.11,…],…],…}}`,
///   one file per ticker, newest row first (the API's default order). `.dataset` adds
///   `dataset_code`, `database_code` and the ticker's `name` metadata, as `/datasets/{db}/{code}.json` does.
/// - CSV, datatable layout: one file, header `ticker,Date,Open,…`, rows grouped by ticker (in
///   code order) with dates ascending — like a WIKI/PRICES export. CSV, time-series layout: one
///   file per ticker, header `Date,Open,…`, newest first.
/// - Numbers in Swift's shortest round-trip form (`description`: integral values as `2411643.0`,
///   as the time-series API writes them), without building a `String` per value; nulls as
///   `null` (JSON) or an empty field (CSV). NaN and ±infinity, which the API never sends and
///   JSON cannot hold, are written as nulls too. Tickers are written as API codes (`BRK.A` →
///   `BRK_A`, `DataLinkSymbols.code(fromSymbol:)`).
extension QuoteGenerator {
    /// Which JSON object wraps a time series.
    public enum JSONShape: Sendable {
        /// `{"dataset_data": {…}}` from `/datasets/{db}/{code}/data.json`.
        case datasetData
        /// `{"dataset": {…}}` from `/datasets/{db}/{code}.json`, with the ticker's name.
        case dataset
    }

    /// A writer failure: the path and the system's reason.
    public struct WriteError: Error, Sendable, CustomStringConvertible {
        /// The file that could not be written.
        public var path: String
        /// `strerror` of the failure.
        public var reason: String
        public var description: String { "\(path): cannot write: \(reason)" }
    }

    /// The JSON response for one ticker of `table`, newest row first.
    /// - Complexity: O(rows of the ticker × columns).
    public static func datasetJSON(
        _ table: QuoteTable, ticker number: Int, shape: JSONShape = .datasetData,
        database: String = "WIKI"
    ) -> [UInt8] {
        var sink = ByteSink(target: .memory)
        writeJSON(table, ticker: number, shape: shape, database: database, to: &sink)
        return sink.finish()
    }

    /// Writes one JSON response per ticker into `directory` (created if needed), named
    /// `<database>-<code>.json` (`WIKI-BRK_A.json`).
    /// - Returns: The paths, in ticker-number order.
    public static func writeDatasetJSON(
        _ table: QuoteTable, toDirectory directory: String, shape: JSONShape = .datasetData,
        database: String = "WIKI"
    ) throws(WriteError) -> [String] {
        try makeDirectory(directory)
        var paths: [String] = []
        for number in table.tickers.indices {
            let path = directory + "/" + database + "-" + DataLinkSymbols.code(fromSymbol: table.tickers[number].symbol) + ".json"
            try write(to: path) { sink in writeJSON(table, ticker: number, shape: shape, database: database, to: &sink) }
            paths.append(path)
        }
        return paths
    }

    /// The datatable-layout CSV of the whole table (`ticker,Date,…`, ascending within each ticker).
    public static func datatableCSV(_ table: QuoteTable) -> [UInt8] {
        var sink = ByteSink(target: .memory)
        writeCSV(table, tickers: table.tickers.indices, tickerColumn: true, newestFirst: false, to: &sink)
        return sink.finish()
    }

    /// Writes the datatable-layout CSV of the whole table to `path`.
    public static func writeDatatableCSV(_ table: QuoteTable, to path: String) throws(WriteError) {
        try write(to: path) { sink in
            writeCSV(table, tickers: table.tickers.indices, tickerColumn: true, newestFirst: false, to: &sink)
        }
    }

    /// The time-series CSV of one ticker (`Date,Open,…`), newest row first.
    public static func timeSeriesCSV(_ table: QuoteTable, ticker number: Int) -> [UInt8] {
        var sink = ByteSink(target: .memory)
        writeCSV(table, tickers: number ..< number + 1, tickerColumn: false, newestFirst: true, to: &sink)
        return sink.finish()
    }

    /// Writes one time-series CSV per ticker into `directory`, named `<database>-<code>.csv`.
    /// - Returns: The paths, in ticker-number order.
    public static func writeTimeSeriesCSV(
        _ table: QuoteTable, toDirectory directory: String,
        database: String = "WIKI"
    ) throws(WriteError) -> [String] {
        try makeDirectory(directory)
        var paths: [String] = []
        for number in table.tickers.indices {
            let path = directory + "/" + database + "-" + DataLinkSymbols.code(fromSymbol: table.tickers[number].symbol) + ".csv"
            try write(to: path) { sink in
                writeCSV(table, tickers: number ..< number + 1, tickerColumn: false, newestFirst: true, to: &sink)
            }
            paths.append(path)
        }
        return paths
    }

    // MARK: Rows

    private static func writeJSON(
        _ table: QuoteTable, ticker number: Int, shape: JSONShape, database: String,
        to sink: inout ByteSink
    ) {
        let entry = table.tickers[number]
        let rows = entry.rows
        switch shape {
        case .datasetData:
            sink.append("{\"dataset_data\":{\"limit\":null,\"transform\":null,\"column_index\":null,\"column_names\":")
        case .dataset:
            sink.append("{\"dataset\":{\"dataset_code\":")
            sink.appendJSONString(DataLinkSymbols.code(fromSymbol: entry.symbol))
            sink.append(",\"database_code\":")
            sink.appendJSONString(database)
            sink.append(",\"name\":")
            if let name = entry.metadata["name"] { sink.appendJSONString(name) } else { sink.append("null") }
            sink.append(",\"column_names\":")
        }
        sink.append("[")
        sink.appendJSONString(table.dateColumnName)
        for d in table.schema {
            sink.append(",")
            sink.appendJSONString(d.name)
        }
        sink.append("],\"start_date\":")
        if rows.isEmpty {
            sink.append("null,\"end_date\":null")
        } else {
            sink.appendQuotedDay(table.dates[rows.lowerBound])
            sink.append(",\"end_date\":")
            sink.appendQuotedDay(table.dates[rows.upperBound - 1])
        }
        sink.append(",\"frequency\":\"daily\",\"data\":[")
        let columns = table.columns.map { $0.convertedToFloat64() }
        withValuePointers(columns) { values, validity in
            var first = true
            for r in rows.reversed() {
                sink.reserve(16 + 32 * columns.count)
                if !first { sink.appendByte(UInt8(ascii: ",")) }
                first = false
                sink.appendByte(UInt8(ascii: "["))
                sink.appendQuotedDay(table.dates[r])
                for c in 0 ..< columns.count {
                    sink.appendByte(UInt8(ascii: ","))
                    let v = values[c][r]
                    if (validity[c].map { !$0[r] } ?? false) || !v.isFinite {
                        sink.append("null")
                    } else {
                        sink.appendNumber(v)
                    }
                }
                sink.appendByte(UInt8(ascii: "]"))
            }
        }
        sink.append("],\"collapse\":null,\"order\":\"desc\"}}")
    }

    private static func writeCSV(
        _ table: QuoteTable, tickers: Range<Int>, tickerColumn: Bool, newestFirst: Bool,
        to sink: inout ByteSink
    ) {
        if tickerColumn { sink.append("ticker,") }
        sink.append(csvField(table.dateColumnName))
        for d in table.schema {
            sink.append(",")
            sink.append(csvField(d.name))
        }
        sink.append("\n")
        let columns = table.columns.map { $0.convertedToFloat64() }
        withValuePointers(columns) { values, validity in
            for number in tickers {
                let entry = table.tickers[number]
                let apiCode = Array(csvField(DataLinkSymbols.code(fromSymbol: entry.symbol)).utf8)
                let rows = entry.rows
                for i in 0 ..< rows.count {
                    let r = newestFirst ? rows.upperBound - 1 - i : rows.lowerBound + i
                    sink.reserve(16 + apiCode.count + 32 * columns.count)
                    if tickerColumn {
                        for b in apiCode { sink.appendByte(b) }
                        sink.appendByte(UInt8(ascii: ","))
                    }
                    sink.appendDay(table.dates[r])
                    for c in 0 ..< columns.count {
                        sink.appendByte(UInt8(ascii: ","))
                        let v = values[c][r]
                        if !((validity[c].map { !$0[r] } ?? false) || !v.isFinite) { sink.appendNumber(v) }
                    }
                    sink.appendByte(UInt8(ascii: "\n"))
                }
            }
        }
    }

    /// `text` as one CSV field (RFC 4180): quoted, with each `"` doubled, when it holds a comma, a
    /// quote, a line end, or leading or trailing spaces; as it is otherwise (every generated name).
    static func csvField(_ text: String) -> String {
        let special = text.utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 10 || $0 == 13 }
        guard special || text.hasPrefix(" ") || text.hasSuffix(" ") else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Calls `body` with each column's values and validity.
    private static func withValuePointers(
        _ columns: [Column<Double>],
        _ body: ([UnsafeBufferPointer<Double>], [Bitmask?]) -> Void
    ) {
        var pointers: [UnsafeBufferPointer<Double>] = []
        func next(_ i: Int) {
            if i == columns.count {
                body(pointers, columns.map(\.validity))
                return
            }
            columns[i].withUnsafeBufferPointer { p in
                pointers.append(p)
                next(i + 1)
            }
        }
        next(0)
    }

    // MARK: Files

    private static func makeDirectory(_ path: String) throws(WriteError) {
        if mkdir(path, 0o755) != 0 && errno != EEXIST {
            throw WriteError(path: path, reason: String(cString: strerror(errno)))
        }
    }

    /// Writes a file through a `ReplacementFile`: a temporary beside `path`, renamed over it
    /// once complete, so an existing file is never truncated or left half-written.
    private static func write(to path: String, _ body: (inout ByteSink) -> Void) throws(WriteError) {
        let file: ReplacementFile
        do { file = try ReplacementFile(replacing: path) } catch { throw WriteError(path: path, reason: error.reason) }
        var sink = ByteSink(target: .file(file.fileDescriptor))
        body(&sink)
        _ = sink.finish()
        if let failure = sink.failure {
            file.discard()
            throw WriteError(path: path, reason: String(cString: strerror(failure)))
        }
        do { try file.commit() } catch { throw WriteError(path: path, reason: error.reason) }
    }
}

extension ReplacementFileError {
    /// The description without the leading path.
    var reason: String {
        let text = description
        return text.hasPrefix(path + ": ") ? String(text.dropFirst(path.count + 2)) : text
    }
}

/// A 1 MiB output buffer flushed to a file descriptor or collected in memory. Numbers are
/// formatted by the standard library straight into the buffer (`_writeASCII`), with no `String`.
struct ByteSink: TextOutputStream {
    enum Target { case file(Int32), memory }

    private static let capacity = 1 << 20
    let target: Target
    private let base: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var collected: [UInt8] = []
    /// The `errno` of the first failed write.
    private(set) var failure: Int32?

    init(target: Target) {
        self.target = target
        base = .allocate(capacity: Self.capacity)
    }

    /// Makes room for `n` more bytes (at most the capacity), flushing if needed.
    @inline(__always)
    mutating func reserve(_ n: Int) {
        if count + n > Self.capacity { flush() }
    }

    @inline(__always)
    mutating func appendByte(_ b: UInt8) {
        if count == Self.capacity { flush() }
        base[count] = b
        count += 1
    }

    mutating func append(_ text: String) {
        for b in text.utf8 { appendByte(b) }
    }

    mutating func write(_ string: String) { append(string) }

    mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) {
        reserve(buffer.count)
        guard let source = buffer.baseAddress, buffer.count <= Self.capacity - count else {
            for b in buffer { appendByte(b) }
            return
        }
        (base + count).update(from: source, count: buffer.count)
        count += buffer.count
    }

    /// `description` of `value`, without the `String`.
    @inline(__always)
    mutating func appendNumber(_ value: Double) {
        value.write(to: &self)
    }

    mutating func appendDay(_ day: Int32) {
        let year = Day(daysSinceEpoch: day).components.year
        if year >= 0 && year <= 9999 {
            reserve(10)
            Day.writeDay(day, to: base + count)
            count += 10
        } else {
            append(Day(daysSinceEpoch: day).description)
        }
    }

    mutating func appendQuotedDay(_ day: Int32) {
        appendByte(UInt8(ascii: "\""))
        appendDay(day)
        appendByte(UInt8(ascii: "\""))
    }

    mutating func appendJSONString(_ text: String) {
        appendByte(UInt8(ascii: "\""))
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case UInt8(ascii: "\n"): append("\\n")
            case UInt8(ascii: "\r"): append("\\r")
            case UInt8(ascii: "\t"): append("\\t")
            case 0 ..< 0x20:
                let hex = Array("0123456789abcdef".utf8)
                append("\\u00")
                appendByte(hex[Int(b >> 4)])
                appendByte(hex[Int(b & 15)])
            default: appendByte(b)
            }
        }
        appendByte(UInt8(ascii: "\""))
    }

    mutating func flush() {
        guard count > 0 else { return }
        switch target {
        case .memory:
            collected.append(contentsOf: UnsafeBufferPointer(start: base, count: count))
        case .file(let fd):
            if failure == nil {
                let code = SystemCall.writeAll(fd, base, count)
                if code != 0 { failure = code }
            }
        }
        count = 0
    }

    /// Flushes and frees the buffer; returns the collected bytes (memory target).
    mutating func finish() -> [UInt8] {
        flush()
        base.deallocate()
        let out = collected
        collected = []
        return out
    }
}
