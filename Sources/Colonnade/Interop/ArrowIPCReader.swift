#if canImport(Glibc)
import Glibc
#endif

/// Reads Arrow IPC files and streams (as pyarrow, Polars and Colonnade write them) into a table.
///
///     let table = try ArrowIPCReader.read(bytes, file: "quotes.arrow")
///
/// A file is read through its footer (schema, then the dictionary and record batch blocks); a
/// stream message by message up to its end marker. Columns map by name: `ticker` or `symbol`
/// (utf8, large_utf8, utf8_view, or a dictionary of those), `date` (date32, date64, or a timestamp
/// of any unit: its day in the field's time zone when it names one, else as written), and value
/// columns: integers of every width (int32, or int64 for uint32/int64/uint64), float16 (as
/// float32), float32/float64, decimal128/256 (Float64 correctly rounded; Int64 for scale 0 and
/// precision ≤ 18). Other columns, flat or nested, are skipped with a note (refused when strict).
/// Bodies compressed with LZ4_FRAME or ZSTD (each buffer its own frame) are decompressed.
///
/// Every offset and length is checked against the input before use; malformed input throws
/// `InteropError` with the byte offset, never traps. The entry point is a function of bytes, so a
/// fuzzer can call it directly.
public enum ArrowIPCReader {
    /// Decodes `bytes` (a whole IPC file or stream).
    /// - Parameters:
    ///   - bytes: the whole input, in memory.
    ///   - file: names the input in errors.
    ///   - ticker: the symbol of every row when the input has no ticker column.
    ///   - threads: how many threads decode a file's record batches, and join the columns, at
    ///     once (the table is the same for any count; a stream is read on one).
    public static func read(
        _ bytes: UnsafeRawBufferPointer, file: String, ticker: String? = nil, threads: Int = 1
    ) throws(InteropError) -> QuoteTable {
        try columns(bytes, file: file, ticker: ticker, threads: threads).assemble()
    }

    /// Decodes `bytes` into columns (before they become a table).
    static func columns(
        _ bytes: UnsafeRawBufferPointer, file: String, ticker: String?, strict: Bool = false, threads: Int = 1
    ) throws(InteropError) -> ImportedColumns {
        var decoder = ArrowIPCDecoder(bytes: bytes, file: file, defaultTicker: ticker)
        decoder.strict = strict
        if bytes.count >= 6 && bytes.prefix(6).elementsEqual(ArrowIPCFormat.magic) {
            try decoder.readFile(threads: threads)
        } else {
            try decoder.readStream()
        }
        return try decoder.finish(threads: threads)
    }
}

/// The state of one Arrow IPC decode.
struct ArrowIPCDecoder {
    let bytes: UnsafeRawBufferPointer
    let file: String
    let defaultTicker: String?
    var fields: [ArrowField] = []
    var hasSchema = false
    var tickerField: Int?
    var dateField = -1
    var dictionaries: [Int64: [String]] = [:]
    /// Per dictionary id: the interned number of each entry (rebuilt when the dictionary changes).
    var dictionaryNumbers: [Int64: [Int32]] = [:]
    var interner = InteropValues.SymbolInterner()
    var rowTickers: [Int32] = []
    var dates = Column<Int32>()
    /// Per value field: its columns, one per record batch, joined once at the end.
    var valueChunks: [Int: [AnyColumn]] = [:]
    /// Per value field, when a file's record batches are read together: the whole file's column,
    /// which each batch's values are copied into at their rows (`readBatches`).
    var destinations: [Int: Destination] = [:]
    /// The row `destinations` start at.
    var destinationOrigin = 0
    /// Validity of rows copied into `destinations`, for the batches that had nulls.
    var destinationNulls: [(field: Int, row: Int, validity: Bitmask)] = []
    /// Refuse columns that are not quotes instead of skipping them.
    var strict = false
    /// Fields that are not quotes, skipped: their nodes and buffers are passed over.
    var skippedFields: Set<Int> = []
    /// The dictionaries of skipped fields (and of their nested children): not read.
    var skippedDictionaries: Set<Int64> = []
    var skipped: [InteropSkippedColumn] = []
    /// The date column's time zone, when its timestamps name one: each row's day is its day there.
    var dateZone: InteropTimeZone?
    /// The note for a date column holding times of day other than midnight (its first such row).
    var timeOfDay: InteropSkippedColumn?
    var metadata: [String: String] = [:]
    var info: InteropTableInfo?
    var rows = 0

    init(bytes: UnsafeRawBufferPointer, file: String, defaultTicker: String?) {
        self.bytes = bytes
        self.file = file
        self.defaultTicker = defaultTicker
    }

    func bad(_ offset: Int, _ detail: String) -> InteropError { .malformed(file: file, offset: offset, detail: detail) }

    func uint32(at o: Int) throws(InteropError) -> UInt32 {
        guard o >= 0, o <= bytes.count - 4 else { throw .truncated(file: file, offset: o, needed: 4) }
        // Safe: checked above.
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: o, as: UInt32.self))
    }

    // MARK: Framing

    /// One encapsulated message: its header table and where its body is.
    struct Message {
        var headerType: UInt8
        var header: FlatBufferTable
        var bodyStart: Int
        var bodyLength: Int
        var end: Int
    }

    /// The message at `offset`, or nil at an end-of-stream marker (or the end of the input).
    func message(at offset: Int) throws(InteropError) -> Message? {
        if offset == bytes.count { return nil }
        var length = Int(try uint32(at: offset))
        var metaStart = offset + 4
        if length == 0xFFFF_FFFF {
            length = Int(try uint32(at: offset + 4))
            metaStart = offset + 8
        }
        if length == 0 { return nil }
        guard length <= bytes.count - metaStart else { throw .truncated(file: file, offset: metaStart, needed: length) }
        let reader = FlatBufferReader(
            bytes: UnsafeRawBufferPointer(rebasing: bytes[metaStart ..< metaStart + length]),
            fileOffset: metaStart, file: file)
        let root = try reader.root()
        let headerType = try root.uint8(ArrowIPCFormat.Message.headerType)
        guard let header = try root.table(ArrowIPCFormat.Message.header) else {
            throw bad(metaStart, "Arrow message without a header")
        }
        let bodyLength = try root.int64(ArrowIPCFormat.Message.bodyLength)
        let bodyStart = metaStart + length
        guard bodyLength >= 0 else { throw bad(metaStart, "Arrow message with a body of \(bodyLength) bytes") }
        guard bodyLength <= Int64(bytes.count - bodyStart) else {
            throw .truncated(file: file, offset: bodyStart, needed: Int(clamping: bodyLength))
        }
        return Message(
            headerType: headerType, header: header, bodyStart: bodyStart, bodyLength: Int(bodyLength),
            end: bodyStart + Int(bodyLength))
    }

    mutating func readStream() throws(InteropError) {
        var offset = 0
        while let m = try message(at: offset) {
            try handle(m)
            offset = m.end
        }
        if !hasSchema { throw .unrecognizedFormat(file: file) }
    }

    mutating func readFile(threads: Int = 1) throws(InteropError) {
        let n = bytes.count
        guard n >= 8 + 4 + 6, bytes.suffix(6).elementsEqual(ArrowIPCFormat.magic) else {
            throw .truncated(file: file, offset: n, needed: 6)
        }
        let footerLength = Int(try uint32(at: n - 10))
        let footerStart = n - 10 - footerLength
        guard footerLength > 0, footerStart >= 8 else {
            throw bad(n - 10, "Arrow footer length \(footerLength) in a file of \(n) bytes")
        }
        let reader = FlatBufferReader(
            bytes: UnsafeRawBufferPointer(rebasing: bytes[footerStart ..< n - 10]), fileOffset: footerStart, file: file)
        let footer = try reader.root()
        guard let schema = try footer.table(ArrowIPCFormat.Footer.schema) else { throw bad(footerStart, "Arrow footer without a schema") }
        try readSchema(schema)
        var batches: [Message] = []
        // An error in a block after the first batches: thrown after them, as reading them one by
        // one would (unless one of them fails first).
        var blockFailure: InteropError?
        for slot in [ArrowIPCFormat.Footer.dictionaries, ArrowIPCFormat.Footer.recordBatches] {
            guard let (start, count) = try footer.vector(slot, elementSize: 24) else { continue }
            for i in 0 ..< count where blockFailure == nil {
                do throws(InteropError) {
                    let b = start + 24 * i
                    let offset = Int(Int64(bitPattern: try reader.uint64(at: b)))
                    guard offset >= 8, offset < footerStart else {
                        throw bad(footerStart + b, "Arrow block offset \(offset) outside the file's messages")
                    }
                    guard let m = try message(at: offset) else { throw bad(offset, "Arrow block at \(offset) is an end-of-stream marker") }
                    let expected: UInt8 =
                        slot == ArrowIPCFormat.Footer.dictionaries
                        ? ArrowIPCFormat.Header.dictionaryBatch.rawValue
                        : ArrowIPCFormat.Header.recordBatch.rawValue
                    guard m.headerType == expected else {
                        throw bad(offset, "Arrow block at \(offset) holds message type \(m.headerType), expected \(expected)")
                    }
                    guard m.end <= footerStart else { throw .truncated(file: file, offset: m.bodyStart, needed: m.bodyLength) }
                    if slot == ArrowIPCFormat.Footer.recordBatches {
                        _ = try BatchCursor(self, m, m.header)  // its length, checked
                        batches.append(m)
                    } else {
                        try handle(m)
                    }
                } catch {
                    if slot == ArrowIPCFormat.Footer.dictionaries || batches.isEmpty { throw error }
                    blockFailure = error
                }
            }
        }
        try readBatches(batches, threads: threads)
        if let blockFailure { throw blockFailure }
    }

    /// What one record batch decoded on its own adds to the columns.
    struct BatchPart {
        var rowTickers: [Int32] = []
        var dates = Column<Int32>()
        var valueChunks: [Int: [AnyColumn]] = [:]
        /// Symbols the batch met that the interner did not hold (numbered from its count on).
        var newSymbols: [String] = []
        var timeOfDay: InteropSkippedColumn?
        var destinationNulls: [(field: Int, row: Int, validity: Bitmask)] = []
        var failure: InteropError?
    }

    /// A value field's column for all the rows of a file, filled by its record batches at once.
    /// Each batch's values are decoded into a column of their own, as when read alone, then copied
    /// to their rows here; that column is freed right away, so the allocator hands the next batch
    /// the same (already mapped) memory. Joining the batches' columns at the end instead kept
    /// every batch's column alive until then: twice the file's values on fresh pages, which cost
    /// more than the decoding on this machine (ARCHITECTURE.md, Arrow and Parquet inputs).
    final class Destination: @unchecked Sendable {
        let storage: ColumnStorage
        let type: ElementType
        let count: Int

        init?(type: ElementType, count: Int) {
            let (bytes, overflow) = count.multipliedReportingOverflow(by: type.byteWidth)
            guard !overflow, let storage = ColumnStorage(allocatingByteCount: bytes) else { return nil }
            self.storage = storage
            self.type = type
            self.count = count
        }

        /// Copies `chunk`'s values to rows `row ..< row + chunk.count`; false if it is of another type.
        /// Safe to call from several threads for disjoint rows.
        func copy(_ chunk: AnyColumn, toRow row: Int) -> Bool {
            guard chunk.elementType == type, row >= 0, row + chunk.count <= count else { return false }
            chunk.visit(ValueCopy(target: storage.base + row * type.byteWidth))
            return true
        }

        /// A column's values copied to `target`.
        struct ValueCopy: ColumnVisitor {
            let target: UnsafeMutableRawPointer
            func visit<T: ColumnElement>(_ column: Column<T>) {
                column.withUnsafeBufferPointer { values in
                    if let b = values.baseAddress { target.copyMemory(from: b, byteCount: values.count * MemoryLayout<T>.stride) }
                }
            }
        }

        /// The filled column, with `validity` (nil: no nulls).
        func column(validity: Bitmask?) -> AnyColumn {
            switch type {
            case .int32: .int32(Column(viewing: storage, count: count, validity: validity, summaries: nil))
            case .int64: .int64(Column(viewing: storage, count: count, validity: validity, summaries: nil))
            case .float32: .float32(Column(viewing: storage, count: count, validity: validity, summaries: nil))
            case .float64: .float64(Column(viewing: storage, count: count, validity: validity, summaries: nil))
            }
        }
    }

    /// Decodes record batches on up to `threads` threads, each from a copy of this decoder's
    /// state (schema, dictionaries, symbols so far), then joins them in order: the symbols a batch
    /// added interned in its order, its rows appended. The same result, and the same first error,
    /// for any thread count.
    mutating func readBatches(_ messages: [Message], threads: Int) throws(InteropError) {
        guard !messages.isEmpty else { return }
        var starts: [Int] = []
        var at = rows
        for m in messages {
            starts.append(at)
            at += try BatchCursor(self, m, m.header).length
        }
        let known = interner.symbols.count
        // A file read whole: each value field's column is made once for all its rows.
        let total = at - rows
        var destinations: [Int: Destination] = [:]
        if rows == 0 && valueChunks.values.allSatisfy(\.isEmpty) && messages.count > 1 {
            for i in valueChunks.keys {
                guard let d = Destination(type: fields[i].elementType, count: total) else {
                    throw .io(file: file, operation: "allocate", errno: ENOMEM)
                }
                destinations[i] = d
            }
        }
        let parts = UnsafeMutablePointer<BatchPart>.allocate(capacity: messages.count)
        parts.initialize(repeating: BatchPart(), count: messages.count)
        defer {
            parts.deinitialize(count: messages.count)
            parts.deallocate()
        }
        let shared = SharedPointer(base: parts)
        let firstFailure = ChunkFailure()
        var template = self
        template.rowTickers = []
        template.dates = Column()
        template.valueChunks = [:]
        template.timeOfDay = nil
        template.destinations = destinations
        template.destinationOrigin = rows
        template.destinationNulls = []
        let start = template
        forEachChunk(messages.count, threads: Swift.max(1, threads)) { n, _ in
            if n > firstFailure.index.load(ordering: .relaxed) { return }
            var local = start
            local.rows = starts[n]
            var part = BatchPart()
            do throws(InteropError) {
                try local.readBatch(messages[n])
                part.rowTickers = local.rowTickers
                part.dates = local.dates
                part.valueChunks = local.valueChunks
                part.newSymbols = Array(local.interner.symbols[known...])
                part.timeOfDay = local.timeOfDay
                part.destinationNulls = local.destinationNulls
            } catch {
                part.failure = error
                firstFailure.index.min(n, ordering: .relaxed)
            }
            shared.base[n] = part
        }
        // Reserved once for every batch: reserving each batch's rows in turn would reallocate
        // exactly that much each time and copy the rows so far again (quadratic: 305 batches of a
        // 20 M-row file copied 12 GB).
        rowTickers.reserveCapacity(rowTickers.count + (at - rows))
        dates.reserveCapacity(dates.count + (at - rows))
        for n in 0 ..< messages.count {
            let part = parts[n]
            if let failure = part.failure { throw failure }
            let numbers = (0 ..< known).map { Int32($0) } + part.newSymbols.map { interner.number($0) }
            for t in part.rowTickers { rowTickers.append(numbers[Int(t)]) }
            dates.append(contentsOf: part.dates, rows: 0 ..< part.dates.count)
            for (field, chunks) in part.valueChunks { valueChunks[field, default: []] += chunks }
            if timeOfDay == nil { timeOfDay = part.timeOfDay }
            rows += part.dates.count
        }
        let nullPieces = (0 ..< messages.count).flatMap { parts[$0].destinationNulls }
        for (i, destination) in destinations {
            var validity: Bitmask?
            for piece in nullPieces where piece.field == i {
                if validity == nil { validity = Bitmask(count: total, allSet: true) }
                for r in 0 ..< piece.validity.count where !piece.validity[r] { validity?[piece.row + r] = false }
            }
            valueChunks[i] = [destination.column(validity: validity)]
        }
    }

    mutating func handle(_ m: Message) throws(InteropError) {
        switch ArrowIPCFormat.Header(rawValue: m.headerType) {
        case .schema:
            if !hasSchema { try readSchema(m.header) }
        case .dictionaryBatch:
            guard hasSchema else { throw bad(m.bodyStart, "Arrow dictionary batch before the schema") }
            try readDictionary(m)
        case .recordBatch:
            guard hasSchema else { throw bad(m.bodyStart, "Arrow record batch before the schema") }
            try readBatch(m)
        case nil:
            throw bad(m.bodyStart, "Arrow message type \(m.headerType) (tensors are not tables)")
        }
    }

    // MARK: Schema

    mutating func readSchema(_ schema: FlatBufferTable) throws(InteropError) {
        if try schema.int16(ArrowIPCFormat.Schema.endianness) != 0 {
            throw bad(schema.position, "big-endian Arrow data")
        }
        for f in try schema.tables(ArrowIPCFormat.Schema.fields) { fields.append(try ArrowField(f)) }
        for kv in try schema.tables(ArrowIPCFormat.Schema.customMetadata) {
            guard let key = try kv.string(ArrowIPCFormat.KeyValue.key) else { continue }
            let value = try kv.string(ArrowIPCFormat.KeyValue.value) ?? ""
            if key == InteropTableInfo.key { info = InteropTableInfo(decoding: value) }
            if !ImportedColumns.isToolKey(key) { metadata[key] = value }
        }
        hasSchema = true
        // Roles by name.
        for (i, f) in fields.enumerated() {
            let id = ColumnDescriptor.identifier(for: f.name)
            if (id == "ticker" || id == "symbol") && tickerField == nil {
                guard f.isString && f.childCount == 0 else {
                    throw .unsupportedColumn(
                        file: file, column: f.name, type: "type \(f.typeDescription): a ticker column must hold strings")
                }
                tickerField = i
            } else if id == "date" && dateField < 0 {
                guard f.isDate && f.dictionaryID == nil else {
                    throw .unsupportedColumn(
                        file: file, column: f.name,
                        type: "type \(f.typeDescription): a date column must be a date or a timestamp, not dictionary-encoded")
                }
                if let zone = f.timezone, ArrowIPCFormat.TypeID(rawValue: f.type) == .timestamp {
                    guard let resolved = InteropTimeZone(named: zone) else {
                        throw .unsupportedColumn(
                            file: file, column: f.name,
                            type: "type \(f.typeDescription): a time zone this system's time-zone database does not know")
                    }
                    dateZone = resolved
                }
                dateField = i
            } else if f.isNumeric && f.dictionaryID == nil && f.childCount == 0 {
                valueChunks[i] = []
            } else {
                let type = "type \(f.typeDescription), which is not a ticker, a date or a number"
                // Columns that are not quotes, flat or nested, are skipped with a note: their
                // nodes and buffers are passed over in every batch.
                guard !strict else { throw .unsupportedColumn(file: file, column: f.name, type: type) }
                guard ArrowIPCDecoder.canSkip(f) else {
                    throw .unsupportedColumn(
                        file: file, column: f.name,
                        type: "type \(f.typeDescription), whose buffers Colonnade does not know how to pass over")
                }
                skippedFields.insert(i)
                ArrowIPCDecoder.collectDictionaries(f, into: &skippedDictionaries)
                skipped.append(InteropSkippedColumn(file: file, column: f.name, type: type))
            }
        }
        if valueChunks.count > QuoteTable.maximumColumnCount {
            throw .table(file: file, .tooManyColumns(count: valueChunks.count, limit: QuoteTable.maximumColumnCount))
        }
        if dateField < 0 { throw .missingColumn(file: file, column: "date", available: fields.map(\.name)) }
        if tickerField == nil && defaultTicker == nil {
            throw .missingColumn(file: file, column: "ticker (or symbol)", available: fields.map(\.name))
        }
    }

    // MARK: Batches

    /// Walks a record batch's nodes and buffers.
    struct BatchCursor {
        let decoder: ArrowIPCDecoder
        let message: Message
        let length: Int
        let nodes: (start: Int, count: Int)
        let buffers: (start: Int, count: Int)
        let variadic: (start: Int, count: Int)?
        let reader: FlatBufferReader
        var node = 0
        var buffer = 0
        var variadicIndex = 0
        /// The body's compression (`BodyCompression.codec`: 0 LZ4_FRAME), or nil.
        var codec: UInt8?
        /// Decompressed buffers, alive as long as the cursor (the batch's values are copied out
        /// before it goes).
        let decompressed = DecompressedBuffers()

        init(_ decoder: ArrowIPCDecoder, _ message: Message, _ batch: FlatBufferTable) throws(InteropError) {
            self.decoder = decoder
            self.message = message
            self.reader = batch.reader
            let length = try batch.int64(ArrowIPCFormat.RecordBatch.length)
            // Every column Colonnade reads needs at least one body byte per row (a date 4, an int8
            // value 1, string offsets 4), so a longer batch is a lie; checking it first keeps the
            // per-row arrays from being allocated for it.
            guard length >= 0, length <= Int64(message.bodyLength) else {
                throw decoder.bad(message.bodyStart, "Arrow record batch of \(length) rows in a body of \(message.bodyLength) bytes")
            }
            self.length = Int(length)
            if let c = try batch.table(ArrowIPCFormat.RecordBatch.compression) {
                let codec = try c.uint8(ArrowIPCFormat.BodyCompression.codec)
                // Method 0: each buffer compressed on its own (the only method Arrow defines).
                let method = try c.uint8(ArrowIPCFormat.BodyCompression.method)
                guard codec <= 1, method == 0 else {
                    throw .unsupportedCodec(
                        file: decoder.file,
                        codec: codec <= 1
                            ? "\(codec == 0 ? "LZ4_FRAME" : "ZSTD") with body compression method \(method)"
                            : "Arrow codec #\(codec)")
                }
                self.codec = codec
            }
            nodes = try batch.vector(ArrowIPCFormat.RecordBatch.nodes, elementSize: 16) ?? (0, 0)
            buffers = try batch.vector(ArrowIPCFormat.RecordBatch.buffers, elementSize: 16) ?? (0, 0)
            variadic = try batch.vector(ArrowIPCFormat.RecordBatch.variadicBufferCounts, elementSize: 8)
        }

        /// The next field node: (length, null count).
        mutating func nextNode() throws(InteropError) -> (Int, Int) {
            guard node < nodes.count else {
                throw decoder.bad(message.bodyStart, "Arrow record batch has \(nodes.count) field nodes, too few for the schema")
            }
            let p = nodes.start + 16 * node
            node += 1
            let n = Int64(bitPattern: try reader.uint64(at: p)), nulls = Int64(bitPattern: try reader.uint64(at: p + 8))
            guard n == Int64(length), nulls >= 0, nulls <= n else {
                throw decoder.bad(reader.fileOffset + p, "Arrow field node of \(n) rows and \(nulls) nulls in a batch of \(length)")
            }
            return (Int(n), Int(nulls))
        }

        /// The next buffer, checked to lie inside the body and to hold at least `minimum` bytes.
        mutating func nextBuffer(minimum: Int) throws(InteropError) -> UnsafeRawBufferPointer {
            guard buffer < buffers.count else {
                throw decoder.bad(message.bodyStart, "Arrow record batch has \(buffers.count) buffers, too few for the schema")
            }
            let p = buffers.start + 16 * buffer
            buffer += 1
            let offset = Int64(bitPattern: try reader.uint64(at: p)), len = Int64(bitPattern: try reader.uint64(at: p + 8))
            guard offset >= 0, len >= 0, offset <= Int64(message.bodyLength), len <= Int64(message.bodyLength) - offset else {
                throw decoder.bad(
                    reader.fileOffset + p, "Arrow buffer at \(offset) of \(len) bytes outside a body of \(message.bodyLength)")
            }
            guard codec != nil || len >= Int64(minimum) else {
                throw decoder.bad(message.bodyStart + Int(offset), "Arrow buffer of \(len) bytes, needs \(minimum)")
            }
            let start = message.bodyStart + Int(offset)
            let raw = UnsafeRawBufferPointer(rebasing: decoder.bytes[start ..< start + Int(len)])
            guard codec != nil else { return raw }
            guard len > 0 else {
                guard minimum == 0 else { throw decoder.bad(start, "Arrow buffer of 0 bytes, needs \(minimum)") }
                return raw
            }
            // A compressed buffer: its uncompressed length (little-endian Int64; −1: the bytes
            // that follow are not compressed), then one LZ4 or ZSTD frame.
            guard len >= 8 else { throw .truncated(file: decoder.file, offset: start, needed: 8) }
            let declared = Int64(littleEndian: raw.loadUnaligned(as: Int64.self))
            let frame = UnsafeRawBufferPointer(rebasing: raw[8...])
            let out: UnsafeRawBufferPointer
            if declared == -1 {
                out = frame
            } else if codec == 1 {
                let length = declared >= 0 && declared <= Int64(Int.max >> 1) ? Int(declared) : Int.max
                // The most a ZSTD frame can expand (a 3-byte RLE block header per 128 KiB), checked
                // before the buffer is allocated.
                guard length <= frame.count.multipliedReportingOverflow(by: 1 << 15).partialValue + 4096 else {
                    throw .malformed(
                        file: decoder.file, offset: start + 8,
                        detail: "ZSTD: \(frame.count) bytes cannot hold the \(length) the page header says")
                }
                let buffer = decompressed.make(length)
                do throws(ZstdError) {
                    let n = try Zstd.decompress(frame, into: buffer)
                    guard n == length else { throw .sizeMismatch(expected: length, actual: n) }
                } catch {
                    throw .malformed(file: decoder.file, offset: start + 8 + (error.offset ?? 0), detail: "ZSTD: \(error.reason)")
                }
                out = UnsafeRawBufferPointer(buffer)
            } else {
                guard declared >= 0, declared <= Int64(LZ4.maximumExpansion(frame.count)) else {
                    throw decoder.bad(start, "Arrow buffer of \(frame.count) LZ4 bytes says it holds \(declared)")
                }
                let length = Int(declared)
                let buffer = decompressed.make(length)
                do throws(CodecError) {
                    // Straight into the batch's buffer, which bounds the output.
                    let n = try LZ4.decompressFrame(frame, into: buffer)
                    guard n == length else { throw .sizeMismatch(codec: LZ4.name, expected: length, actual: n) }
                } catch {
                    throw .malformed(file: decoder.file, offset: start + 8 + (error.offset ?? 0), detail: error.description)
                }
                out = UnsafeRawBufferPointer(buffer)
            }
            guard out.count >= minimum else {
                throw decoder.bad(start, "Arrow buffer of \(out.count) bytes after decompression, needs \(minimum)")
            }
            return out
        }

        /// Passes over the next field node without checking its length (a nested child's).
        mutating func skipNode() throws(InteropError) {
            guard node < nodes.count else {
                throw decoder.bad(message.bodyStart, "Arrow record batch has \(nodes.count) field nodes, too few for the schema")
            }
            node += 1
        }

        /// Passes over the next buffer without reading it (a skipped column's).
        mutating func skipBuffer() throws(InteropError) {
            guard buffer < buffers.count else {
                throw decoder.bad(message.bodyStart, "Arrow record batch has \(buffers.count) buffers, too few for the schema")
            }
            buffer += 1
        }

        /// The validity buffer of a field with `nulls` nulls (nil when it has none).
        mutating func validity(nulls: Int) throws(InteropError) -> UnsafeRawBufferPointer? {
            let b = try nextBuffer(minimum: nulls > 0 ? (length + 7) / 8 : 0)
            return nulls > 0 ? b : nil
        }

        mutating func nextVariadicCount() throws(InteropError) -> Int {
            guard let v = variadic, variadicIndex < v.count else { return 0 }
            let c = Int64(bitPattern: try reader.uint64(at: v.start + 8 * variadicIndex))
            variadicIndex += 1
            guard c >= 0, c <= Int64(buffers.count) else { throw decoder.bad(message.bodyStart, "Arrow variadic buffer count \(c)") }
            return Int(c)
        }
    }

    /// Buffers decompressed for one record batch, freed with it.
    final class DecompressedBuffers {
        private var kept: [UnsafeMutableRawBufferPointer] = []

        /// A stable copy of `bytes`, alive until this object goes.
        func keep(_ bytes: [UInt8]) -> UnsafeRawBufferPointer {
            let b = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(1, bytes.count), alignment: 64)
            bytes.withUnsafeBytes { if $0.count > 0 { b.copyMemory(from: $0) } }
            kept.append(b)
            return UnsafeRawBufferPointer(rebasing: b[0 ..< bytes.count])
        }

        /// `count` bytes of memory, uninitialized, alive until this object goes.
        func make(_ count: Int) -> UnsafeMutableRawBufferPointer {
            let b = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(1, count), alignment: 64)
            kept.append(b)
            return UnsafeMutableRawBufferPointer(rebasing: b[0 ..< count])
        }

        deinit { for b in kept { b.deallocate() } }
    }

    /// Strings of a utf8, large_utf8 or utf8_view array; `each(row, bytes)` per non-null row.
    func strings(
        _ field: ArrowField, _ cursor: inout BatchCursor, nulls: Int,
        _ each: (Int, UnsafeRawBufferPointer?) throws(InteropError) -> Void
    ) throws(InteropError) {
        let n = cursor.length
        let validity = try cursor.validity(nulls: nulls)
        func isNull(_ r: Int) -> Bool {
            // Safe: the validity buffer holds at least (n + 7) / 8 bytes.
            guard let v = validity else { return false }
            return (v[r >> 3] >> UInt8(r & 7)) & 1 == 0
        }
        switch ArrowIPCFormat.TypeID(rawValue: field.type) {
        case .utf8View:
            let views = try cursor.nextBuffer(minimum: 16 * n)
            var data: [UnsafeRawBufferPointer] = []
            for _ in 0 ..< (try cursor.nextVariadicCount()) { data.append(try cursor.nextBuffer(minimum: 0)) }
            for r in 0 ..< n {
                if isNull(r) {
                    try each(r, nil)
                    continue
                }
                let v = 16 * r
                let len = Int(Int32(bitPattern: UInt32(littleEndian: views.loadUnaligned(fromByteOffset: v, as: UInt32.self))))
                if len >= 0 && len <= 12 {
                    try each(r, UnsafeRawBufferPointer(rebasing: views[v + 4 ..< v + 4 + len]))
                } else {
                    let index = Int(Int32(bitPattern: UInt32(littleEndian: views.loadUnaligned(fromByteOffset: v + 8, as: UInt32.self))))
                    let offset = Int(Int32(bitPattern: UInt32(littleEndian: views.loadUnaligned(fromByteOffset: v + 12, as: UInt32.self))))
                    guard len > 0, index >= 0, index < data.count, offset >= 0, offset <= data[index].count - len else {
                        throw bad(
                            cursor.message.bodyStart,
                            "Arrow string view \(r) (length \(len), buffer \(index), offset \(offset)) outside its data")
                    }
                    try each(r, UnsafeRawBufferPointer(rebasing: data[index][offset ..< offset + len]))
                }
            }
        default:
            let wide = ArrowIPCFormat.TypeID(rawValue: field.type) == .largeUtf8
            let w = wide ? 8 : 4
            let offsets = try cursor.nextBuffer(minimum: n == 0 ? 0 : w * (n + 1))
            let data = try cursor.nextBuffer(minimum: 0)
            func offset(_ i: Int) -> Int {
                wide
                    ? Int(Int64(littleEndian: offsets.loadUnaligned(fromByteOffset: 8 * i, as: Int64.self)))
                    : Int(Int32(littleEndian: offsets.loadUnaligned(fromByteOffset: 4 * i, as: Int32.self)))
            }
            for r in 0 ..< n {
                if isNull(r) {
                    try each(r, nil)
                    continue
                }
                let a = offset(r), b = offset(r + 1)
                guard a >= 0, a <= b, b <= data.count else {
                    throw bad(cursor.message.bodyStart, "Arrow string offsets \(a)..<\(b) of row \(r) outside \(data.count) bytes of data")
                }
                try each(r, UnsafeRawBufferPointer(rebasing: data[a ..< b]))
            }
        }
    }

    mutating func readDictionary(_ m: Message) throws(InteropError) {
        let id = try m.header.int64(ArrowIPCFormat.DictionaryBatch.id)
        guard let batch = try m.header.table(ArrowIPCFormat.DictionaryBatch.data) else {
            throw bad(m.bodyStart, "Arrow dictionary batch without data")
        }
        let isDelta = try m.header.bool(ArrowIPCFormat.DictionaryBatch.isDelta)
        // A skipped column's dictionary (or a dictionary nested in it) is not read.
        if skippedDictionaries.contains(id) { return }
        guard let index = fields.firstIndex(where: { $0.dictionaryID == id }) else {
            throw bad(m.bodyStart, "Arrow dictionary \(id) belongs to no field")
        }
        let field = fields[index]
        var cursor = try BatchCursor(self, m, batch)
        let (_, nulls) = try cursor.nextNode()
        var entries: [String] = isDelta ? dictionaries[id] ?? [] : []
        try strings(field, &cursor, nulls: nulls) { _, b throws(InteropError) in
            entries.append(b.map { String(decoding: $0, as: UTF8.self) } ?? "")
        }
        dictionaries[id] = entries
        dictionaryNumbers[id] = entries.map { interner.number($0) }
    }

    mutating func readBatch(_ m: Message) throws(InteropError) {
        var cursor = try BatchCursor(self, m, m.header)
        let n = cursor.length
        let base = rows
        var tickerNumbers = [Int32](repeating: 0, count: n)
        var chunkDates = [Int32](repeating: 0, count: n)
        var sawTicker = false
        for (i, field) in fields.enumerated() {
            let (_, nulls) = try cursor.nextNode()
            if i == tickerField {
                sawTicker = true
                if let id = field.dictionaryID {
                    let validity = try cursor.validity(nulls: nulls)
                    let width = field.indexBitWidth / 8
                    guard [1, 2, 4, 8].contains(width) else {
                        throw .unsupportedColumn(
                            file: file, column: field.name,
                            type: "a dictionary index of \(field.indexBitWidth) bits (1, 2, 4 or 8 bytes are read)")
                    }
                    let indices = try cursor.nextBuffer(minimum: width * n)
                    guard let numbers = dictionaryNumbers[id] else {
                        throw bad(m.bodyStart, "Arrow dictionary \(id) used before it was sent")
                    }
                    for r in 0 ..< n {
                        if let v = validity, (v[r >> 3] >> UInt8(r & 7)) & 1 == 0 {
                            throw .nullKey(file: file, column: field.name, row: base + r)
                        }
                        var index: Int64
                        switch width {
                        case 1: index = field.indexIsSigned ? Int64(Int8(bitPattern: indices[r])) : Int64(indices[r])
                        case 2:
                            let u = indices.loadUnaligned(fromByteOffset: 2 * r, as: UInt16.self)
                            index = field.indexIsSigned ? Int64(Int16(bitPattern: u)) : Int64(u)
                        case 4:
                            let u = indices.loadUnaligned(fromByteOffset: 4 * r, as: UInt32.self)
                            index = field.indexIsSigned ? Int64(Int32(bitPattern: u)) : Int64(u)
                        default: index = indices.loadUnaligned(fromByteOffset: 8 * r, as: Int64.self)
                        }
                        guard index >= 0, index < Int64(numbers.count) else {
                            throw bad(
                                m.bodyStart, "Arrow dictionary index \(index) in row \(base + r), dictionary has \(numbers.count) entries")
                        }
                        tickerNumbers[r] = numbers[Int(index)]
                    }
                } else {
                    var interner = self.interner
                    try strings(field, &cursor, nulls: nulls) { r, b throws(InteropError) in
                        guard let b else { throw .nullKey(file: file, column: field.name, row: base + r) }
                        tickerNumbers[r] = interner.number(b)
                    }
                    self.interner = interner
                }
            } else if i == dateField {
                let validity = try cursor.validity(nulls: nulls)
                let data = try cursor.nextBuffer(minimum: field.dateWidth * n)
                let perDay = field.unitsPerDay
                var zone = dateZone
                var time: (row: Int, units: Int64)?
                for r in 0 ..< n {
                    if let v = validity, (v[r >> 3] >> UInt8(r & 7)) & 1 == 0 {
                        throw .nullKey(file: file, column: field.name, row: base + r)
                    }
                    let value =
                        field.dateWidth == 4
                        ? Int64(data.loadUnaligned(fromByteOffset: 4 * r, as: Int32.self))
                        : data.loadUnaligned(fromByteOffset: 8 * r, as: Int64.self)
                    if perDay == 1 {
                        chunkDates[r] = try InteropValues.storableDay(value, unitsPerDay: 1, file: file, column: field.name, row: base + r)
                        continue
                    }
                    // The day and time of day where the timestamps were taken: in the named time
                    // zone, else as written (naive, or UTC).
                    var (day, units) = InteropValues.dayAndTime(value, unitsPerDay: perDay)
                    if var z = zone {
                        (day, units) = z.localDayAndTime(value, unitsPerDay: perDay)
                        zone = z
                    }
                    if units != 0 && time == nil { time = (r, units) }
                    guard day >= Int64(Day.storableDayNumbers.lowerBound), day <= Int64(Day.storableDayNumbers.upperBound) else {
                        throw InteropValues.dateOutOfRange(
                            value, days: day, unitsPerDay: perDay, file: file, column: field.name, row: base + r)
                    }
                    chunkDates[r] = Int32(truncatingIfNeeded: day)
                }
                dateZone = zone
                if let time, timeOfDay == nil {
                    timeOfDay = InteropSkippedColumn(
                        timeOfDayIn: file, column: field.name, row: base + time.row,
                        text: InteropValues.timeOfDay(time.units, unitsPerDay: perDay)
                            + (field.timezone.map { " in " + $0 } ?? ""))
                }
            } else if skippedFields.contains(i) {
                try ArrowIPCDecoder.skip(field, &cursor, nested: false)
            } else {
                let validity = try cursor.validity(nulls: nulls)
                let width = field.bitWidth / 8
                let data = try cursor.nextBuffer(minimum: width * n)
                let chunk = try ArrowIPCDecoder.numeric(field, data, validity: validity, count: n, file: file)
                if let destination = destinations[i] {
                    guard destination.copy(chunk, toRow: base - destinationOrigin) else {
                        throw bad(
                            m.bodyStart, "Arrow record batch rows \(base) ..< \(base + n) outside the file's \(destination.count) rows")
                    }
                    if let v = chunk.validity { destinationNulls.append((i, base - destinationOrigin, v)) }
                } else {
                    valueChunks[i, default: []].append(chunk)
                }
            }
        }
        if !sawTicker, let symbol = defaultTicker {
            let c = interner.number(symbol)
            for r in 0 ..< n { tickerNumbers[r] = c }
        }
        rowTickers.append(contentsOf: tickerNumbers)
        dates.append(contentsOf: Column(chunkDates), rows: 0 ..< n)
        rows += n
    }

    /// A numeric buffer as a column of the field's element type.
    static func numeric(
        _ field: ArrowField, _ data: UnsafeRawBufferPointer, validity: UnsafeRawBufferPointer?,
        count n: Int, file: String
    ) throws(InteropError) -> AnyColumn {
        let mask = validity.map { InteropValues.bitmask($0, count: n) } ?? nil
        func make<T: ColumnElement>(_: T.Type, _ convert: (Int) -> T) -> Column<T> {
            var c = Column<T>(unsafeUninitializedCount: n) { dst in for r in 0 ..< n { dst[r] = convert(r) } }
            if let mask { c.setValidity(mask) }
            return c
        }
        func raw<T: ColumnElement>(_: T.Type) -> Column<T> {
            var c = Column<T>(unsafeUninitializedCount: n) { dst in
                // Safe: the buffer holds at least n elements (checked by the cursor).
                UnsafeMutableRawPointer(dst.baseAddress!).copyMemory(from: data.baseAddress!, byteCount: n * MemoryLayout<T>.size)
            }
            if let mask { c.setValidity(mask) }
            return c
        }
        if ArrowIPCFormat.TypeID(rawValue: field.type) == .decimal {
            // Little-endian two's complement of bitWidth bits, times 10^-scale.
            let width = field.bitWidth / 8
            if field.elementType == .int64 {
                for r in 0 ..< n where mask.map({ $0[r] }) ?? true {
                    guard
                        InteropDecimal.int64(UnsafeRawBufferPointer(rebasing: data[width * r ..< width * r + width]), bigEndian: false)
                            != nil
                    else {
                        throw .unsupportedColumn(
                            file: file, column: field.name,
                            type: "type \(field.typeDescription) with a value wider than 18 digits in row \(r)")
                    }
                }
                return .int64(
                    make(Int64.self) {
                        InteropDecimal.int64(UnsafeRawBufferPointer(rebasing: data[width * $0 ..< width * $0 + width]), bigEndian: false)
                            ?? 0
                    })
            }
            return .float64(
                make(Double.self) {
                    InteropDecimal.double(
                        UnsafeRawBufferPointer(rebasing: data[width * $0 ..< width * $0 + width]), bigEndian: false, scale: field.scale)
                })
        }
        let isFloat = ArrowIPCFormat.TypeID(rawValue: field.type) == .floatingPoint
        switch (isFloat, field.bitWidth, field.isSigned) {
        case (true, 16, _):
            return .float32(
                make(Float.self) {
                    Float(Float16(bitPattern: UInt16(littleEndian: data.loadUnaligned(fromByteOffset: 2 * $0, as: UInt16.self))))
                })
        case (true, 32, _): return .float32(raw(Float.self))
        case (true, _, _): return .float64(raw(Double.self))
        case (false, 8, true): return .int32(make(Int32.self) { Int32(Int8(bitPattern: data[$0])) })
        case (false, 8, false): return .int32(make(Int32.self) { Int32(data[$0]) })
        case (false, 16, true): return .int32(make(Int32.self) { Int32(data.loadUnaligned(fromByteOffset: 2 * $0, as: Int16.self)) })
        case (false, 16, false): return .int32(make(Int32.self) { Int32(data.loadUnaligned(fromByteOffset: 2 * $0, as: UInt16.self)) })
        case (false, 32, true): return .int32(raw(Int32.self))
        case (false, 32, false): return .int64(make(Int64.self) { Int64(data.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self)) })
        case (false, 64, true): return .int64(raw(Int64.self))
        default:
            for r in 0 ..< n where mask.map({ $0[r] }) ?? true {
                if data.loadUnaligned(fromByteOffset: 8 * r, as: UInt64.self) > UInt64(Int64.max) {
                    throw .unsupportedColumn(file: file, column: field.name, type: "uint64 with a value above 2^63 - 1 in row \(r)")
                }
            }
            return .int64(make(Int64.self) { Int64(data.loadUnaligned(fromByteOffset: 8 * $0, as: Int64.self)) })
        }
    }

    /// The buffers a field of this type has in a record batch, before its children's (a view
    /// type adds its variadic data buffers), or nil for a type this reader does not know.
    static func bufferCount(_ field: ArrowField) -> Int? {
        if field.dictionaryID != nil { return 2 }
        switch ArrowIPCFormat.TypeID(rawValue: field.type) {
        case .null, .runEndEncoded: return 0
        case .structType, .fixedSizeList: return 1
        case .bool, .int, .floatingPoint, .decimal, .date, .time, .timestamp, .interval, .duration, .fixedSizeBinary,
            .list, .largeList, .map:
            return 2
        case .binary, .utf8, .largeBinary, .largeUtf8, .listView, .largeListView: return 3
        case .binaryView, .utf8View: return 2
        // Unions have no validity buffer: type ids, and for dense unions offsets.
        case .union: return field.unionMode == 1 ? 2 : 1
        case nil: return nil
        }
    }

    /// Whether every field of `field`'s tree has buffers this reader can pass over.
    static func canSkip(_ field: ArrowField) -> Bool {
        bufferCount(field) != nil && field.children.allSatisfy(canSkip)
    }

    /// The dictionary ids used in `field`'s tree.
    static func collectDictionaries(_ field: ArrowField, into ids: inout Set<Int64>) {
        if let id = field.dictionaryID { ids.insert(id) }
        for c in field.children { collectDictionaries(c, into: &ids) }
    }

    /// Passes over a skipped field's buffers and its children's nodes and buffers (its own node
    /// is read by the caller when it is a top-level field). The walk is bounded by the schema's
    /// field count (`ArrowField.maximumFieldCount` per field).
    static func skip(_ field: ArrowField, _ cursor: inout BatchCursor, nested: Bool) throws(InteropError) {
        if nested { try cursor.skipNode() }
        // Safe to unwrap: canSkip checked every field of the tree when the schema was read.
        let count = bufferCount(field) ?? 0
        let views = field.isView ? try cursor.nextVariadicCount() : 0
        for _ in 0 ..< count + views { try cursor.skipBuffer() }
        for child in field.children { try skip(child, &cursor, nested: true) }
    }

    func finish(threads: Int = 1) throws(InteropError) -> ImportedColumns {
        var out = ImportedColumns(file: file)
        out.skipped = skipped + (timeOfDay.map { [$0] } ?? [])
        out.symbols = interner.symbols
        out.rowTickers = rowTickers
        out.dates = dates
        out.dateName = fields[dateField].name
        let joined = fields.indices.filter { valueChunks[$0] != nil }
        // The value columns joined on up to `threads` threads, one column each.
        let columns = UnsafeMutablePointer<AnyColumn?>.allocate(capacity: joined.count)
        columns.initialize(repeating: nil, count: joined.count)
        defer {
            columns.deinitialize(count: joined.count)
            columns.deallocate()
        }
        let shared = SharedPointer(base: columns)
        forEachChunk(joined.count, threads: Swift.max(1, threads)) { n, _ in
            let i = joined[n]
            shared.base[n] = InteropValues.concatenate(valueChunks[i] ?? [], as: fields[i].elementType)
        }
        for (n, i) in joined.enumerated() {
            out.names.append(fields[i].name)
            if let column = columns[n] { out.values.append(column) }
        }
        out.metadata = metadata
        out.info = info
        return out
    }
}
