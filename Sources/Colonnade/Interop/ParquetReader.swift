import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Reads Parquet files (as pyarrow, Polars, DuckDB and Colonnade write them) into a table.
///
///     let table = try ParquetReader.read(bytes, file: "quotes.parquet")
///
/// Columns map by name: `ticker`/`symbol` (byte array), `date` (INT32 DATE, INT64 TIMESTAMP of
/// any unit or INT96: its day as written, which for `isAdjustedToUTC` is the UTC day), and numeric
/// value columns (INT32, INT64, FLOAT, DOUBLE; unsigned 32-bit integers widen to int64; FLOAT16 to
/// float32; DECIMAL on INT32, INT64, FIXED_LEN_BYTE_ARRAY and BYTE_ARRAY to Float64 correctly
/// rounded, or Int64 for scale 0 and precision ≤ 18). Other columns, nested ones too, are skipped
/// with a note. Pages may be PLAIN, dictionary, delta or split encoded (v1 or v2 data pages),
/// uncompressed, Snappy, GZIP, LZ4_RAW, the deprecated LZ4 (Hadoop's framing or one raw block) or
/// ZSTD; other codecs throw `InteropError.unsupportedCodec` naming the codec.
///
/// Every offset, length and count is checked against the input before use; malformed input
/// throws `InteropError` with the byte offset, never traps. The entry point is a function of
/// bytes, so a fuzzer can call it directly.
public enum ParquetReader {
    /// Decodes `bytes` (a whole Parquet file).
    /// - Parameters:
    ///   - bytes: the whole input, in memory.
    ///   - file: names the input in errors.
    ///   - ticker: the symbol of every row when the file has no ticker column.
    ///   - threads: how many threads decode column chunks at once (the table is the same for
    ///     any count).
    public static func read(
        _ bytes: UnsafeRawBufferPointer, file: String, ticker: String? = nil, threads: Int = 1
    ) throws(InteropError) -> QuoteTable {
        try columns(bytes, file: file, ticker: ticker, threads: threads).assemble()
    }

    static func columns(
        _ bytes: UnsafeRawBufferPointer, file: String, ticker: String?, strict: Bool = false, threads: Int = 1
    ) throws(InteropError) -> ImportedColumns {
        var decoder = try ParquetDecoder(bytes: bytes, file: file, defaultTicker: ticker, strict: strict)
        try decoder.decodeRowGroups(threads: threads)
        return try decoder.finish()
    }
}

/// The state of one Parquet decode.
struct ParquetDecoder {
    let bytes: UnsafeRawBufferPointer
    let file: String
    let defaultTicker: String?
    let metadata: [Int16: ThriftValue]
    /// Where the Thrift footer starts.
    let footerStart: Int
    var leaves: [ParquetLeaf] = []
    let totalRows: Int
    var interner = InteropValues.SymbolInterner()
    /// The ticker number (into `interner`'s symbols) of each row.
    var rowTickers: ColumnStorage
    var dates: ColumnStorage
    var storages: [ColumnStorage?]
    var validity: [Bitmask?]
    var keyValues: [String: String] = [:]
    var info: InteropTableInfo?

    /// Columns that are not quotes, left out.
    var skipped: [InteropSkippedColumn] = []
    /// The note for a date column holding times of day other than midnight (its first such row).
    var timeOfDay: InteropSkippedColumn?

    init(bytes: UnsafeRawBufferPointer, file: String, defaultTicker: String?, strict: Bool = false) throws(InteropError) {
        self.bytes = bytes
        self.file = file
        self.defaultTicker = defaultTicker
        let n = bytes.count
        let magic = ParquetFormat.magic
        guard n >= 12, bytes.prefix(4).elementsEqual(magic) else {
            if n < 12 { throw .truncated(file: file, offset: n, needed: 12 - n) }
            throw .unrecognizedFormat(file: file)
        }
        guard bytes.suffix(4).elementsEqual(magic) else {
            throw .malformed(file: file, offset: n - 4, detail: "no PAR1 at the end (a truncated or unfinished Parquet file)")
        }
        let footerLength = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: n - 8, as: UInt32.self)))
        footerStart = n - 8 - footerLength
        guard footerStart >= 4 else {
            throw .malformed(file: file, offset: n - 8, detail: "Parquet footer length \(footerLength) in a file of \(n) bytes")
        }
        var reader = ThriftCompactReader(
            UnsafeRawBufferPointer(rebasing: bytes[footerStart ..< n - 8]), file: file, fileOffset: footerStart)
        metadata = try reader.readStruct()
        guard let schema = metadata[2]?.list, let rows = metadata[3]?.int, rows >= 0, metadata[4]?.list != nil else {
            throw .malformed(file: file, offset: footerStart, detail: "Parquet footer without schema, row count or row groups")
        }
        totalRows = Int(clamping: rows)
        // The row count must be believable before anything is allocated for it.
        guard totalRows <= n * 8 + 1024 else {
            throw .malformed(file: file, offset: footerStart, detail: "Parquet footer claims \(rows) rows in \(n) bytes")
        }
        // The schema is a tree written depth first; a group's leaves are nested columns (lists,
        // structs, maps): skipped like other columns that are not quotes (refused when strict).
        var groups: [(name: String, remaining: Int)] = []
        for (i, e) in schema.enumerated() {
            guard let fields = e.fields else {
                throw .malformed(file: file, offset: footerStart, detail: "Parquet schema element \(i) is not a struct")
            }
            if i == 0 { continue }
            let name = fields[4]?.string ?? "#\(i)"
            let enclosing = groups.last?.name
            if !groups.isEmpty { groups[groups.count - 1].remaining -= 1 }
            while let last = groups.last, last.remaining <= 0 { groups.removeLast() }
            if let children = fields[5]?.int, children > 0 {
                if strict { throw .unsupportedColumn(file: file, column: name, type: "a nested group (Colonnade reads flat columns)") }
                guard children <= Int64(schema.count) else {
                    throw .malformed(file: file, offset: footerStart, detail: "Parquet group '\(name)' claims \(children) children")
                }
                groups.append(((enclosing.map { $0 + "." } ?? "") + name, Int(children)))
                continue
            }
            leaves.append(try ParquetLeaf.make(fields, file: file, strict: strict, nestedIn: enclosing))
        }
        for leaf in leaves {
            if case .skipped(let type) = leaf.role { skipped.append(InteropSkippedColumn(file: file, column: leaf.name, type: type)) }
        }
        for kv in metadata[5]?.list ?? [] {
            guard let f = kv.fields, let key = f[1]?.string else { continue }
            let value = f[2]?.string ?? ""
            if key == InteropTableInfo.key { info = InteropTableInfo(decoding: value) }
            if !ImportedColumns.isToolKey(key) { keyValues[key] = value }
        }
        // Before anything is allocated per column: a footer may list a million leaves.
        let valueLeaves = leaves.count {
            if case .value = $0.role { return true }
            return false
        }
        if valueLeaves > QuoteTable.maximumColumnCount {
            throw .table(file: file, .tooManyColumns(count: valueLeaves, limit: QuoteTable.maximumColumnCount))
        }
        let names = leaves.map(\.name)
        let tickers = leaves.filter {
            if case .ticker = $0.role { return true }
            return false
        }
        let datesFound = leaves.filter {
            if case .date = $0.role { return true }
            return false
        }
        if datesFound.isEmpty { throw .missingColumn(file: file, column: "date", available: names) }
        if datesFound.count > 1 { throw .unsupportedColumn(file: file, column: datesFound[1].name, type: "a second date column") }
        if tickers.isEmpty && defaultTicker == nil { throw .missingColumn(file: file, column: "ticker (or symbol)", available: names) }
        if tickers.count > 1 { throw .unsupportedColumn(file: file, column: tickers[1].name, type: "a second ticker column") }
        // Up to 8 bytes per value for 8 rows per byte of file: a hostile footer can still ask for
        // more than there is, which is an error naming the file, not a stop. Not zeroed first
        // when the memory is reused: the decode writes every row (a null as zeros, in
        // `decodeValues`), or fails and the columns are thrown away.
        func storage(_ byteCount: Int, overwritten: Bool = true) throws(InteropError) -> ColumnStorage {
            guard let storage = ColumnStorage(reusableByteCount: byteCount, overwritten: overwritten) else {
                throw .io(file: file, operation: "allocate", errno: ENOMEM)
            }
            return storage
        }
        dates = try storage(totalRows * 4)
        var storages: [ColumnStorage?] = []
        for leaf in leaves {
            if case .value = leaf.role { storages.append(try storage(totalRows * leaf.width)) } else { storages.append(nil) }
        }
        self.storages = storages
        // Without a ticker column nothing writes the tickers (every row is `defaultTicker`'s).
        rowTickers = try storage(totalRows * 4, overwritten: !tickers.isEmpty)
        validity = leaves.map { _ in nil }
    }

    func bad(_ offset: Int, _ detail: String) -> InteropError { .malformed(file: file, offset: offset, detail: detail) }

    // MARK: Row groups and pages

    /// One column chunk to decode: rows `at ..< at + rows` of leaf `leaf`, from row group `group`.
    struct ChunkTask {
        var group: Int
        var leaf: Int
        var meta: [Int16: ThriftValue]
        var metaOffset: Int
        var rows: Int
        var at: Int
    }

    /// What decoding one column chunk changes besides the rows it writes (chunks write disjoint
    /// rows, so any number decode at once, each with its own state).
    struct ChunkState {
        /// Ticker chunks only (decoded in order on one thread): the file's symbols.
        var interner = InteropValues.SymbolInterner()
        /// The chunk's rows that hold a value (bit i: row `firstRow + i`); nil while all do.
        var validity: Bitmask?
        let firstRow: Int
        let rows: Int
        /// The first time of day other than midnight in a date chunk.
        var timeOfDay: InteropSkippedColumn?
        /// Where compressed pages are decompressed, reused from page to page.
        let pageBuffer: ParquetPageBuffer
        var failure: InteropError?
        /// The first row of a value column whose bytes this decode may borrow for a moment
        /// (`decodePlainPageInPlace`): when other threads decode other chunks of the column, the
        /// chunk's own rows and those of the chunk before it once that one is done; any row when
        /// one thread decodes them all.
        var borrowableFrom = Int.max
    }

    /// Decodes every row group: the ticker chunks first, in order, on this thread (they share the
    /// symbol table), then the other chunks on up to `threads` threads, each with its own page
    /// buffer. Whatever the thread count, the columns are the same and an error is the one the
    /// first failing chunk (in row group, then column order) gives.
    mutating func decodeRowGroups(threads: Int = 1) throws(InteropError) {
        var at = 0
        var tasks: [ChunkTask] = []
        for (g, group) in (metadata[4]?.list ?? []).enumerated() {
            let groupOffset = group.offset ?? footerStart
            guard let gf = group.fields, let columns = gf[1]?.list, let rows = gf[3]?.int, rows >= 0 else {
                throw bad(groupOffset, "Parquet row group \(g) without columns or row count")
            }
            guard columns.count == leaves.count else {
                throw bad(groupOffset, "Parquet row group \(g) has \(columns.count) column chunks for \(leaves.count) columns")
            }
            guard Int(clamping: rows) <= totalRows - at else {
                throw bad(groupOffset, "Parquet row groups hold more rows than the footer's \(totalRows)")
            }
            for (c, chunk) in columns.enumerated() {
                guard let metaValue = chunk.fields?[3], let meta = metaValue.fields else {
                    throw bad(chunk.offset ?? groupOffset, "Parquet column chunk \(c) of row group \(g) without metadata")
                }
                if leaves[c].isSkipped { continue }
                tasks.append(
                    ChunkTask(group: g, leaf: c, meta: meta, metaOffset: metaValue.offset ?? groupOffset, rows: Int(rows), at: at))
            }
            at += Int(rows)
        }
        if at != totalRows { throw bad(footerStart, "Parquet row groups hold \(at) rows, the footer says \(totalRows)") }
        let isTicker = tasks.map {
            if case .ticker = leaves[$0.leaf].role { return true }
            return false
        }
        let buffer = ParquetPageBuffer()
        var tickerState = ChunkState(firstRow: 0, rows: totalRows, pageBuffer: buffer)
        tickerState.interner = interner
        for (i, task) in tasks.enumerated() where isTicker[i] { try decodeChunk(task, state: &tickerState) }
        interner = tickerState.interner
        let rest = tasks.indices.filter { !isTicker[$0] }
        let workers = Swift.max(1, Swift.min(threads, rest.count))
        let buffers = [buffer] + (1 ..< workers).map { _ in ParquetPageBuffer() }
        let results = UnsafeMutablePointer<ChunkState?>.allocate(capacity: rest.count)
        results.initialize(repeating: nil, count: rest.count)
        defer {
            results.deinitialize(count: rest.count)
            results.deallocate()
        }
        let shared = SharedPointer(base: results)
        let firstFailure = ChunkFailure()
        // The chunk of the same column just before each (its rows end where this one's begin),
        // and which chunks are done: a chunk may borrow the rows of the one before it
        // (`decodePlainPageInPlace`) once no other thread writes them.
        var before = [Int](repeating: -1, count: rest.count)
        var lastOfLeaf = [Int: Int]()
        for (n, t) in rest.enumerated() {
            let task = tasks[t]
            if let p = lastOfLeaf[task.leaf], tasks[rest[p]].at + tasks[rest[p]].rows == task.at { before[n] = p }
            lastOfLeaf[task.leaf] = n
        }
        let finished = workers == 1 ? [] : (0 ..< rest.count).map { _ in ChunkDone() }
        let decoder = self
        forEachChunk(rest.count, threads: workers) { n, worker in
            // A chunk after one that failed is not needed: the first failure is the error.
            if n > firstFailure.index.load(ordering: .relaxed) { return }
            let task = tasks[rest[n]]
            var state = ChunkState(firstRow: task.at, rows: task.rows, pageBuffer: buffers[worker])
            if workers == 1 {
                state.borrowableFrom = 0
            } else if before[n] >= 0, finished[before[n]].done.load(ordering: .acquiring) {
                state.borrowableFrom = tasks[rest[before[n]]].at
            } else {
                state.borrowableFrom = task.at
            }
            do throws(InteropError) {
                try decoder.decodeChunk(task, state: &state)
            } catch {
                state.failure = error
                firstFailure.index.min(n, ordering: .relaxed)
            }
            shared.base[n] = state
            if workers > 1 { finished[n].done.store(true, ordering: .releasing) }
        }
        for n in 0 ..< rest.count {
            guard let state = results[n] else { continue }
            if let failure = state.failure { throw failure }
            let c = tasks[rest[n]].leaf
            if let local = state.validity {
                // Taken out of the array while it changes, so the bits are not copied.
                var mask = validity[c] ?? Bitmask(count: totalRows, allSet: true)
                validity[c] = nil
                for i in 0 ..< state.rows where !local[i] { mask[state.firstRow + i] = false }
                validity[c] = mask
            }
            if timeOfDay == nil, let note = state.timeOfDay { timeOfDay = note }
        }
    }

    /// The decoded dictionary of a chunk: raw PLAIN values, or numbers of interned symbols.
    enum Dictionary {
        case values([UInt8], count: Int)
        case symbols([Int32])
    }

    func decodeChunk(_ task: ChunkTask, state: inout ChunkState) throws(InteropError) {
        let meta = task.meta, c = task.leaf, rows = task.rows, at = task.at, metaOffset = task.metaOffset, group = task.group
        let leaf = leaves[c]
        if leaf.isSkipped { return }
        let codec = meta[4] == nil ? 0 : meta[4]?.int32 ?? -1
        guard Self.readableCodecs.contains(codec) else {
            throw .unsupportedCodec(file: file, codec: ParquetFormat.codecName(codec) + " (Parquet column '\(leaf.name)')")
        }
        if let type = meta[1]?.int, type != Int64(leaf.physical.rawValue) {
            throw bad(metaOffset, "Parquet column chunk of '\(leaf.name)' has type \(type), the schema says \(leaf.physical.rawValue)")
        }
        let dataOffset = Int(clamping: meta[9]?.int ?? -1)
        var start = dataOffset
        if let d = meta[11]?.int, d > 0, Int(clamping: d) < start { start = Int(clamping: d) }
        guard start >= 4, start < bytes.count else {
            throw bad(metaOffset, "Parquet column chunk of '\(leaf.name)' starts at \(start), outside the file")
        }
        var position = start
        var done = 0
        var dictionary: Dictionary?
        var pageIndex = -1
        while done < rows {
            pageIndex += 1
            guard position < bytes.count - 8 else { throw .truncated(file: file, offset: position, needed: 1) }
            var reader = ThriftCompactReader(
                UnsafeRawBufferPointer(rebasing: bytes[position ..< bytes.count]), file: file, fileOffset: position)
            let header = try reader.readStruct()
            let bodyStart = position + reader.position
            guard let type = header[1]?.int, let uncompressed = header[2]?.int, let compressed = header[3]?.int,
                uncompressed >= 0, compressed >= 0, uncompressed < Int64(Int32.max)
            else {
                throw bad(position, "Parquet page header without type or sizes")
            }
            guard compressed <= Int64(bytes.count - bodyStart) else {
                throw .truncated(file: file, offset: bodyStart, needed: Int(compressed))
            }
            let body = UnsafeRawBufferPointer(rebasing: bytes[bodyStart ..< bodyStart + Int(compressed)])
            position = bodyStart + Int(compressed)
            do throws(InteropError) {
                switch Int32(truncatingIfNeeded: type) {
                case ParquetFormat.PageType.dictionaryPage.rawValue:
                    let count = Int(clamping: header[7]?.fields?[1]?.int ?? -1)
                    guard count >= 0, count <= Int(uncompressed) + 1 else {
                        throw bad(bodyStart, "Parquet dictionary page of \(count) values")
                    }
                    let data = try decompress(body, codec: codec, length: Int(uncompressed), at: bodyStart)
                    dictionary = try withInteropBytes(data) { d throws(InteropError) in
                        try decodeDictionary(d, count: count, leaf: leaf, at: bodyStart, interner: &state.interner)
                    }
                case ParquetFormat.PageType.dataPage.rawValue:
                    guard let h = header[5]?.fields, let n64 = h[1]?.int, let encoding = h[2]?.int32, n64 >= 0, n64 <= Int64(rows - done)
                    else {
                        throw bad(bodyStart, "Parquet data page header without values and encoding, or with too many values")
                    }
                    let n = Int(n64)
                    if codec == ParquetFormat.Codec.zstd.rawValue && encoding == ParquetFormat.Encoding.plain.rawValue,
                        try decodePlainPageInPlace(
                            body, length: Int(uncompressed), count: n, leaf: c, row: at + done, at: bodyStart,
                            borrowableFrom: state.borrowableFrom)
                    {
                        done += n
                        continue
                    }
                    try withPage(body, codec: codec, length: Int(uncompressed), at: bodyStart, buffer: state.pageBuffer) {
                        d throws(InteropError) in
                        var levels = UnsafeRawBufferPointer(rebasing: d[0 ..< 0])
                        var valuesStart = 0
                        if leaf.optional {
                            guard d.count >= 4 else { throw .truncated(file: file, offset: bodyStart, needed: 4) }
                            let len = Int(UInt32(littleEndian: d.loadUnaligned(as: UInt32.self)))
                            guard len <= d.count - 4 else { throw .truncated(file: file, offset: bodyStart + 4, needed: len) }
                            levels = UnsafeRawBufferPointer(rebasing: d[4 ..< 4 + len])
                            valuesStart = 4 + len
                        }
                        try decodeValues(
                            levels: levels, values: UnsafeRawBufferPointer(rebasing: d[valuesStart...]), count: n,
                            encoding: encoding, dictionary: dictionary, leaf: c, row: at + done, fileOffset: bodyStart, state: &state)
                    }
                    done += n
                case ParquetFormat.PageType.dataPageV2.rawValue:
                    guard let h = header[8]?.fields, let n64 = h[1]?.int, let encoding = h[4]?.int32, n64 >= 0, n64 <= Int64(rows - done),
                        let defLength = h[5]?.int, let repLength = h[6]?.int, defLength >= 0, repLength == 0, defLength <= compressed,
                        defLength <= uncompressed
                    else {
                        throw bad(bodyStart, "Parquet v2 data page header without values, encoding or level lengths, or with repetition")
                    }
                    let n = Int(n64)
                    let levels = UnsafeRawBufferPointer(rebasing: body[0 ..< Int(defLength)])
                    let rest = UnsafeRawBufferPointer(rebasing: body[Int(defLength)...])
                    let isCompressed = h[7]?.bool ?? true
                    try withPage(
                        rest, codec: isCompressed ? codec : 0, length: isCompressed ? Int(uncompressed) - Int(defLength) : rest.count,
                        at: bodyStart + Int(defLength), buffer: state.pageBuffer
                    ) { d throws(InteropError) in
                        try decodeValues(
                            levels: leaf.optional ? levels : UnsafeRawBufferPointer(rebasing: levels[0 ..< 0]), values: d, count: n,
                            encoding: encoding, dictionary: dictionary, leaf: c, row: at + done, fileOffset: bodyStart, v2: true,
                            state: &state)
                    }
                    done += n
                default:
                    continue  // index pages and unknown pages carry no values
                }
            } catch {
                throw pageError(error, page: bodyStart ..< position, codec: codec, column: leaf.name, group: group, index: pageIndex)
            }
        }
    }

    /// An error inside a page, with an offset in the file and where it is: the column, row group
    /// and page (counted from 0 in the column chunk, the dictionary page first). Offsets into a
    /// decompressed page (which are not file offsets) become the page's start, with the position
    /// in the page in the text.
    func pageError(_ error: InteropError, page: Range<Int>, codec: Int32, column: String, group: Int = 0, index: Int = 0) -> InteropError {
        let compressed = codec != 0
        let codecName = codec == 1 ? "Snappy" : ParquetFormat.codecName(codec)
        let offset: Int, detail: String
        switch error {
        case let .truncated(_, o, needed): (offset, detail) = (o, "needs \(needed) bytes past the end of its data")
        case let .malformed(_, o, d): (offset, detail) = (o, d)
        default: return error
        }
        let place = "column '\(column)', row group \(group), page \(index)"
        // Offsets of uncompressed pages and of the codecs' own errors are file offsets already.
        if page.contains(offset) && (!compressed || Self.codecPrefixes.contains(where: detail.hasPrefix)) {
            return .malformed(file: file, offset: offset, detail: "\(place): \(detail)")
        }
        let where_ = compressed ? "byte \(offset - page.lowerBound) of the decompressed page" : "the page"
        return .malformed(
            file: file, offset: page.lowerBound,
            detail: "\(place) (\(compressed ? codecName + "-compressed, " : "")\(page.count) bytes), at \(where_): \(detail)")
    }

    /// UNCOMPRESSED, SNAPPY, GZIP, LZ4 (Hadoop's framing, or one raw block), ZSTD, LZ4_RAW.
    static let readableCodecs: Set<Int32> = [0, 1, 2, 5, 6, 7]
    /// How the codecs' own errors begin (their offsets are file offsets).
    static let codecPrefixes = ["Snappy", "LZ4", "gzip", "ZSTD"]

    func decompress(_ body: UnsafeRawBufferPointer, codec: Int32, length: Int, at offset: Int) throws(InteropError) -> [UInt8] {
        switch codec {
        case 0:
            guard body.count == length else { throw bad(offset, "uncompressed Parquet page of \(body.count) bytes, header says \(length)") }
            return Array(body)
        case 1:
            return try Snappy.decompress(body, file: file, fileOffset: offset, expectedLength: length)
        case 6:
            return try Self.zstd(body, length: length, file: file, offset: offset)
        default:
            do throws(CodecError) {
                switch codec {
                case 2: return try Gzip.decompress(body, maximumOutputSize: length, expectedSize: length)
                case 5: return try LZ4.decompressHadoop(body, expectedSize: length)
                default: return try LZ4.decompressBlock(body, expectedSize: length)
                }
            } catch {
                throw .malformed(file: file, offset: offset + (error.offset ?? 0), detail: error.description)
            }
        }
    }

    /// Calls `use` with the decompressed page: a ZSTD page decompressed into `pageBuffer` (the
    /// memory of the page before it, so a file's pages do not each allocate, fault in and free
    /// fresh memory), any other by `decompress`.
    func withPage<R>(
        _ body: UnsafeRawBufferPointer, codec: Int32, length: Int, at offset: Int, buffer pageBuffer: ParquetPageBuffer,
        _ use: (UnsafeRawBufferPointer) throws(InteropError) -> R
    ) throws(InteropError) -> R {
        switch codec {
        case 0:
            guard body.count == length else { throw bad(offset, "uncompressed Parquet page of \(body.count) bytes, header says \(length)") }
            return try use(body)
        case 1:
            let out = pageBuffer.reserve(length)
            try Snappy.decompress(body, file: file, fileOffset: offset, expectedLength: length, into: out, slack: ParquetPageBuffer.slack)
            return try use(UnsafeRawBufferPointer(out))
        case 6: break
        default: return try withInteropBytes(try decompress(body, codec: codec, length: length, at: offset), use)
        }
        guard length <= body.count.multipliedReportingOverflow(by: 1 << 15).partialValue + 4096 else {
            throw .malformed(file: file, offset: offset, detail: "ZSTD: \(body.count) bytes cannot hold the \(length) the page header says")
        }
        let out = pageBuffer.reserve(length)
        do throws(ZstdError) {
            let n = try Zstd.decompress(body, into: out)
            guard n == length else { throw .sizeMismatch(expected: length, actual: n) }
        } catch {
            throw .malformed(file: file, offset: offset + (error.offset ?? 0), detail: "ZSTD: \(error.reason)")
        }
        return try use(UnsafeRawBufferPointer(out))
    }

    /// Decodes a v1 data page of PLAIN values without nulls, ZSTD-compressed, by decompressing it
    /// straight into its rows of the value column (no page buffer, no copy): the page's level
    /// bytes (at most 64) land just before the page's first row, over earlier rows of the column
    /// (at or after `borrowableFrom`), which are kept and put back whatever happens.
    /// - Returns: false, having changed nothing, when the page is not such a page (a ticker, date
    ///   or converted column, levels longer than 64 bytes or not one run of present values, no
    ///   room before the row): the caller decodes it the ordinary way.
    /// - Throws: the page's ZSTD error, as `withPage` gives it.
    func decodePlainPageInPlace(
        _ body: UnsafeRawBufferPointer, length: Int, count n: Int, leaf c: Int, row: Int, at offset: Int, borrowableFrom: Int
    ) throws(InteropError) -> Bool {
        let leaf = leaves[c]
        guard case .value = leaf.role, leaf.conversion == nil, let storage = storages[c] else { return false }
        let width = leaf.width
        let (valueBytes, overflow) = n.multipliedReportingOverflow(by: width)
        guard !overflow, valueBytes <= length else { return false }
        let prefix = length - valueBytes
        guard leaf.optional ? (prefix >= 6 && prefix <= 64) : prefix == 0 else { return false }
        guard row >= borrowableFrom, (row - borrowableFrom) * width >= prefix else { return false }
        guard length <= body.count.multipliedReportingOverflow(by: 1 << 15).partialValue + 4096 else {
            throw .malformed(file: file, offset: offset, detail: "ZSTD: \(body.count) bytes cannot hold the \(length) the page header says")
        }
        // Safe: rows row ..< row + n lie within the storage (row groups checked against totalRows),
        // and the prefix bytes before them are rows at or after `borrowableFrom`.
        let destination = storage.base + row * width - prefix
        var kept: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &kept) { $0.baseAddress!.copyMemory(from: destination, byteCount: prefix) }
        defer { withUnsafeBytes(of: kept) { destination.copyMemory(from: $0.baseAddress!, byteCount: prefix) } }
        do throws(ZstdError) {
            let written = try Zstd.decompress(body, into: UnsafeMutableRawBufferPointer(start: destination, count: length))
            guard written == length else { throw .sizeMismatch(expected: length, actual: written) }
        } catch {
            throw .malformed(file: file, offset: offset + (error.offset ?? 0), detail: "ZSTD: \(error.reason)")
        }
        if prefix > 0 {
            // The levels: their 4-byte length, then one run of `n` present values.
            let levelsLength = Int(UInt32(littleEndian: destination.loadUnaligned(as: UInt32.self)))
            let levels = UnsafeRawBufferPointer(start: destination + 4, count: prefix - 4)
            guard levelsLength == prefix - 4,
                RLEHybridDecoder(levels, bitWidth: 1, file: file, fileOffset: offset).startsWithRun(of: 1, count: n)
            else {
                // Not for this path after all: the rows are zero again, as the ordinary path expects.
                (storage.base + row * width).initializeMemory(as: UInt8.self, repeating: 0, count: valueBytes)
                return false
            }
        }
        return true
    }

    /// A ZSTD page or buffer of `length` bytes: the length is checked against the most the
    /// format can expand (a 3-byte RLE block header per 128 KiB) before it is allocated.
    static func zstd(_ body: UnsafeRawBufferPointer, length: Int, file: String, offset: Int) throws(InteropError) -> [UInt8] {
        guard length <= body.count.multipliedReportingOverflow(by: 1 << 15).partialValue + 4096 else {
            throw .malformed(file: file, offset: offset, detail: "ZSTD: \(body.count) bytes cannot hold the \(length) the page header says")
        }
        do throws(ZstdError) {
            return try Zstd.decompress(body, maximumOutputSize: length, expectedSize: length)
        } catch {
            throw .malformed(file: file, offset: offset + (error.offset ?? 0), detail: "ZSTD: \(error.reason)")
        }
    }

    func decodeDictionary(
        _ d: UnsafeRawBufferPointer, count: Int, leaf: ParquetLeaf, at offset: Int,
        interner: inout InteropValues.SymbolInterner
    ) throws(InteropError) -> Dictionary {
        if case .ticker = leaf.role {
            var numbers: [Int32] = []
            numbers.reserveCapacity(count)
            var p = 0
            for _ in 0 ..< count {
                guard p + 4 <= d.count else { throw .truncated(file: file, offset: offset + p, needed: 4) }
                let len = Int(UInt32(littleEndian: d.loadUnaligned(fromByteOffset: p, as: UInt32.self)))
                guard len <= d.count - p - 4 else { throw .truncated(file: file, offset: offset + p + 4, needed: len) }
                numbers.append(interner.number(UnsafeRawBufferPointer(rebasing: d[p + 4 ..< p + 4 + len])))
                p += 4 + len
            }
            return .symbols(numbers)
        }
        if leaf.conversion != nil {
            return .values(
                try convert(d, count: count, prefixed: leaf.physical == .byteArray, leaf: leaf, fileOffset: offset, row: nil), count: count)
        }
        guard leaf.width > 0, count * leaf.width <= d.count else {
            throw .truncated(file: file, offset: offset, needed: count * leaf.width)
        }
        return .values(Array(d.prefix(count * leaf.width)), count: count)
    }

    /// `count` FIXED_LEN_BYTE_ARRAY or BYTE_ARRAY values (`prefixed`: each after its 4-byte
    /// little-endian length) as the leaf's numbers (`ParquetLeaf.Conversion`), `leaf.width` bytes
    /// each. `row` is the file's row of the first value (nil in a dictionary), for errors.
    func convert(
        _ values: UnsafeRawBufferPointer, count: Int, prefixed: Bool, leaf: ParquetLeaf, fileOffset: Int,
        row: Int?
    ) throws(InteropError) -> [UInt8] {
        guard let conversion = leaf.conversion else { return [] }
        let fixed = leaf.sourceWidth
        if !prefixed {
            let (needed, overflow) = count.multipliedReportingOverflow(by: fixed)
            guard !overflow, needed <= values.count else {
                throw .truncated(file: file, offset: fileOffset, needed: overflow ? Int.max : needed)
            }
        }
        let width = leaf.width
        var out = [UInt8](repeating: 0, count: count * width)
        var p = 0
        var failure: InteropError?
        out.withUnsafeMutableBytes { o in
            do throws(InteropError) {
                for i in 0 ..< count {
                    var length = fixed
                    if prefixed {
                        guard p + 4 <= values.count else { throw .truncated(file: file, offset: fileOffset + p, needed: 4) }
                        length = Int(UInt32(littleEndian: values.loadUnaligned(fromByteOffset: p, as: UInt32.self)))
                        p += 4
                        guard length <= values.count - p else { throw .truncated(file: file, offset: fileOffset + p, needed: length) }
                        if leaf.physical == .fixedLenByteArray && length != fixed {
                            throw bad(fileOffset + p, "a value of \(length) bytes in '\(leaf.name)', a FIXED_LEN_BYTE_ARRAY(\(fixed))")
                        }
                    }
                    let bytes = UnsafeRawBufferPointer(rebasing: values[p ..< p + length])
                    p += length
                    let at = row.map { "row \($0 + i)" } ?? "dictionary entry \(i)"
                    switch conversion {
                    case .float16:
                        // Safe: a FLOAT16 leaf's values are 2 bytes (checked by ParquetLeaf).
                        let half = Float16(bitPattern: UInt16(bytes[0]) | UInt16(bytes[1]) << 8)
                        o.storeBytes(of: Float(half), toByteOffset: 4 * i, as: Float.self)
                    case let .decimal(scale, integer):
                        guard length <= InteropDecimal.maximumByteCount else {
                            throw bad(
                                fileOffset + p - length,
                                "a DECIMAL of \(length) bytes in '\(leaf.name)' (\(at); Colonnade reads up to \(InteropDecimal.maximumByteCount))"
                            )
                        }
                        if integer {
                            guard let v = InteropDecimal.int64(bytes, bigEndian: true) else {
                                throw bad(
                                    fileOffset + p - length,
                                    "a DECIMAL in '\(leaf.name)' (\(at)) wider than its precision of at most 18 digits")
                            }
                            o.storeBytes(of: v, toByteOffset: 8 * i, as: Int64.self)
                        } else {
                            o.storeBytes(
                                of: InteropDecimal.double(bytes, bigEndian: true, scale: scale), toByteOffset: 8 * i, as: Double.self)
                        }
                    }
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return out
    }

    /// Decodes one page's `count` rows into rows `row ..< row + count` of leaf `c`.
    func decodeValues(
        levels: UnsafeRawBufferPointer, values: UnsafeRawBufferPointer, count n: Int, encoding: Int32,
        dictionary: Dictionary?, leaf c: Int, row: Int, fileOffset: Int, v2: Bool = false, state: inout ChunkState
    ) throws(InteropError) {
        let leaf = leaves[c]
        // Definition levels: nil when every row holds a value.
        var defined: [UInt32]?
        if leaf.optional {
            let decoder = RLEHybridDecoder(levels, bitWidth: 1, file: file, fileOffset: fileOffset)
            if !decoder.startsWithRun(of: 1, count: n) {
                var levelsOut = [UInt32](repeating: 0, count: n)
                var d = decoder
                try levelsOut.withUnsafeMutableBufferPointer { p throws(InteropError) in try d.decode(count: n, into: p.baseAddress!) }
                defined = levelsOut
            }
        }
        if let defined, let i = defined.firstIndex(where: { $0 > 1 }) {
            throw bad(
                fileOffset, "Parquet definition level \(defined[i]) in row \(row + i) of '\(leaf.name)' (a flat column has levels 0 and 1)")
        }
        let k = defined.map { $0.reduce(0) { $0 + Int($1) } } ?? n
        if let defined, k < n {
            switch leaf.role {
            case .skipped:
                return
            case .ticker, .date:
                let r = defined.firstIndex(of: 0) ?? 0
                throw .nullKey(file: file, column: leaf.name, row: row + r)
            case .value:
                // Taken out of the array while it changes, so the bits are not copied.
                var mask = state.validity ?? Bitmask(count: state.rows, allSet: true)
                state.validity = nil
                for (i, v) in defined.enumerated() where v == 0 { mask[row - state.firstRow + i] = false }
                state.validity = mask
            }
        }
        // The k present values, as indices into the dictionary or as PLAIN bytes (the delta and
        // split encodings are turned into PLAIN bytes first, held until this returns).
        var indices: [UInt32]?
        var values = values
        var transcoded: UnsafeMutableRawBufferPointer?
        defer { transcoded?.deallocate() }
        switch ParquetFormat.Encoding(rawValue: encoding) {
        case .plain?:
            break
        case let split? where [.deltaBinaryPacked, .deltaLengthByteArray, .deltaByteArray, .byteStreamSplit].contains(split):
            let width = leaf.sourceWidth
            let plain = try ParquetEncodings.plain(
                values, encoding: split, physical: leaf.physical,
                width: width, count: k, file: file, fileOffset: fileOffset, column: leaf.name)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(1, plain.count), alignment: 8)
            plain.withUnsafeBytes { if $0.count > 0 { buffer.copyMemory(from: $0) } }
            transcoded = buffer
            values = UnsafeRawBufferPointer(rebasing: buffer[0 ..< plain.count])
        case .plainDictionary?, .rleDictionary?:
            guard dictionary != nil else {
                throw bad(fileOffset, "Parquet dictionary-encoded page in '\(leaf.name)' without a dictionary page")
            }
            guard values.count >= 1 || k == 0 else { throw .truncated(file: file, offset: fileOffset, needed: 1) }
            var failure: InteropError?
            // Not zero-filled first: every index is written by the decoder, or the page fails.
            let out = [UInt32](unsafeUninitializedCapacity: k) { p, initialized in
                initialized = 0
                guard k > 0, let base = p.baseAddress else { return }
                var decoder = RLEHybridDecoder(
                    UnsafeRawBufferPointer(rebasing: values[1...]), bitWidth: Int(values[0]), file: file, fileOffset: fileOffset + 1)
                do throws(InteropError) {
                    try decoder.decode(count: k, into: base)
                    initialized = k
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
            indices = out
        default:
            let name = ParquetFormat.Encoding(rawValue: encoding).map { "\($0)" } ?? "#\(encoding)"
            throw .unsupportedColumn(
                file: file, column: leaf.name,
                type:
                    "pages in the \(name) encoding (Colonnade reads PLAIN, dictionary, DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY and BYTE_STREAM_SPLIT pages)"
            )
        }

        // FIXED_LEN_BYTE_ARRAY and BYTE_ARRAY numbers (decimals, float16) become the table's
        // values now; a dictionary's entries were converted when it was read.
        if leaf.conversion != nil && indices == nil {
            let prefixed = leaf.physical == .byteArray || ParquetFormat.Encoding(rawValue: encoding) == .deltaByteArray
            let converted = try convert(values, count: k, prefixed: prefixed, leaf: leaf, fileOffset: fileOffset, row: row)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(1, converted.count), alignment: 8)
            converted.withUnsafeBytes { if $0.count > 0 { buffer.copyMemory(from: $0) } }
            transcoded?.deallocate()
            transcoded = buffer
            values = UnsafeRawBufferPointer(rebasing: buffer[0 ..< converted.count])
        }

        switch leaf.role {
        case .skipped:
            return
        case .ticker:
            // Safe: rows row ..< row + n lie within the storage (row groups checked against totalRows).
            let tickers = rowTickers.base.assumingMemoryBound(to: Int32.self)
            if let indices {
                guard case .symbols(let numbers)? = dictionary else {
                    throw bad(fileOffset, "Parquet dictionary of '\(leaf.name)' is not byte arrays")
                }
                for i in 0 ..< n {
                    let x = Int(indices[i])
                    guard x < numbers.count else {
                        throw bad(fileOffset, "Parquet dictionary index \(x) of \(numbers.count) in '\(leaf.name)'")
                    }
                    tickers[row + i] = numbers[x]
                }
            } else {
                var p = 0
                for i in 0 ..< n {
                    guard p + 4 <= values.count else { throw .truncated(file: file, offset: fileOffset + p, needed: 4) }
                    let len = Int(UInt32(littleEndian: values.loadUnaligned(fromByteOffset: p, as: UInt32.self)))
                    guard len <= values.count - p - 4 else { throw .truncated(file: file, offset: fileOffset + p + 4, needed: len) }
                    tickers[row + i] = state.interner.number(UnsafeRawBufferPointer(rebasing: values[p + 4 ..< p + 4 + len]))
                    p += 4 + len
                }
            }
        case .date(let perDay):
            let width = leaf.width
            let out = dates.base.assumingMemoryBound(to: Int32.self) + row
            var outside: (row: Int, value: Int64)?
            // The first value with a time of day other than midnight (in units of perDay).
            var time: (row: Int, units: Int64)?
            let range = Int64(Day.storableDayNumbers.lowerBound) ... Int64(Day.storableDayNumbers.upperBound)
            try gather(values, indices: indices, dictionary: dictionary, width: width, count: n, fileOffset: fileOffset, column: leaf.name)
            { i, p in
                // INT96: the Julian day in bytes 8–11 (2 440 588 is 1970-01-01), the time of day before it.
                let value =
                    perDay == 1
                    ? Int64(p.loadUnaligned(as: Int32.self))
                    : perDay == 0
                        ? Int64(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt32.self))) - 2_440_588
                        : p.loadUnaligned(as: Int64.self)
                let day = perDay <= 1 ? value : InteropValues.day(value, unitsPerDay: perDay)
                if time == nil && perDay != 1 {
                    // Naive and UTC-adjusted timestamps alike: the day as the value writes it.
                    let units =
                        perDay == 0
                        ? Int64(truncatingIfNeeded: UInt64(littleEndian: p.loadUnaligned(as: UInt64.self))) : value &- day &* perDay
                    if units != 0 { time = (i, units) }
                }
                guard range.contains(day) else {
                    if outside == nil { outside = (i, value) }
                    return true
                }
                out[i] = Int32(truncatingIfNeeded: day)
                return true
            }
            if let outside {
                // The rows of this page come first in `out`, in order: row + i is the file's row.
                _ = try InteropValues.storableDay(
                    outside.value, unitsPerDay: Swift.max(1, perDay), file: file, column: leaf.name, row: row + outside.row)
            }
            if let time, state.timeOfDay == nil {
                // Rows of this page are the file's rows row ..< row + n (a date is never null).
                let perDayUnits = perDay == 0 ? 86_400_000_000_000 : perDay
                state.timeOfDay = InteropSkippedColumn(
                    timeOfDayIn: file, column: leaf.name, row: row + time.row,
                    text: InteropValues.timeOfDay(time.units, unitsPerDay: perDayUnits))
            }
        case .value:
            guard let storage = storages[c] else { return }
            let width = leaf.width
            let out = storage.base + row * width
            if indices == nil && defined == nil {
                // The common case: PLAIN values, no nulls: one copy.
                guard values.count >= n * width else { throw .truncated(file: file, offset: fileOffset, needed: n * width) }
                // Safe: rows row ..< row + n lie within the storage (row groups checked against totalRows).
                out.copyMemory(from: values.baseAddress!, byteCount: n * width)
                return
            }
            if let indices, defined == nil, case .values(let entries, let entryCount)? = dictionary, width == 8 || width == 4 {
                // Dictionary pages without nulls (Polars' integer and date columns): one typed
                // load and store per row.
                let failed = entries.withUnsafeBytes { d in
                    width == 8
                        ? Self.lookUp(UInt64.self, indices: indices, entryCount: entryCount, dictionary: d, into: out)
                        : Self.lookUp(UInt32.self, indices: indices, entryCount: entryCount, dictionary: d, into: out)
                }
                if let failed {
                    throw bad(fileOffset, "Parquet dictionary index \(indices[failed]) of \(entryCount) in '\(leaf.name)'")
                }
                return
            }
            var slots: [Int] = []
            if let defined {
                slots.reserveCapacity(k)
                for (i, v) in defined.enumerated() {
                    if v != 0 {
                        slots.append(i)
                    } else {
                        // A null is zeros: the storage is not zeroed beforehand (`storage(_:)`).
                        (out + i * width).initializeMemory(as: UInt8.self, repeating: 0, count: width)
                    }
                }
            }
            try gather(values, indices: indices, dictionary: dictionary, width: width, count: k, fileOffset: fileOffset, column: leaf.name)
            { i, p in
                let r = defined == nil ? i : slots[i]
                (out + r * width).copyMemory(from: p, byteCount: width)
                return true
            }
        }
    }

    /// Writes entry `indices[i]` of `dictionary` (values of `T`, `entryCount` of them) as the
    /// `i`-th value at `out`, for every index up to the first one not below `entryCount`.
    /// - Returns: the position of that index, or nil when every index is in the dictionary.
    /// - Precondition: `dictionary` holds `entryCount` values and `out` has room for
    ///   `indices.count`.
    @inline(__always)
    static func lookUp<T: FixedWidthInteger & BitwiseCopyable>(
        _: T.Type, indices: [UInt32], entryCount: Int, dictionary: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer
    ) -> Int? {
        indices.withUnsafeBufferPointer { x in
            let size = MemoryLayout<T>.size
            for i in 0 ..< x.count {
                let index = Int(x[i])
                guard index < entryCount else { return i }
                // Safe: index < entryCount values in the dictionary; row i is one of the page's rows.
                (out + i &* size).storeBytes(of: dictionary.loadUnaligned(fromByteOffset: index &* size, as: T.self), as: T.self)
            }
            return nil
        }
    }

    /// Calls `store(i, pointer)` with the i-th present value's bytes (PLAIN or via the dictionary).
    func gather(
        _ values: UnsafeRawBufferPointer, indices: [UInt32]?, dictionary: Dictionary?, width: Int, count: Int,
        fileOffset: Int, column: String, _ store: (Int, UnsafeRawPointer) -> Bool
    ) throws(InteropError) {
        if let indices {
            guard case .values(let dict, let entries)? = dictionary else {
                throw bad(fileOffset, "Parquet dictionary of '\(column)' holds byte arrays")
            }
            try withInteropBytes(dict) { d throws(InteropError) in
                for i in 0 ..< count {
                    let x = Int(indices[i])
                    guard x < entries else { throw bad(fileOffset, "Parquet dictionary index \(x) of \(entries) in '\(column)'") }
                    if !store(i, d.baseAddress! + x * width) { throw bad(fileOffset, "value out of range in '\(column)'") }
                }
            }
        } else {
            guard values.count >= count * width else { throw .truncated(file: file, offset: fileOffset, needed: count * width) }
            for i in 0 ..< count where !store(i, values.baseAddress! + i * width) {
                throw bad(fileOffset, "value out of range in '\(column)'")
            }
        }
    }

    // MARK: Result

    /// A DECIMAL column's unscaled integers (INT32 or INT64) as Int64 (scale 0) or as Float64,
    /// correctly rounded: an exact division when the integer and the power of ten are exact
    /// doubles (|v| ≤ 2^53, scale ≤ 22), else `Double(String)` of the decimal text.
    static func decimalColumn(
        _ storage: ColumnStorage, physical: ParquetFormat.PhysicalType, scale: Int, element: ElementType,
        rows: Int, validity: Bitmask?
    ) -> AnyColumn {
        let unscaled = { (r: Int) -> Int64 in
            physical == .int32
                ? Int64(storage.base.assumingMemoryBound(to: Int32.self)[r]) : storage.base.assumingMemoryBound(to: Int64.self)[r]
        }
        if element == .int64 {
            var c = Column<Int64>(unsafeUninitializedCount: rows) { d in for r in 0 ..< rows { d[r] = unscaled(r) } }
            if let validity { c.setValidity(validity) }
            return .int64(c)
        }
        var c = Column<Double>(unsafeUninitializedCount: rows) { d in
            for r in 0 ..< rows { d[r] = InteropDecimal.double(unscaled(r), scale: scale) }
        }
        if let validity { c.setValidity(validity) }
        return .float64(c)
    }

    func finish() throws(InteropError) -> ImportedColumns {
        var out = ImportedColumns(file: file)
        out.skipped = skipped + (timeOfDay.map { [$0] } ?? [])
        out.symbols = interner.symbols
        out.rowTickers = [Int32](UnsafeBufferPointer(start: rowTickers.base.assumingMemoryBound(to: Int32.self), count: totalRows))
        if !leaves.contains(where: {
            if case .ticker = $0.role { return true }
            return false
        }), let symbol = defaultTicker {
            out.symbols = [symbol]
            out.rowTickers = [Int32](repeating: 0, count: totalRows)
        }
        out.dates = Column<Int32>(viewing: dates, count: totalRows, validity: nil, summaries: nil)
        for (c, leaf) in leaves.enumerated() {
            switch leaf.role {
            case .date: out.dateName = leaf.name
            case .ticker, .skipped: break
            case .value(let element, let unsignedSource):
                guard let storage = storages[c] else { continue }
                out.names.append(leaf.name)
                let mask = validity[c]
                var column: AnyColumn
                switch (leaf.physical, element) {
                case (_, .int64) where leaf.conversion != nil:
                    column = .int64(Column(viewing: storage, count: totalRows, validity: mask, summaries: nil))
                case (_, .float32) where leaf.conversion != nil:
                    column = .float32(Column(viewing: storage, count: totalRows, validity: mask, summaries: nil))
                case (_, _) where leaf.conversion != nil:
                    column = .float64(Column(viewing: storage, count: totalRows, validity: mask, summaries: nil))
                case (_, _) where leaf.decimalScale != nil:
                    column = Self.decimalColumn(
                        storage, physical: leaf.physical, scale: leaf.decimalScale!, element: element,
                        rows: totalRows, validity: mask)
                case (.int32, .int64):
                    let src = storage.base.assumingMemoryBound(to: UInt32.self)
                    var col = Column<Int64>(unsafeUninitializedCount: totalRows) { d in for r in 0 ..< totalRows { d[r] = Int64(src[r]) } }
                    if let mask { col.setValidity(mask) }
                    column = .int64(col)
                case (.int32, _): column = .int32(Column(viewing: storage, count: totalRows, validity: mask, summaries: nil))
                case (.int64, _):
                    if unsignedSource {
                        let src = storage.base.assumingMemoryBound(to: UInt64.self)
                        for r in 0 ..< totalRows where src[r] > UInt64(Int64.max) && (mask.map { $0[r] } ?? true) {
                            throw .unsupportedColumn(file: file, column: leaf.name, type: "UINT64 with a value above 2^63 - 1 in row \(r)")
                        }
                    }
                    column = .int64(Column(viewing: storage, count: totalRows, validity: mask, summaries: nil))
                case (.float, _): column = .float32(Column(viewing: storage, count: totalRows, validity: mask, summaries: nil))
                default: column = .float64(Column(viewing: storage, count: totalRows, validity: mask, summaries: nil))
                }
                out.values.append(column)
            }
        }
        out.metadata = keyValues
        out.info = info
        return out
    }
}

/// The index of the first column chunk that failed (`Int.max` while none has).
final class ChunkFailure: Sendable {
    let index = Atomic<Int>(Int.max)
}

/// Set when a chunk's decode has finished, so that the next chunk of its column may borrow its
/// last rows.
final class ChunkDone: Sendable {
    let done = Atomic<Bool>(false)
}

/// Memory for one decompressed page at a time, grown to the largest page seen (16-byte aligned,
/// as an array's storage is).
final class ParquetPageBuffer {
    /// Bytes past the reserved size that may be written (never read as content), so decoders may
    /// copy whole vectors.
    static let slack = 64
    private var memory = UnsafeMutableRawBufferPointer(start: nil, count: 0)

    /// `size` bytes (and `slack` writable past them), valid until the next call; their content
    /// is undefined.
    func reserve(_ size: Int) -> UnsafeMutableRawBufferPointer {
        if memory.count < size + Self.slack {
            memory.deallocate()
            memory = .allocate(byteCount: size + Self.slack, alignment: 16)
        }
        return UnsafeMutableRawBufferPointer(rebasing: memory[0 ..< size])
    }

    deinit { memory.deallocate() }
}
