import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Writes a table as Parquet: one file, or a Hive-style directory partitioned by year.
///
///     var writer = ParquetWriter(table: table)
///     writer.compression = .snappy
///     try writer.write(toFile: "quotes.parquet")
///     try writer.writePartitionedByYear(toDirectory: "quotes")   // quotes/year=2014/part-00000.parquet
///
/// The file (format version 2; how other engines read it: docs/SCALING.md): rows sorted by (ticker, date) — tickers by
/// their UTF-8 bytes, as Parquet orders byte arrays — in row groups of `rowGroupRows`; columns
/// `ticker` (required UTF-8 byte array, dictionary-encoded: a sorted dictionary page, then indices
/// as RLE runs), `date` (required INT32 with the DATE logical type), and every value column by its
/// identifier (optional DOUBLE, FLOAT, INT64 or INT32; nulls as definition levels, bit-packed
/// straight from the validity bits). Every column chunk carries min/max statistics and the null
/// count, so readers skip row groups the way our block summaries skip blocks. The key-value
/// metadata holds the table metadata and a `colonnade` key (see `InteropTableInfo`).
public struct ParquetWriter {
    /// Page compression.
    public enum Compression: Sendable, Equatable {
        case none
        case snappy
        /// Zstandard at a level of `ZstdCompressor.levels`.
        case zstd(level: Int)
        /// The LZ4 block format (`LZ4_RAW`; never the deprecated Hadoop-framed `LZ4`).
        case lz4Raw

        /// The footer's codec.
        var codec: ParquetFormat.Codec {
            switch self {
            case .none: .uncompressed
            case .snappy: .snappy
            case .zstd: .zstd
            case .lz4Raw: .lz4Raw
            }
        }
    }

    /// The table to write.
    public var table: QuoteTable
    /// Rows per row group (the last may be shorter).
    public var rowGroupRows: Int = 1 << 20
    /// Called with the rows and bytes of each row group once it is written (for a progress
    /// display; a partitioned write calls it from its writing threads).
    public var progress: (@Sendable (_ rows: Int, _ bytes: Int) -> Void)?
    /// Page compression.
    public var compression: Compression = .none
    /// Rows per data page.
    var pageRows: Int = 1 << 17
    /// Partition files written at once by `writePartitionedByYear` (nil: one per core).
    public var threads: Int?
    /// Column chunks encoded and compressed at once in a row group of a compressed file (a
    /// partitioned write compresses its files in parallel instead).
    public var columnThreads: Int = QueryOptions.availableCores

    /// A writer of `table` with row groups of about a million rows, uncompressed.
    public init(table: QuoteTable) {
        self.table = table
    }

    /// A run of source rows of one ticker, in output order.
    struct Segment {
        var ticker: Int
        var rows: Range<Int>
    }

    /// Writes one file at `path` through a `ReplacementFile` (a locked temporary, fsync, rename;
    /// the replaced file's permissions kept).
    public func write(toFile path: String, durable: Bool = true) throws(InteropError) {
        let segments = Self.segments(of: table, order: tickerOrder(), year: nil)
        try ReplacementFile.write(to: path, durable: durable) { output throws(InteropError) in
            try write(segments: segments, to: output)
        }
    }

    /// Writes the whole table to `output`.
    public func write(to output: InteropOutput) throws(InteropError) {
        try write(segments: Self.segments(of: table, order: tickerOrder(), year: nil), to: output)
    }

    /// How a partitioned write splits the rows: by calendar year (`year=2014/`) or by month
    /// (`year=2014/month=05/`).
    public enum Partitioning: String, Sendable, CaseIterable {
        case year, month
    }

    /// One partition: a year, or a month of a year, and the days it covers.
    public struct Partition: Sendable, Hashable, Comparable {
        public var year: Int
        /// 1...12 when partitioned by month.
        public var month: Int?

        /// The Hive directory: `year=2014` or `year=2014/month=05`.
        public var path: String {
            month.map { "year=\(year)/month=\($0 < 10 ? "0" : "")\($0)" } ?? "year=\(year)"
        }

        /// The partition values by column name, as text (`["year": "2014", "month": "5"]`).
        public var values: [(String, String)] {
            [("year", String(year))] + (month.map { [("month", String($0))] } ?? [])
        }

        /// Its first day and the first day after it.
        var days: Range<Int32> {
            let lo = Day.days(year: year, month: month ?? 1, day: 1) ?? .min
            let next = month.map { $0 == 12 ? (year + 1, 1) : (year, $0 + 1) } ?? (year + 1, 1)
            return lo ..< (Day.days(year: next.0, month: next.1, day: 1) ?? .max)
        }

        public static func < (a: Partition, b: Partition) -> Bool { (a.year, a.month ?? 0) < (b.year, b.month ?? 0) }
    }

    /// Writes `directory/year=YYYY/part-00000.parquet` for every year with rows, each file atomically.
    /// Year directories already there for other years are left alone, so exporting one new year
    /// into an existing dataset adds it; a year exported again is replaced.
    /// - Returns: The files written, oldest year first.
    public func writePartitionedByYear(toDirectory directory: String, durable: Bool = true) throws(InteropError) -> [String] {
        try writePartitioned(toDirectory: directory, by: .year, durable: durable)
    }

    /// Writes `directory/PARTITION/part-00000.parquet` for every year (or month) with rows, each
    /// file atomically; partitions already there for other years (months) are left alone.
    /// - Returns: The files written, oldest first.
    public func writePartitioned(
        toDirectory directory: String, by partitioning: Partitioning, durable: Bool = true
    ) throws(InteropError) -> [String] {
        let parts = try partitionSegments(by: partitioning, in: directory)
        try ReplacementFile.makeDirectories(directory, durable: durable)
        var paths: [String] = []
        for part in parts {
            let partition = directory + "/" + part.partition.path
            try ReplacementFile.makeDirectories(partition, durable: durable)
            paths.append(partition + "/part-00000.parquet")
        }
        try writeFiles(paths.indices.map { (paths[$0], parts[$0].segments) }, durable: durable)
        return paths
    }

    /// Every partition with rows and its segments; every row lands in exactly one.
    /// - Throws: `malformed` naming `directory` when they do not hold every row (an internal error).
    func partitionSegments(
        by partitioning: Partitioning, in directory: String
    ) throws(InteropError) -> [(partition: Partition, segments: [Segment])] {
        let order = tickerOrder()
        var parts: [(partition: Partition, segments: [Segment])] = []
        var placed = 0
        for partition in Self.partitionsPresent(in: table, by: partitioning) {
            let segments = Self.segments(of: table, order: order, days: partition.days)
            if segments.isEmpty { continue }
            parts.append((partition, segments))
            placed += segments.reduce(0) { $0 + $1.rows.count }
        }
        // Every row lands in exactly one partition: a row no partition took would be lost silently
        // (a probe found rows on the last day numbers dropped, and every row reported written).
        guard placed == table.rowCount else {
            throw .malformed(
                file: directory, offset: 0,
                detail: "internal error: the partitions hold \(placed) of \(table.rowCount) rows; nothing was written")
        }
        return parts
    }

    /// Writes each file of `files` (path, rows) atomically, one per core at a time (each file's
    /// writes are sequential, and a filesystem serializes the buffered writes to one file, not
    /// to different files). Throws the first failure in the files' order.
    func writeFiles(_ files: [(path: String, segments: [Segment])], durable: Bool) throws(InteropError) {
        let failures = UnsafeMutablePointer<InteropError?>.allocate(capacity: files.count)
        failures.initialize(repeating: nil, count: files.count)
        defer {
            failures.deinitialize(count: files.count)
            failures.deallocate()
        }
        let shared = SharedPointer(base: failures)
        var inner = self
        // Files in parallel, so each compresses its columns on one thread.
        if files.count > 1 { inner.columnThreads = 1 }
        forEachChunk(files.count, threads: threads ?? QueryOptions.availableCores) { i, _ in
            do throws(InteropError) {
                try ReplacementFile.write(to: files[i].path, durable: durable) { output throws(InteropError) in
                    try inner.write(segments: files[i].segments, to: output)
                }
            } catch {
                // Safe: worker i alone writes slot i.
                shared.base[i] = error
            }
        }
        for i in files.indices { if let failure = failures[i] { throw failure } }
    }

    /// The calendar years that hold at least one row, ascending.
    static func yearsPresent(in table: QuoteTable) -> [Int] {
        partitionsPresent(in: table, by: .year).map(\.year)
    }

    /// The years (months) that hold at least one row, ascending: per ticker, the partition of its
    /// first row, then a binary search for the first row of a later one, and so on, so the work
    /// is O(partitions present × log rows), never the span between a ticker's first and last dates.
    static func partitionsPresent(in table: QuoteTable, by partitioning: Partitioning) -> [Partition] {
        var found = Set<Partition>()
        table.dates.withUnsafeBufferPointer { d in
            for t in table.tickers where t.rowCount > 0 {
                var row = t.firstRow
                let end = t.firstRow + t.rowCount
                while row < end {
                    let c = Day.components(ofDay: d[row])
                    let partition = Partition(year: c.year, month: partitioning == .month ? c.month : nil)
                    found.insert(partition)
                    let next = partition.days.upperBound
                    // Past the last storable day, nothing follows.
                    guard next != .max else { break }
                    row = lowerBound(d, next, in: row ..< end)
                }
            }
        }
        return found.sorted()
    }

    /// Ticker numbers in the order of their symbols' UTF-8 bytes.
    func tickerOrder() -> [Int] {
        let keys = table.tickers.map { Array($0.symbol.utf8) }
        return keys.indices.sorted { keys[$0].lexicographicallyPrecedes(keys[$1]) }
    }

    /// The rows of every ticker in `order` (only those dated in `year`, when given).
    static func segments(of table: QuoteTable, order: [Int], year: Int?) -> [Segment] {
        segments(of: table, order: order, days: year.map { Partition(year: $0).days })
    }

    /// The rows of every ticker in `order` (only those dated in `days`, when given).
    static func segments(of table: QuoteTable, order: [Int], days: Range<Int32>?) -> [Segment] {
        var out: [Segment] = []
        out.reserveCapacity(order.count)
        table.dates.withUnsafeBufferPointer { d in
            for number in order {
                let t = table.tickers[number]
                var a = t.firstRow, b = t.firstRow + t.rowCount
                if let days {
                    a = Self.lowerBound(d, days.lowerBound, in: a ..< b)
                    b = Self.lowerBound(d, days.upperBound, in: a ..< b)
                }
                if a < b { out.append(Segment(ticker: number, rows: a ..< b)) }
            }
        }
        return out
    }

    /// The first row in `range` whose date is at least `day` (dates ascend within a ticker).
    static func lowerBound(_ d: UnsafeBufferPointer<Int32>, _ day: Int32, in range: Range<Int>) -> Int {
        var lo = range.lowerBound, hi = range.upperBound
        while lo < hi {
            let mid = (lo + hi) / 2
            if d[mid] < day { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// The segments covering output rows `range` (output row = position in the concatenation).
    static func slice(_ segments: [Segment], starts: [Int], _ range: Range<Int>) -> [Segment] {
        var out: [Segment] = []
        // The last segment starting at or before range.lowerBound.
        var lo = 0, hi = segments.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if starts[mid] <= range.lowerBound { lo = mid } else { hi = mid - 1 }
        }
        var i = lo
        while i < segments.count && starts[i] < range.upperBound {
            let s = segments[i]
            let a = max(range.lowerBound, starts[i]) - starts[i], b = min(range.upperBound, starts[i] + s.rows.count) - starts[i]
            if a < b { out.append(Segment(ticker: s.ticker, rows: s.rows.lowerBound + a ..< s.rows.lowerBound + b)) }
            i += 1
        }
        return out
    }

    // MARK: File

    /// What the footer needs to know about one written column chunk.
    struct ChunkInfo {
        var type: ParquetFormat.PhysicalType
        var encodings: [ParquetFormat.Encoding]
        var path: String
        var valueCount: Int
        var uncompressedSize: Int
        var compressedSize: Int
        var dataPageOffset: Int
        var dictionaryPageOffset: Int?
        var statistics: ParquetStatistics
    }

    func write(segments: [Segment], to output: InteropOutput) throws(InteropError) {
        let base = output.position
        var starts: [Int] = []
        starts.reserveCapacity(segments.count)
        var total = 0
        for s in segments {
            starts.append(total)
            total += s.rows.count
        }
        try output.reserve(estimatedLength(rows: total, segments: segments.count))
        try output.write(ParquetFormat.magic)
        var groups: [(rows: Int, chunks: [ChunkInfo], offset: Int)] = []
        var ranges: [Range<Int>] = []
        var row = 0
        while row < total {
            let end = min(total, row + rowGroupRows)
            ranges.append(row ..< end)
            row = end
        }
        if compression != .none && columnThreads > 1 {
            // Every chunk of the file compressed on `columnThreads` threads, written in order as
            // they finish: one row group at a time left a thread idle through the last of its
            // five costly value columns, and through every group's write.
            let written = try writeChunksInParallel(
                ranges.map { (pieces: Self.slice(segments, starts: starts, $0), rows: $0.count) }, to: output, base: base)
            groups = zip(ranges, written).map { ($0.count, $1.chunks, $1.offset) }
        } else {
            for range in ranges {
                let pieces = Self.slice(segments, starts: starts, range)
                let offset = output.position - base
                var chunks: [ChunkInfo] = []
                chunks.append(try writeTickerChunk(pieces, rows: range.count, to: output, base: base))
                chunks.append(
                    try writeValueChunk(
                        .int32(table.dates), name: "date", required: true, pieces, rows: range.count, to: output, base: base))
                for (d, column) in zip(table.schema, table.columns) {
                    chunks.append(
                        try writeValueChunk(
                            column, name: d.identifier, required: false, pieces, rows: range.count, to: output, base: base))
                }
                groups.append((range.count, chunks, offset))
                progress?(range.count, output.position - base - offset)
            }
        }
        let footer = footerBytes(rowCount: total, groups: groups, tickerNumbers: segments.map(\.ticker))
        try output.write(footer)
        var trailer = FlatBufferByteArray()
        trailer.appendUInt32LE(UInt32(footer.count))
        try output.write(trailer.bytes + ParquetFormat.magic)
    }

    /// The column chunks of `groups` (row groups in file order), each encoded and compressed into
    /// memory on one of `columnThreads` threads, taken in file order; a thread that finishes a
    /// chunk writes every finished chunk that is next in the file (under a lock, so one at a time
    /// and in order), so writing overlaps compressing and only the chunks finished ahead of a
    /// slow one wait in memory. Offsets are moved to where the chunks land; `progress` is called
    /// for each group, on the thread that wrote its last chunk. Returns each group's chunks and
    /// its offset from `base`.
    func writeChunksInParallel(
        _ groups: [(pieces: [Segment], rows: Int)], to output: InteropOutput, base: Int
    ) throws(InteropError) -> [(chunks: [ChunkInfo], offset: Int)] {
        let columns = 2 + table.columns.count
        let sequencer = ChunkSequencer(tasks: groups.count * columns, columns: columns)
        forEachChunk(groups.count * columns, threads: columnThreads) { task, _ in
            let (pieces, rows) = groups[task / columns]
            let i = task % columns
            let buffer = MemoryInteropOutput()
            let result: Result<ChunkInfo, InteropError>
            do throws(InteropError) {
                if sequencer.failed { throw InteropError.io(file: "", operation: "write", errno: ECANCELED) }
                switch i {
                case 0: result = .success(try writeTickerChunk(pieces, rows: rows, to: buffer, base: 0))
                case 1:
                    result = .success(
                        try writeValueChunk(
                            .int32(table.dates), name: "date", required: true, pieces, rows: rows, to: buffer, base: 0))
                default:
                    result = .success(
                        try writeValueChunk(
                            table.columns[i - 2], name: table.schema[i - 2].identifier, required: false,
                            pieces, rows: rows, to: buffer, base: 0))
                }
            } catch {
                result = .failure(error)
            }
            sequencer.finished(task, result.map { ($0, buffer) }, output: output, base: base) { g, bytes in
                progress?(groups[g].rows, bytes)
            }
        }
        return try sequencer.result()
    }

    /// About the length of a file of `rows` rows in `segments` runs, a little above it when
    /// uncompressed: every value (a definition level bit per value of an optional column), a
    /// dictionary and runs for the tickers, room for page headers and the footer.
    func estimatedLength(rows: Int, segments: Int) -> Int {
        let groups = (rows + rowGroupRows - 1) / rowGroupRows
        let pages = (rows + pageRows - 1) / pageRows + groups
        let columns = 2 + table.columns.count
        let values = rows * (4 + table.columns.reduce(0) { $0 + $1.elementType.byteWidth })
        let levels = table.columns.count * (rows / 8 + 16 * pages)
        let tickers = groups * table.tickers.reduce(0) { $0 + 4 + $1.symbol.utf8.count } + 8 * (segments + pages)
        return 64 + values + levels + tickers + pages * columns * 64 + groups * columns * 256 + 4096
    }

    /// Writes one page (header, then data, compressed when asked); returns (uncompressed, written) sizes with header.
    func writePage(
        _ data: [UInt8], header: (inout ThriftCompactWriter, Int, Int) -> Void,
        to output: InteropOutput
    ) throws(InteropError) -> (Int, Int) {
        let body: [UInt8]
        switch compression {
        case .none: body = data
        case .snappy: body = data.withUnsafeBytes { Snappy.compress($0) }
        case .zstd(let level): body = data.withUnsafeBytes { ZstdCompressor.compress($0, level: level) }
        case .lz4Raw: body = data.withUnsafeBytes { LZ4Compressor.compressBlock($0) }
        }
        var h = ThriftCompactWriter()
        header(&h, data.count, body.count)
        try output.write(h.bytes)
        try output.write(body)
        return (h.bytes.count + data.count, h.bytes.count + body.count)
    }

    func writeTickerChunk(_ pieces: [Segment], rows: Int, to output: InteropOutput, base: Int) throws(InteropError) -> ChunkInfo {
        // The dictionary: this row group's tickers, in output (sorted) order.
        var dictionary = [UInt8]()
        var indexOfTicker: [Int: Int] = [:]
        var order: [Int] = []
        for p in pieces where indexOfTicker[p.ticker] == nil {
            indexOfTicker[p.ticker] = order.count
            order.append(p.ticker)
            let symbol = Array(table.tickers[p.ticker].symbol.utf8)
            var n = UInt32(symbol.count)
            withUnsafeBytes(of: &n) { dictionary.append(contentsOf: $0) }
            dictionary.append(contentsOf: symbol)
        }
        let dictionaryOffset = output.position - base
        let dictSizes = try writePage(
            dictionary,
            header: { h, u, c in
                h.structBegin(nil)
                h.i32(1, ParquetFormat.PageType.dictionaryPage.rawValue)
                h.i32(2, Int32(u))
                h.i32(3, Int32(c))
                h.structBegin(7)
                h.i32(1, Int32(order.count))
                h.i32(2, ParquetFormat.Encoding.plain.rawValue)
                h.bool(3, true)
                h.structEnd()
                h.structEnd()
            }, to: output)
        let dataOffset = output.position - base
        let width = max(1, RLEHybridEncoder.bitWidth(forMax: order.count - 1))
        var uncompressed = dictSizes.0, compressed = dictSizes.1
        var page = 0
        while page < rows {
            let end = min(rows, page + pageRows)
            var encoder = RLEHybridEncoder(bitWidth: width)
            encoder.bytes.append(UInt8(width))
            // Runs: one per piece overlapping this page.
            var at = 0
            for p in pieces {
                let a = max(at, page), b = min(at + p.rows.count, end)
                if a < b { encoder.appendRun(UInt32(indexOfTicker[p.ticker] ?? 0), count: b - a) }
                at += p.rows.count
                if at >= end { break }
            }
            let sizes = try writePage(
                encoder.bytes,
                header: { h, u, c in
                    Self.dataPageHeader(&h, values: end - page, uncompressed: u, compressed: c, encoding: .rleDictionary)
                }, to: output)
            uncompressed += sizes.0
            compressed += sizes.1
            page = end
        }
        var stats = ParquetStatistics(nullCount: 0)
        if let first = order.first, let last = order.last {
            stats.min = Array(table.tickers[first].symbol.utf8)
            stats.max = Array(table.tickers[last].symbol.utf8)
        }
        return ChunkInfo(
            type: .byteArray, encodings: [.plain, .rle, .rleDictionary], path: "ticker", valueCount: rows,
            uncompressedSize: uncompressed, compressedSize: compressed, dataPageOffset: dataOffset,
            dictionaryPageOffset: dictionaryOffset, statistics: stats)
    }

    static func dataPageHeader(
        _ h: inout ThriftCompactWriter, values: Int, uncompressed: Int, compressed: Int,
        encoding: ParquetFormat.Encoding
    ) {
        h.structBegin(nil)
        h.i32(1, ParquetFormat.PageType.dataPage.rawValue)
        h.i32(2, Int32(uncompressed))
        h.i32(3, Int32(compressed))
        h.structBegin(5)
        h.i32(1, Int32(values))
        h.i32(2, encoding.rawValue)
        h.i32(3, ParquetFormat.Encoding.rle.rawValue)
        h.i32(4, ParquetFormat.Encoding.rle.rawValue)
        h.structEnd()
        h.structEnd()
    }

    func writeValueChunk(
        _ column: AnyColumn, name: String, required: Bool, _ pieces: [Segment], rows: Int,
        to output: InteropOutput, base: Int
    ) throws(InteropError) -> ChunkInfo {
        let dataOffset = output.position - base
        var uncompressed = 0, compressed = 0
        var stats = ParquetStatistics(nullCount: 0)
        var page = 0
        while page < rows {
            let end = min(rows, page + pageRows)
            // The pieces of this page.
            var pagePieces: [Segment] = []
            var at = 0
            for p in pieces {
                let a = max(at, page), b = min(at + p.rows.count, end)
                if a < b {
                    pagePieces.append(Segment(ticker: p.ticker, rows: p.rows.lowerBound + (a - at) ..< p.rows.lowerBound + (b - at)))
                }
                at += p.rows.count
                if at >= end { break }
            }
            if compression == .none,
                let prefix = ParquetPageEncoder.directPrefix(column, pagePieces, rows: end - page, required: required, statistics: &stats)
            {
                // No nulls, no codec: the values go out straight from the column, piece by piece.
                let (storage, width) = SnapshotWriter.valueStorage(column)
                let length = prefix.count + (end - page) * width
                var h = ThriftCompactWriter()
                Self.dataPageHeader(&h, values: end - page, uncompressed: length, compressed: length, encoding: .plain)
                try output.write(h.bytes + prefix)
                for p in pagePieces {
                    // Safe: every piece's rows lie in the column, whose storage `storage` keeps alive.
                    try output.write(
                        UnsafeRawBufferPointer(
                            start: UnsafeRawPointer(storage.base) + p.rows.lowerBound * width,
                            count: p.rows.count * width))
                }
                withExtendedLifetime(storage) {}
                uncompressed += h.bytes.count + length
                compressed += h.bytes.count + length
            } else {
                let data = ParquetPageEncoder.encode(column, pagePieces, rows: end - page, required: required, statistics: &stats)
                let sizes = try writePage(
                    data,
                    header: { h, u, c in
                        Self.dataPageHeader(&h, values: end - page, uncompressed: u, compressed: c, encoding: .plain)
                    }, to: output)
                uncompressed += sizes.0
                compressed += sizes.1
            }
            page = end
        }
        let type: ParquetFormat.PhysicalType =
            switch column.elementType {
            case .int32: .int32
            case .int64: .int64
            case .float32: .float
            case .float64: .double
            }
        return ChunkInfo(
            type: type, encodings: required ? [.plain] : [.plain, .rle], path: name, valueCount: rows,
            uncompressedSize: uncompressed, compressedSize: compressed, dataPageOffset: dataOffset,
            dictionaryPageOffset: nil, statistics: stats)
    }

    // MARK: Footer

    func footerBytes(rowCount: Int, groups: [(rows: Int, chunks: [ChunkInfo], offset: Int)], tickerNumbers: [Int]) -> [UInt8] {
        var w = ThriftCompactWriter()
        w.structBegin(nil)
        w.i32(1, 2)
        // Schema: the root, then the leaves.
        w.listBegin(2, .structure, count: 3 + table.schema.count)
        w.structBegin(nil)
        w.string(4, "schema")
        w.i32(5, Int32(2 + table.schema.count))
        w.structEnd()
        w.structBegin(nil)
        w.i32(1, ParquetFormat.PhysicalType.byteArray.rawValue)
        w.i32(3, ParquetFormat.Repetition.required.rawValue)
        w.string(4, "ticker")
        w.i32(6, ParquetFormat.Converted.utf8)
        w.structBegin(10)
        w.structBegin(1)
        w.structEnd()
        w.structEnd()
        w.structEnd()
        w.structBegin(nil)
        w.i32(1, ParquetFormat.PhysicalType.int32.rawValue)
        w.i32(3, ParquetFormat.Repetition.required.rawValue)
        w.string(4, "date")
        w.i32(6, ParquetFormat.Converted.date)
        w.structBegin(10)
        w.structBegin(6)
        w.structEnd()
        w.structEnd()
        w.structEnd()
        for d in table.schema {
            let type: ParquetFormat.PhysicalType =
                switch d.type {
                case .int32: .int32
                case .int64: .int64
                case .float32: .float
                case .float64: .double
                }
            w.structBegin(nil)
            w.i32(1, type.rawValue)
            w.i32(3, ParquetFormat.Repetition.optional.rawValue)
            w.string(4, d.identifier)
            w.structEnd()
        }
        w.i64(3, Int64(rowCount))
        w.listBegin(4, .structure, count: groups.count)
        for (i, g) in groups.enumerated() {
            w.structBegin(nil)
            w.listBegin(1, .structure, count: g.chunks.count)
            for c in g.chunks {
                w.structBegin(nil)
                w.i64(2, Int64(c.dictionaryPageOffset ?? c.dataPageOffset))
                w.structBegin(3)
                w.i32(1, c.type.rawValue)
                w.i32List(2, c.encodings.map(\.rawValue))
                w.listBegin(3, .binary, count: 1)
                w.binaryElement(Array(c.path.utf8))
                w.i32(4, compression.codec.rawValue)
                w.i64(5, Int64(c.valueCount))
                w.i64(6, Int64(c.uncompressedSize))
                w.i64(7, Int64(c.compressedSize))
                w.i64(9, Int64(c.dataPageOffset))
                if let d = c.dictionaryPageOffset { w.i64(11, Int64(d)) }
                w.structBegin(12)
                w.i64(3, Int64(c.statistics.nullCount))
                if let max = c.statistics.max, let min = c.statistics.min {
                    w.binary(5, max)
                    w.binary(6, min)
                }
                w.structEnd()
                w.structEnd()
                w.structEnd()
            }
            w.i64(2, Int64(g.chunks.reduce(0) { $0 + $1.uncompressedSize }))
            w.i64(3, Int64(g.rows))
            // Sorted by ticker, then date.
            w.listBegin(4, .structure, count: 2)
            for column in 0 ..< 2 {
                w.structBegin(nil)
                w.i32(1, Int32(column))
                w.bool(2, false)
                w.bool(3, false)
                w.structEnd()
            }
            w.i64(5, Int64(g.offset))
            w.i64(6, Int64(g.chunks.reduce(0) { $0 + $1.compressedSize }))
            w.fieldHeader(7, .i16)
            w.zigzag(Int64(i))
            w.structEnd()
        }
        var metadata = table.metadata.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        metadata.append((InteropTableInfo.key, InteropTableInfo(table: table).encoded()))
        w.listBegin(5, .structure, count: metadata.count)
        for (k, v) in metadata {
            w.structBegin(nil)
            w.string(1, k)
            w.string(2, v)
            w.structEnd()
        }
        w.string(6, "colonnade version 1 (Swift)")
        w.listBegin(7, .structure, count: 2 + table.schema.count)
        for _ in 0 ..< 2 + table.schema.count {
            w.structBegin(nil)
            w.structBegin(1)
            w.structEnd()
            w.structEnd()
        }
        w.structEnd()
        return w.bytes
    }
}

/// Min, max (PLAIN-encoded) and null count of a column chunk.
struct ParquetStatistics {
    var nullCount: Int
    var min: [UInt8]?
    var max: [UInt8]?
}

/// Writes the column chunks of `ParquetWriter.writeChunksInParallel` in file order as threads
/// finish them: a chunk finished out of order waits in `pending` until every chunk before it is
/// written.
///
/// Safe to share between the writing threads: its fields are read and written under `lock` only.
private final class ChunkSequencer: @unchecked Sendable {
    typealias Finished = Result<(ParquetWriter.ChunkInfo, MemoryInteropOutput), InteropError>
    private let lock = Mutex<Void>(())
    private let columns: Int
    private var pending: [Finished?]
    private var next = 0
    private var failure: InteropError?
    private var groups: [(chunks: [ParquetWriter.ChunkInfo], offset: Int)] = []

    init(tasks: Int, columns: Int) {
        self.columns = columns
        pending = Array(repeating: nil, count: tasks)
    }

    /// Whether a chunk failed: the chunks not yet begun are skipped.
    var failed: Bool { lock.withLock { _ in failure != nil } }

    /// Takes chunk `task`'s result and writes every finished chunk next in the file to `output`
    /// (offsets from `base`); `groupWritten(g, bytes)` after the last chunk of group `g`.
    func finished(_ task: Int, _ result: Finished, output: InteropOutput, base: Int, groupWritten: (Int, Int) -> Void) {
        lock.withLock { _ in
            pending[task] = result
            while failure == nil, next < pending.count, let done = pending[next] {
                pending[next] = nil
                do throws(InteropError) {
                    var (chunk, buffer) = try done.get()
                    let at = output.position - base
                    if next % columns == 0 { groups.append(([], at)) }
                    chunk.dataPageOffset += at
                    chunk.dictionaryPageOffset = chunk.dictionaryPageOffset.map { $0 + at }
                    try output.write(buffer.bytes)
                    groups[groups.count - 1].chunks.append(chunk)
                    if next % columns == columns - 1 {
                        groupWritten(groups.count - 1, output.position - base - groups[groups.count - 1].offset)
                    }
                    next += 1
                } catch {
                    failure = error
                }
            }
        }
    }

    /// Every group's chunks and offset, or the first failure; called once every thread has
    /// returned (`forEachChunk` joins them), so without the lock.
    func result() throws(InteropError) -> [(chunks: [ParquetWriter.ChunkInfo], offset: Int)] {
        if let failure { throw failure }
        return groups
    }
}
