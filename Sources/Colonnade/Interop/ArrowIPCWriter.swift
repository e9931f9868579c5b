/// Writes a table as Arrow IPC, the file format (with footer) or the stream format.
///
///     try ArrowIPCWriter(table: table, format: .file).write(toFile: "quotes.arrow")
///
/// Schema: `ticker` dictionary-encoded utf8 (int32 indices, the dictionary is the ticker list in
/// code order), `date` date32, then every value column under its identifier with its own element
/// type (float64, float32, int64, int32) and its validity bitmap. Table metadata becomes schema
/// metadata, plus a `colonnade` key (see `InteropTableInfo`) so our reader round-trips exactly.
///
/// Value, date and validity buffers are written straight from the column buffers (the table's
/// layout is Arrow's: little-endian values, LSB-first validity bits, 64-byte aligned), so the only
/// per-row work is the ticker index column. Rows go in record batches of `batchRows` (a multiple
/// of 64, so every batch's validity starts on a word boundary); buffers are 64-byte aligned.
public struct ArrowIPCWriter {
    /// The IPC flavour.
    public enum Format: Sendable {
        /// The random-access file format: `ARROW1` magic, the stream, a footer.
        case file
        /// The streaming format, for pipes: messages and an end-of-stream marker.
        case stream
    }

    /// The table to write.
    public var table: QuoteTable
    /// File or stream.
    public var format: Format
    /// Rows per record batch (rounded up to a multiple of 64).
    public var batchRows: Int
    /// Called with the rows and bytes of each record batch once it is written (for a progress
    /// display).
    public var progress: (@Sendable (_ rows: Int, _ bytes: Int) -> Void)?

    /// Record batch body compression (Arrow's `BodyCompression`, each buffer on its own).
    public enum Compression: Sendable, Equatable {
        /// One LZ4 frame per buffer (`LZ4_FRAME`).
        case lz4Frame
        /// One Zstandard frame per buffer, at a level of `ZstdCompressor.levels`.
        case zstd(level: Int)
    }

    /// The record batches' compression; nil: uncompressed buffers written straight from the columns.
    /// A buffer that does not shrink is written uncompressed, marked by a length of -1.
    public var compression: Compression?

    /// A writer of `table` in `format`, with batches of about a million rows.
    public init(table: QuoteTable, format: Format, batchRows: Int = 1 << 20) {
        self.table = table
        self.format = format
        self.batchRows = max(64, (batchRows + 63) / 64 * 64)
    }

    /// Writes the file at `path` through a `ReplacementFile` (a locked temporary, fsync, rename;
    /// the replaced file's permissions kept).
    /// - Throws: `InteropError.cannotReplace` or `.io` naming `path`.
    public func write(toFile path: String, durable: Bool = true) throws(InteropError) {
        try ReplacementFile.write(to: path, durable: durable) { output throws(InteropError) in try write(to: output) }
    }

    /// Writes everything to `output`.
    /// - Complexity: O(rows) for the ticker indices; every other buffer is copied once by `write(2)`.
    public func write(to output: InteropOutput) throws(InteropError) {
        let start = output.position
        let schema = schemaNode()
        try output.reserve(estimatedLength(schemaBytes: schema.serialized().count))
        if format == .file {
            try output.write(ArrowIPCFormat.magic + [0, 0])
        }
        _ = try writeMessage(.schema, header: schema, bodyLength: 0, to: output)

        var dictionaryBlocks: [Block] = []
        var batchBlocks: [Block] = []
        dictionaryBlocks.append(try writeDictionary(to: output, start: start))
        var row = 0
        repeat {
            let end = min(table.rowCount, row + batchRows)
            let before = output.position
            batchBlocks.append(try writeBatch(rows: row ..< end, to: output, start: start))
            progress?(end - row, output.position - before)
            row = end
        } while row < table.rowCount
        // End of stream.
        try output.write([0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0])
        if format == .file {
            let footer = FlatBufferNode.table([
                .int16(ArrowIPCFormat.metadataVersion),
                .node(schema),
                .node(Self.blocks(dictionaryBlocks)),
                .node(Self.blocks(batchBlocks)),
            ]).serialized()
            try output.write(footer)
            var length = FlatBufferByteArray()
            length.appendUInt32LE(UInt32(footer.count))
            try output.write(length.bytes + ArrowIPCFormat.magic)
        }
    }

    /// About the length of the output, a little above it: every buffer at its aligned length (a
    /// validity bitmap for every value column), and generous room for the messages' metadata.
    func estimatedLength(schemaBytes: Int) -> Int {
        let fields = 2 + table.columns.count
        var body = 0
        var row = 0
        var batches = 0
        repeat {
            let n = min(table.rowCount, row + batchRows) - row
            body += 2 * ((n * 4 + 63) / 64 * 64)
            for c in table.columns { body += ((n + 7) / 8 + 63) / 64 * 64 + (n * c.elementType.byteWidth + 63) / 64 * 64 }
            batches += 1
            row += n
        } while row < table.rowCount
        let symbols = table.tickers.reduce(0) { $0 + $1.symbol.utf8.count }
        let dictionary = ((table.tickers.count + 1) * 4 + 63) / 64 * 64 + (symbols + 63) / 64 * 64
        let perMessage = 256 + 48 * fields
        return 64 + 2 * schemaBytes + (batches + 2) * perMessage + body + dictionary
    }

    /// A `Block` of the footer: where a message starts, its metadata length, its body length.
    struct Block {
        var offset: Int
        var metadataLength: Int
        var bodyLength: Int
    }

    static func blocks(_ blocks: [Block]) -> FlatBufferNode {
        var raw = FlatBufferByteArray()
        for b in blocks {
            raw.appendUInt64LE(UInt64(b.offset))
            raw.appendUInt32LE(UInt32(b.metadataLength))
            raw.appendUInt32LE(0)
            raw.appendUInt64LE(UInt64(b.bodyLength))
        }
        return .structs(raw.bytes, count: blocks.count, alignment: 8)
    }

    // MARK: Schema

    func schemaNode() -> FlatBufferNode {
        var fields: [FlatBufferNode] = []
        let intType = FlatBufferNode.table([.int32(32), .bool(true)])
        fields.append(
            Self.field(
                name: "ticker", nullable: false, type: .utf8, typeTable: .table([]),
                dictionary: .table([.int64(0), .node(intType), .bool(false)])))
        fields.append(Self.field(name: "date", nullable: false, type: .date, typeTable: .table([.int16(0)])))
        for d in table.schema {
            let (type, typeTable) = Self.arrowType(d.type)
            fields.append(Self.field(name: d.identifier, nullable: true, type: type, typeTable: typeTable))
        }
        var metadata = table.metadata.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        metadata.append((InteropTableInfo.key, InteropTableInfo(table: table).encoded()))
        return .table([
            .int16(0),  // little-endian
            .node(.tables(fields)),
            .node(.tables(metadata.map { FlatBufferNode.table([.node(.string($0.0)), .node(.string($0.1))]) })),
        ])
    }

    static func arrowType(_ type: ElementType) -> (ArrowIPCFormat.TypeID, FlatBufferNode) {
        switch type {
        case .int32: (.int, .table([.int32(32), .bool(true)]))
        case .int64: (.int, .table([.int32(64), .bool(true)]))
        case .float32: (.floatingPoint, .table([.int16(1)]))
        case .float64: (.floatingPoint, .table([.int16(2)]))
        }
    }

    static func field(
        name: String, nullable: Bool, type: ArrowIPCFormat.TypeID, typeTable: FlatBufferNode,
        dictionary: FlatBufferNode? = nil
    ) -> FlatBufferNode {
        .table([
            .node(.string(name)),
            .bool(nullable),
            .uint8(type.rawValue),
            .node(typeTable),
            dictionary.map { .node($0) },
            .node(.tables([])),
        ])
    }

    // MARK: Messages

    /// One buffer of a message body: where its bytes are (nil: zeros) and how many.
    struct BodyPiece {
        var base: UnsafeRawPointer?
        var length: Int
    }

    /// Writes an encapsulated message (continuation, length, flatbuffer, padding) and its body;
    /// returns its footer block (offset relative to the output's position at `start`).
    func writeMessage(
        _ header: ArrowIPCFormat.Header, header node: FlatBufferNode, bodyLength: Int,
        to output: InteropOutput, start: Int = 0, body: [BodyPiece] = []
    ) throws(InteropError) -> Block {
        let offset = output.position - start
        let message = FlatBufferNode.table([
            .int16(ArrowIPCFormat.metadataVersion),
            .uint8(header.rawValue),
            .node(node),
            .int64(Int64(bodyLength)),
        ]).serialized()
        let padded = (message.count + 8 + 7) / 8 * 8 - 8
        var prefix = FlatBufferByteArray()
        prefix.appendUInt32LE(ArrowIPCFormat.continuation)
        prefix.appendUInt32LE(UInt32(padded))
        try output.write(prefix.bytes + message + [UInt8](repeating: 0, count: padded - message.count))
        var written = 0
        for piece in body {
            if let base = piece.base, piece.length > 0 {
                try output.write(UnsafeRawBufferPointer(start: base, count: piece.length))
            }
            let aligned = (piece.length + 63) / 64 * 64
            try output.writeZeros(aligned - piece.length)
            written += aligned
        }
        assert(written == bodyLength)
        return Block(offset: offset, metadataLength: padded + 8, bodyLength: bodyLength)
    }

    /// The record batch header for `pieces` grouped per field as (length, nulls, buffers).
    /// Each piece compressed on its own, in parallel: the uncompressed length (Int64, little-endian)
    /// and the frame, or -1 and the bytes when the frame would not be smaller; empty pieces stay empty.
    static func compress(_ pieces: [BodyPiece], _ compression: Compression) -> [[UInt8]] {
        var out = [[UInt8]](repeating: [], count: pieces.count)
        out.withUnsafeMutableBufferPointer { slots in
            let shared = SharedPointer(base: slots.baseAddress!)
            forEachChunk(pieces.count, threads: QueryOptions.availableCores) { i, _ in
                let p = pieces[i]
                guard p.length > 0 else { return }
                let raw = p.base.map { UnsafeRawBufferPointer(start: $0, count: p.length) }
                let zeros = [UInt8](repeating: 0, count: raw == nil ? p.length : 0)
                let frame: [UInt8] = zeros.withUnsafeBytes { z in
                    let input = raw ?? z
                    switch compression {
                    case .lz4Frame: return LZ4Compressor.compressFrame(input)
                    case .zstd(let level): return ZstdCompressor.compress(input, level: level)
                    }
                }
                var bytes: [UInt8] = []
                if frame.count < p.length {
                    withUnsafeBytes(of: Int64(p.length).littleEndian) { bytes.append(contentsOf: $0) }
                    bytes.append(contentsOf: frame)
                } else {
                    withUnsafeBytes(of: Int64(-1).littleEndian) { bytes.append(contentsOf: $0) }
                    if let raw { bytes.append(contentsOf: raw) } else { bytes.append(contentsOf: zeros) }
                }
                // Safe: worker i alone writes slot i.
                shared.base[i] = bytes
            }
        }
        return out
    }

    static func recordBatch(
        length: Int, nodes: [(Int, Int)], pieces: [BodyPiece], compression: FlatBufferNode? = nil
    ) -> (FlatBufferNode, Int) {
        var nodeBytes = FlatBufferByteArray()
        for (n, nulls) in nodes {
            nodeBytes.appendUInt64LE(UInt64(n))
            nodeBytes.appendUInt64LE(UInt64(nulls))
        }
        var bufferBytes = FlatBufferByteArray()
        var offset = 0
        for p in pieces {
            bufferBytes.appendUInt64LE(UInt64(offset))
            bufferBytes.appendUInt64LE(UInt64(p.length))
            offset += (p.length + 63) / 64 * 64
        }
        let node = FlatBufferNode.table([
            .int64(Int64(length)),
            .node(.structs(nodeBytes.bytes, count: nodes.count, alignment: 8)),
            .node(.structs(bufferBytes.bytes, count: pieces.count, alignment: 8)),
            compression.map { .node($0) },
        ])
        return (node, offset)
    }

    func writeDictionary(to output: InteropOutput, start: Int) throws(InteropError) -> Block {
        var offsets: [Int32] = [0]
        var data: [UInt8] = []
        offsets.reserveCapacity(table.tickers.count + 1)
        for t in table.tickers {
            data.append(contentsOf: t.symbol.utf8)
            offsets.append(Int32(truncatingIfNeeded: data.count))
        }
        return try withInteropBytes(offsets) { o throws(InteropError) in
            try withInteropBytes(data) { d throws(InteropError) in
                let pieces = [
                    BodyPiece(base: nil, length: 0), BodyPiece(base: o.baseAddress, length: o.count),
                    BodyPiece(base: d.baseAddress, length: d.count),
                ]
                let (batch, bodyLength) = Self.recordBatch(length: table.tickers.count, nodes: [(table.tickers.count, 0)], pieces: pieces)
                let header = FlatBufferNode.table([.int64(0), .node(batch), .bool(false)])
                return try writeMessage(.dictionaryBatch, header: header, bodyLength: bodyLength, to: output, start: start, body: pieces)
            }
        }
    }

    func writeBatch(rows: Range<Int>, to output: InteropOutput, start: Int) throws(InteropError) -> Block {
        let n = rows.count
        // The ticker index of every row, from the ticker ranges.
        var codes = [Int32](repeating: 0, count: n)
        codes.withUnsafeMutableBufferPointer { out in
            for (code, t) in table.tickers.enumerated() {
                let lo = max(t.firstRow, rows.lowerBound), hi = min(t.firstRow + t.rowCount, rows.upperBound)
                if lo < hi {
                    // Safe: lo..<hi lies within rows, so lo - rows.lowerBound ..< hi - rows.lowerBound within out.
                    out.baseAddress!.advanced(by: lo - rows.lowerBound).update(repeating: Int32(code), count: hi - lo)
                }
            }
        }
        var nodes: [(Int, Int)] = [(n, 0), (n, 0)]
        var pieces: [BodyPiece] = []
        var keepAlive: [ColumnStorage] = []
        return try withInteropBytes(codes) { c throws(InteropError) in
            pieces.append(BodyPiece(base: nil, length: 0))
            pieces.append(BodyPiece(base: c.baseAddress, length: c.count))
            let dates = table.dates.valueStorage
            keepAlive.append(dates)
            pieces.append(BodyPiece(base: nil, length: 0))
            pieces.append(BodyPiece(base: UnsafeRawPointer(dates.base) + rows.lowerBound * 4, length: n * 4))
            for column in table.columns {
                let (storage, width) = SnapshotWriter.valueStorage(column)
                keepAlive.append(storage)
                var nulls = 0
                if let validity = column.validity {
                    let words = validity.wordStorage
                    keepAlive.append(words)
                    nulls = validity.withUnsafeWords { w in
                        var set = 0
                        let first = rows.lowerBound / 64, last = (rows.upperBound + 63) / 64
                        // Safe: first..<last are words of rows inside the bitmap; padding bits are zero.
                        for i in first ..< last { set += w[i].nonzeroBitCount }
                        return n - set
                    }
                    if nulls > 0 {
                        pieces.append(BodyPiece(base: UnsafeRawPointer(words.base) + rows.lowerBound / 8, length: (n + 7) / 8))
                    } else {
                        pieces.append(BodyPiece(base: nil, length: 0))
                    }
                } else {
                    pieces.append(BodyPiece(base: nil, length: 0))
                }
                pieces.append(BodyPiece(base: UnsafeRawPointer(storage.base) + rows.lowerBound * width, length: n * width))
                nodes.append((n, nulls))
            }
            var compressed: [[UInt8]] = []
            if let compression {
                compressed = Self.compress(pieces, compression)
                // Safe: `compressed` lives until the message is written below.
                pieces = compressed.map { c in c.withUnsafeBytes { BodyPiece(base: c.isEmpty ? nil : $0.baseAddress, length: c.count) } }
            }
            var (batch, bodyLength) = Self.recordBatch(length: n, nodes: nodes, pieces: pieces)
            if let compression {
                let codec: UInt8 = compression == .lz4Frame ? 0 : 1
                (batch, bodyLength) = Self.recordBatch(
                    length: n, nodes: nodes, pieces: pieces,
                    compression: .table([.uint8(codec), .uint8(0)]))
            }
            let block = try withExtendedLifetime(compressed) { () throws(InteropError) -> Block in
                try writeMessage(.recordBatch, header: batch, bodyLength: bodyLength, to: output, start: start, body: pieces)
            }
            withExtendedLifetime(keepAlive) {}
            return block
        }
    }
}
