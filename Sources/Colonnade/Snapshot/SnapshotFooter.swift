#if canImport(Glibc)
import Glibc
#endif

/// Where one payload lies in the file and its checksum (`docs/SNAPSHOT_FORMAT.md`, "COLS").
struct SnapshotPayload: Sendable, Equatable {
    /// Byte offset from the start of the file; a multiple of 64.
    var offset: Int
    /// Bytes of data (the payload then holds zeros up to the next multiple of 64).
    var length: Int
    /// The checksum of the padded payload, seeded with `offset`.
    var checksum: UInt64

    /// The payload's extent in the file, padding included.
    var paddedLength: Int { SnapshotFormat.align(length, SnapshotFormat.payloadAlignment) }
}

/// One column's entry in the `COLS` section.
struct SnapshotColumnEntry: Sendable, Equatable {
    var type: ElementType
    var values: SnapshotPayload
    var validity: SnapshotPayload?
}

/// Block summaries of one column, whatever its element type.
enum AnyBlockSummaries: Sendable, Equatable {
    case int32(BlockSummaries<Int32>)
    case int64(BlockSummaries<Int64>)
    case float32(BlockSummaries<Float>)
    case float64(BlockSummaries<Double>)

    init(_ column: AnyColumn) {
        switch column {
        case .int32(let c): self = .int32(c.summaries ?? BlockSummaries(of: c))
        case .int64(let c): self = .int64(c.summaries ?? BlockSummaries(of: c))
        case .float32(let c): self = .float32(c.summaries ?? BlockSummaries(of: c))
        case .float64(let c): self = .float64(c.summaries ?? BlockSummaries(of: c))
        }
    }

    var elementType: ElementType {
        switch self {
        case .int32: .int32
        case .int64: .int64
        case .float32: .float32
        case .float64: .float64
        }
    }

    var count: Int {
        switch self {
        case .int32(let s): s.count
        case .int64(let s): s.count
        case .float32(let s): s.count
        case .float64(let s): s.count
        }
    }
}

/// The decoded footer: everything about a snapshot except its payload bytes.
///
/// Column entries and summaries list the date column first, then the value columns in schema order.
struct SnapshotFooter: Sendable, Equatable {
    /// How much of a footer a decode reads.
    enum Extent: Sendable, Equatable {
        /// Every section (loads, `info`, verification).
        case whole
        /// What a writer building on a file without loading it needs (an append: ARCHITECTURE.md,
        /// *Versions and appends*): the schema, the symbols, the ticker index and the column
        /// entries, decoded and checked as `whole` does. Each ticker's metadata is stepped over
        /// (its counts and lengths checked against the section, not its UTF-8 or keys), and
        /// `SUMM` and `META` are not read: `summaries` is nil and `metadata` empty. Such a footer
        /// never becomes a table (`SnapshotReader.makeTable`).
        case index
    }

    /// How much of the file's footer this holds.
    var extent = Extent.whole

    /// The `TDIC` and `TIDX` sections as a decode of one extent made them: their bytes and the
    /// tickers (with their metadata for `.whole`). A footer of the same extent whose `TDIC`
    /// holds the same bytes has the same symbols, and with the same `TIDX` the same rows, so a
    /// decode given them (`decode(…, reusing:)`) takes them instead of decoding and checking
    /// them again (the day segments of a store mostly list the same tickers, one row each).
    struct DecodedTickers: Sendable {
        var extent: Extent
        var dictionary: [UInt8]
        var index: [UInt8]
        var tickers: [TickerEntry]
        /// Each symbol's ticker number (the table's `numberBySymbol`, made once for every file
        /// that reuses these tickers).
        var numbers: [String: Int32]
    }

    /// This footer's `TDIC` and `TIDX`, for the next decode to reuse.
    var decodedTickers: DecodedTickers?
    var dateColumnName: String
    var schema: [ColumnDescriptor]
    /// Symbols and metadata from `TDIC`, row ranges from `TIDX`.
    var tickers: [TickerEntry]
    var rowCount: Int
    var columns: [SnapshotColumnEntry]
    /// nil when the file has no `SUMM` section (or one with another block size).
    var summaries: [AnyBlockSummaries?]?
    var metadata: [String: String]
    /// Sections this build does not know but may skip (tag, flags, body), kept for tests.
    var unknownSections: [(tag: UInt32, flags: UInt32, body: [UInt8])] = []

    static func == (a: SnapshotFooter, b: SnapshotFooter) -> Bool {
        a.dateColumnName == b.dateColumnName && a.schema == b.schema && a.tickers == b.tickers && a.rowCount == b.rowCount
            && a.columns == b.columns && a.summaries == b.summaries && a.metadata == b.metadata
    }

    /// The name of column entry `i` in messages: the date column's name, then identifiers.
    func columnName(_ i: Int) -> String { i == 0 ? "date" : (i - 1 < schema.count ? schema[i - 1].identifier : "#\(i)") }

    // MARK: Encoding

    /// The footer's bytes: sections in the order SCHM, TDIC, TIDX, COLS, SUMM, META, each padded to 8.
    func encoded() -> [UInt8] {
        var out = SnapshotByteWriter()
        func section(_ tag: UInt32, optional: Bool, _ body: (inout SnapshotByteWriter) -> Void) {
            var w = SnapshotByteWriter()
            body(&w)
            out.writeUInt32LE(tag)
            out.writeUInt32LE(optional ? SnapshotFormat.optionalFlag : 0)
            out.writeUInt64LE(UInt64(w.bytes.count))
            out.bytes.append(contentsOf: w.bytes)
            out.padToAlignment(SnapshotFormat.sectionAlignment)
        }
        section(SnapshotFormat.Tag.schema, optional: false) { w in
            w.writeString(dateColumnName)
            w.writeUInt32LE(UInt32(schema.count))
            for d in schema {
                w.writeString(d.name)
                w.writeString(d.identifier)
                w.writeUInt8(d.type.rawValue)
            }
        }
        section(SnapshotFormat.Tag.tickerDictionary, optional: false) { w in
            w.writeUInt32LE(UInt32(tickers.count))
            for t in tickers {
                w.writeString(t.symbol)
                Self.writeDictionary(t.metadata, to: &w)
            }
        }
        section(SnapshotFormat.Tag.tickerIndex, optional: false) { w in
            w.writeUInt32LE(UInt32(tickers.count))
            for t in tickers {
                w.writeUInt64LE(UInt64(t.firstRow))
                w.writeUInt64LE(UInt64(t.rowCount))
            }
        }
        section(SnapshotFormat.Tag.columns, optional: false) { w in
            w.writeUInt64LE(UInt64(rowCount))
            w.writeUInt32LE(UInt32(columns.count))
            for c in columns {
                w.writeUInt8(c.type.rawValue)
                w.writeUInt8(c.validity == nil ? 0 : 1)
                w.writeUInt16LE(0)
                for p in [c.values, c.validity ?? SnapshotPayload(offset: 0, length: 0, checksum: 0)] {
                    w.writeUInt64LE(UInt64(p.offset))
                    w.writeUInt64LE(UInt64(p.length))
                    w.writeUInt64LE(p.checksum)
                }
            }
        }
        if let summaries {
            section(SnapshotFormat.Tag.summaries, optional: true) { w in
                w.writeUInt32LE(UInt32(BlockSummaries<Int32>.blockRows))
                w.writeUInt32LE(UInt32(summaries.count))
                for s in summaries {
                    guard let s else {
                        w.writeUInt8(0)
                        w.writeUInt8(0)
                        w.writeUInt16LE(0)
                        w.writeUInt32LE(0)
                        continue
                    }
                    w.writeUInt8(1)
                    w.writeUInt8(s.elementType.rawValue)
                    w.writeUInt16LE(0)
                    w.writeUInt32LE(UInt32(s.count))
                    switch s {
                    case .int32(let b): Self.writeSummaries(b, to: &w)
                    case .int64(let b): Self.writeSummaries(b, to: &w)
                    case .float32(let b): Self.writeSummaries(b, to: &w)
                    case .float64(let b): Self.writeSummaries(b, to: &w)
                    }
                }
            }
        }
        section(SnapshotFormat.Tag.metadata, optional: true) { w in Self.writeDictionary(metadata, to: &w) }
        for s in unknownSections {
            section(s.tag, optional: s.flags & SnapshotFormat.optionalFlag != 0) { w in w.bytes.append(contentsOf: s.body) }
        }
        return out.bytes
    }

    /// A dictionary: UInt32 count, then key and value strings, sorted by the keys' UTF-8 bytes
    /// (so the same table always gives the same bytes).
    private static func writeDictionary(_ d: [String: String], to w: inout SnapshotByteWriter) {
        w.writeUInt32LE(UInt32(d.count))
        for key in d.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            w.writeString(key)
            w.writeString(d[key]!)  // Safe: the key comes from the dictionary.
        }
    }

    private static func writeSummaries<T: ColumnElement>(_ s: BlockSummaries<T>, to w: inout SnapshotByteWriter) {
        for v in s.minimums { w.writeRaw(v) }
        for v in s.maximums { w.writeRaw(v) }
        for v in s.unknownCounts { w.writeUInt32LE(v) }
    }

    // MARK: Decoding

    /// Decodes footer bytes. Checks everything that can be checked without knowing the file's size
    /// (counts, types, UTF-8, agreement between sections); the reader checks payload extents.
    /// With `.index`, only what that extent holds is decoded (see ``Extent``).
    /// - Parameter reusing: another footer's tickers decoded for the same extent
    ///   (``decodedTickers``): its symbols (and metadata) taken as this footer's when the `TDIC`
    ///   bytes are the same, and its rows too when
    ///   the `TIDX` bytes are (rows past this file's are then refused by the reader's layout
    ///   check rather than here).
    static func decode(
        _ bytes: UnsafeRawBufferPointer, file: String, rowLimit: Int, extent: Extent = .whole,
        reusing: DecodedTickers? = nil
    ) throws(SnapshotError) -> SnapshotFooter {
        let (sections, unknown) = try sectionBodies(bytes, file: file)
        func required(_ tag: UInt32) throws(SnapshotError) -> SnapshotByteReader {
            guard let body = sections[tag] else {
                throw .malformedFooter(file: file, section: SnapshotFormat.tagName(tag), detail: "required section is missing")
            }
            return SnapshotByteReader(body, file: file, section: SnapshotFormat.tagName(tag))
        }
        var schemaReader = try required(SnapshotFormat.Tag.schema)
        let (dateColumnName, schema) = try decodeSchema(&schemaReader)
        var dictionaryReader = try required(SnapshotFormat.Tag.tickerDictionary)
        var indexReader = try required(SnapshotFormat.Tag.tickerIndex)
        var tickers: [TickerEntry]
        var decoded: DecodedTickers?
        if let reusing, reusing.extent == extent, same(reusing.dictionary, dictionaryReader.bytes) {
            // The same bytes decode to the same symbols; the same index, to the same rows.
            tickers = reusing.tickers
            decoded = reusing
            if !same(reusing.index, indexReader.bytes) {
                try decodeTickerIndex(&indexReader, into: &tickers, rowLimit: rowLimit)
                decoded = DecodedTickers(
                    extent: extent, dictionary: reusing.dictionary, index: Array(indexReader.bytes), tickers: tickers,
                    numbers: reusing.numbers)
            }
        } else {
            let numbers: [String: Int32]
            (tickers, numbers) = try decodeTickerDictionary(&dictionaryReader, metadata: extent == .whole)
            try decodeTickerIndex(&indexReader, into: &tickers, rowLimit: rowLimit)
            decoded = DecodedTickers(
                extent: extent, dictionary: Array(dictionaryReader.bytes), index: Array(indexReader.bytes), tickers: tickers,
                numbers: numbers)
        }
        var columnsReader = try required(SnapshotFormat.Tag.columns)
        let (rowCount, columns) = try decodeColumns(&columnsReader, schema: schema, rowLimit: rowLimit)
        guard extent == .whole else {
            return SnapshotFooter(
                extent: extent, decodedTickers: decoded, dateColumnName: dateColumnName, schema: schema, tickers: tickers,
                rowCount: rowCount, columns: columns, summaries: nil, metadata: [:], unknownSections: unknown)
        }
        var summaries: [AnyBlockSummaries?]?
        if let body = sections[SnapshotFormat.Tag.summaries] {
            var r = SnapshotByteReader(body, file: file, section: "SUMM")
            summaries = try decodeSummaries(&r, columns: columns, schema: schema, rowCount: rowCount)
        }
        var metadata = [String: String]()
        if let body = sections[SnapshotFormat.Tag.metadata] {
            var r = SnapshotByteReader(body, file: file, section: "META")
            metadata = try readDictionary(&r, "table metadata")
            try r.expectEnd()
        }
        return SnapshotFooter(
            decodedTickers: decoded, dateColumnName: dateColumnName, schema: schema, tickers: tickers, rowCount: rowCount,
            columns: columns, summaries: summaries, metadata: metadata, unknownSections: unknown)
    }

    /// Whether `a` holds exactly the bytes of `b`.
    private static func same(_ a: [UInt8], _ b: UnsafeRawBufferPointer) -> Bool {
        a.count == b.count && a.withUnsafeBytes { a in a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
    }

    /// The footer's sections by tag (each known one at most once), and the optional sections this
    /// version does not know, kept whole; an unknown required section is refused.
    private static func sectionBodies(
        _ bytes: UnsafeRawBufferPointer, file: String
    ) throws(SnapshotError) -> ([UInt32: UnsafeRawBufferPointer], [(tag: UInt32, flags: UInt32, body: [UInt8])]) {
        var sections = [UInt32: UnsafeRawBufferPointer]()
        var unknown = [(tag: UInt32, flags: UInt32, body: [UInt8])]()
        var cursor = SnapshotByteReader(bytes, file: file, section: "footer")
        while cursor.remaining > 0 {
            let start = cursor.offset
            let tag = try cursor.readUInt32LE("section tag")
            let name = SnapshotFormat.tagName(tag)
            let flags = try cursor.readUInt32LE("flags of section \(name)")
            let length = try cursor.readUInt64LE("length of section \(name)")
            // Bit 0 marks an optional section; every other bit is 0 in 1.x (SNAPSHOT_FORMAT.md, Footer).
            guard flags & ~SnapshotFormat.optionalFlag == 0 else {
                throw .malformedFooter(
                    file: file, section: name,
                    detail: "section at footer byte \(start) has flags 0x\(String(flags, radix: 16)); only bit 0 (optional) may be set")
            }
            guard length <= UInt64(cursor.remaining) else {
                throw .malformedFooter(
                    file: file, section: name,
                    detail: "section at footer byte \(start) claims \(length) bytes, \(cursor.remaining) left")
            }
            let body = UnsafeRawBufferPointer(rebasing: bytes[cursor.offset ..< cursor.offset + Int(length)])
            cursor.offset += SnapshotFormat.align(Int(length), SnapshotFormat.sectionAlignment)
            if cursor.offset > bytes.count {
                throw .malformedFooter(file: file, section: name, detail: "section padding runs past the footer")
            }
            let known = [
                SnapshotFormat.Tag.schema, SnapshotFormat.Tag.tickerDictionary, SnapshotFormat.Tag.tickerIndex,
                SnapshotFormat.Tag.columns, SnapshotFormat.Tag.summaries, SnapshotFormat.Tag.metadata,
            ].contains(tag)
            if !known {
                if flags & SnapshotFormat.optionalFlag == 0 { throw .unsupportedSection(file: file, tag: name) }
                unknown.append((tag, flags, Array(body)))
                continue
            }
            if sections.updateValue(body, forKey: tag) != nil {
                throw .malformedFooter(file: file, section: name, detail: "section appears twice")
            }
        }
        return (sections, unknown)
    }

    /// `SCHM`: the date column's name and the value columns (identifiers usable and distinct).
    private static func decodeSchema(_ r: inout SnapshotByteReader) throws(SnapshotError) -> (String, [ColumnDescriptor]) {
        let dateColumnName = try r.readString("date column name")
        let columnCount = try r.readCount32("column count", minimumItemBytes: 9)
        guard columnCount <= QuoteTable.maximumColumnCount else {
            throw r.fail("\(columnCount) value columns; a table holds at most \(QuoteTable.maximumColumnCount)")
        }
        let dateIdentifier = ColumnDescriptor.identifier(for: dateColumnName)
        var schema = [ColumnDescriptor]()
        var identifiers = Set<String>()
        for i in 0 ..< columnCount {
            let name = try r.readString("name of column \(i)")
            let identifier = try r.readString("identifier of column \(i)")
            let raw = try r.readUInt8("type of column \(i)")
            guard let type = ElementType(rawValue: raw) else { throw r.fail("column \(name) has unknown element type \(raw)") }
            if let reason = ColumnDescriptor.unusableIdentifierReason(identifier, dateColumnIdentifier: dateIdentifier) {
                throw r.fail("column \(i) (\(name)): \(reason)")
            }
            guard identifiers.insert(identifier).inserted else { throw r.fail("two columns have the identifier \(identifier)") }
            var d = ColumnDescriptor(name: name, type: type)
            d.identifier = identifier
            schema.append(d)
        }
        try r.expectEnd()
        return (dateColumnName, schema)
    }

    /// `TDIC`: distinct symbols and their metadata (without `metadata`, stepped over), rows not yet known.
    private static func decodeTickerDictionary(
        _ r: inout SnapshotByteReader, metadata: Bool
    ) throws(SnapshotError) -> ([TickerEntry], [String: Int32]) {
        let tickerCount = try r.readCount32("ticker count", minimumItemBytes: 8)
        var tickers = [TickerEntry]()
        tickers.reserveCapacity(tickerCount)
        var numbers = [String: Int32](minimumCapacity: tickerCount)
        for i in 0 ..< tickerCount {
            let symbol = try r.readString("symbol of ticker \(i)")
            guard numbers.updateValue(Int32(i), forKey: symbol) == nil else { throw r.fail("ticker \(symbol) appears twice") }
            if metadata {
                tickers.append(TickerEntry(symbol: symbol, metadata: try readDictionary(&r, "metadata of ticker \(symbol)")))
            } else {
                try skipDictionary(&r, "metadata of ticker \(symbol)")
                tickers.append(TickerEntry(symbol: symbol))
            }
        }
        try r.expectEnd()
        return (tickers, numbers)
    }

    /// `TIDX`: each ticker's first row and row count, one entry per dictionary entry.
    private static func decodeTickerIndex(
        _ r: inout SnapshotByteReader, into tickers: inout [TickerEntry],
        rowLimit: Int
    ) throws(SnapshotError) {
        let indexCount = Int(try r.readUInt32LE("ticker count"))
        guard indexCount == tickers.count else { throw r.fail("index has \(indexCount) tickers, the dictionary \(tickers.count)") }
        for i in 0 ..< tickers.count {
            tickers[i].firstRow = try r.readCount64("first row of ticker \(tickers[i].symbol)", limit: rowLimit)
            tickers[i].rowCount = try r.readCount64("row count of ticker \(tickers[i].symbol)", limit: rowLimit)
        }
        try r.expectEnd()
    }

    /// `COLS`: the row count and, for the date column then each value column, its type (as the
    /// schema says), validity flag and payload extents and checksums.
    private static func decodeColumns(
        _ r: inout SnapshotByteReader, schema: [ColumnDescriptor],
        rowLimit: Int
    ) throws(SnapshotError) -> (Int, [SnapshotColumnEntry]) {
        let rowCount = try r.readCount64("row count", limit: rowLimit)
        let entryCount = Int(try r.readUInt32LE("column count"))
        guard entryCount == schema.count + 1 else {
            throw r.fail("\(entryCount) column entries for \(schema.count) value columns and the date column")
        }
        var columns = [SnapshotColumnEntry]()
        for i in 0 ..< entryCount {
            let name = i == 0 ? "date" : schema[i - 1].identifier
            let raw = try r.readUInt8("type of column \(name)")
            guard let type = ElementType(rawValue: raw) else { throw r.fail("column \(name) has unknown element type \(raw)") }
            let expected: ElementType = i == 0 ? .int32 : schema[i - 1].type
            guard type == expected else { throw r.fail("column \(name) is \(type) here but \(expected) in the schema") }
            let hasValidity = try r.readUInt8("validity flag of column \(name)")
            guard hasValidity <= 1 else { throw r.fail("column \(name) has validity flag \(hasValidity)") }
            guard try r.readUInt16LE("reserved") == 0 else { throw r.fail("reserved bytes of column \(name) are not zero") }
            var payloads = [SnapshotPayload]()
            for part in ["values", "validity"] {
                let offset = try r.readCount64("\(part) offset of column \(name)", limit: Int.max >> 2)
                let length = try r.readCount64("\(part) length of column \(name)", limit: Int.max >> 2)
                let checksum = try r.readUInt64LE("\(part) checksum of column \(name)")
                payloads.append(SnapshotPayload(offset: offset, length: length, checksum: checksum))
            }
            columns.append(SnapshotColumnEntry(type: type, values: payloads[0], validity: hasValidity == 1 ? payloads[1] : nil))
        }
        try r.expectEnd()
        return (rowCount, columns)
    }

    /// `SUMM` (optional): block summaries per column, or `nil` for the whole section when it was
    /// written for another block size (it is then ignored and the summaries recomputed).
    private static func decodeSummaries(
        _ r: inout SnapshotByteReader, columns: [SnapshotColumnEntry], schema: [ColumnDescriptor],
        rowCount: Int
    ) throws(SnapshotError) -> [AnyBlockSummaries?]? {
        let blockRows = Int(try r.readUInt32LE("block rows"))
        let count = Int(try r.readUInt32LE("column count"))
        guard blockRows == BlockSummaries<Int32>.blockRows else { return nil }
        guard count == columns.count else { throw r.fail("\(count) summaries for \(columns.count) columns") }
        let blocks = BlockSummaries<Int32>.blockCount(forRows: rowCount)
        var list = [AnyBlockSummaries?]()
        for i in 0 ..< count {
            let name = i == 0 ? "date" : schema[i - 1].identifier
            let present = try r.readUInt8("presence of summaries of \(name)")
            let raw = try r.readUInt8("type of summaries of \(name)")
            _ = try r.readUInt16LE("reserved")
            let n = Int(try r.readUInt32LE("block count of \(name)"))
            guard present != 0 else {
                list.append(nil)
                continue
            }
            guard raw == columns[i].type.rawValue else { throw r.fail("summaries of \(name) have type \(raw)") }
            guard n == blocks else { throw r.fail("\(n) blocks of summaries for column \(name), \(rowCount) rows need \(blocks)") }
            switch columns[i].type {
            case .int32: list.append(.int32(try readSummaries(&r, n, name)))
            case .int64: list.append(.int64(try readSummaries(&r, n, name)))
            case .float32: list.append(.float32(try readSummaries(&r, n, name)))
            case .float64: list.append(.float64(try readSummaries(&r, n, name)))
            }
        }
        try r.expectEnd()
        return list
    }

    private static func readDictionary(_ r: inout SnapshotByteReader, _ what: String) throws(SnapshotError) -> [String: String] {
        let n = try r.readCount32("\(what) count", minimumItemBytes: 8)
        var out = [String: String](minimumCapacity: n)
        for _ in 0 ..< n {
            let key = try r.readString("\(what) key")
            let value = try r.readString("\(what) value")
            guard out.updateValue(value, forKey: key) == nil else { throw r.fail("\(what) has key \(key) twice") }
        }
        return out
    }

    /// Steps over a dictionary, checking only that its count and every string length fit the section.
    private static func skipDictionary(_ r: inout SnapshotByteReader, _ what: @autoclosure () -> String) throws(SnapshotError) {
        let n = try r.readCount32("\(what()) count", minimumItemBytes: 8)
        for _ in 0 ..< 2 * n { try r.skipString("\(what()) entry") }
    }

    private static func readSummaries<T: ColumnElement>(
        _ r: inout SnapshotByteReader, _ n: Int, _ name: String
    ) throws(SnapshotError) -> BlockSummaries<T> {
        let mins: [T] = try r.readArray(n, "minimums of \(name)")
        let maxs: [T] = try r.readArray(n, "maximums of \(name)")
        let unknowns: [UInt32] = try r.readArray(n, "unknown counts of \(name)")
        return BlockSummaries(minimums: mins, maximums: maxs, unknownCounts: unknowns)
    }
}
