@testable import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing

/// What our Arrow IPC output says about itself, message by message (Message.fbs, Schema.fbs):
/// `ticker` a dictionary-encoded utf8 field with its dictionary batch, `date` a `date32` (Date,
/// unit DAY), value columns their own types, a validity buffer exactly when a column has nulls in
/// the batch, every buffer at a 64-byte aligned offset with a 64-byte multiple of padding, message
/// bodies starting on 64-byte boundaries, table metadata as schema metadata. Round trips alone
/// cannot see any of this (our reader accepts any alignment and any dictionary choice).
@Suite struct ArrowLayoutTests {
    struct Buffer {
        var offset: Int
        var length: Int
    }

    /// The buffers of a record batch (or a dictionary batch's data), from the flatbuffer.
    static func buffers(
        _ decoder: ArrowIPCDecoder, _ m: ArrowIPCDecoder.Message, _ batch: FlatBufferTable
    ) throws -> (rows: Int, nulls: [Int], buffers: [Buffer]) {
        let cursor = try ArrowIPCDecoder.BatchCursor(decoder, m, batch)
        var out: [Buffer] = []
        for i in 0 ..< cursor.buffers.count {
            let p = cursor.buffers.start + 16 * i
            out.append(Buffer(offset: Int(try cursor.reader.uint64(at: p)), length: Int(try cursor.reader.uint64(at: p + 8))))
        }
        var nulls: [Int] = []
        for i in 0 ..< cursor.nodes.count {
            nulls.append(Int(try cursor.reader.uint64(at: cursor.nodes.start + 16 * i + 8)))
        }
        return (cursor.length, nulls, out)
    }

    @Test(arguments: [ArrowIPCWriter.Format.file, .stream])
    func messagesAndBuffersAreAsTheIssueAsks(format: ArrowIPCWriter.Format) throws {
        var table = TestTables.random(rows: 3_000, tickers: 9, seed: 41, nullRate: 0.02)
        table.metadata = ["source": "layout test"]
        let out = MemoryInteropOutput()
        // 1,000 rows are rounded up to a multiple of 64 (so validity bytes never straddle batches): 1,024.
        try ArrowIPCWriter(table: table, format: format, batchRows: 1_000).write(to: out)
        let bytes = out.bytes
        if format == .file {
            #expect(Array(bytes.prefix(6)) == Array("ARROW1".utf8) && Array(bytes.suffix(6)) == Array("ARROW1".utf8))
        }
        var schemaSeen = false, dictionaries = 0, batches = 0, checkedValidity = 0
        try bytes.withUnsafeBytes { raw in
            var decoder = ArrowIPCDecoder(bytes: raw, file: "memory", defaultTicker: nil)
            var offset = format == .file ? 8 : 0
            var rowsSoFar = 0
            while offset < raw.count, let m = try decoder.message(at: offset) {
                #expect(m.bodyStart % 8 == 0, "a body starts 8-byte aligned in the file (the IPC format's rule)")
                switch ArrowIPCFormat.Header(rawValue: m.headerType) {
                case .schema:
                    try decoder.readSchema(m.header)
                    schemaSeen = true
                    let fields = decoder.fields
                    #expect(fields.map(\.name) == ["ticker", "date"] + table.schema.map(\.identifier))
                    #expect(fields[0].isString && fields[0].dictionaryID != nil, "ticker: dictionary-encoded utf8")
                    #expect(ArrowIPCFormat.TypeID(rawValue: fields[1].type) == .date && fields[1].unit == 0, "date32: Date, unit DAY")
                    for (f, d) in zip(fields.dropFirst(2), table.schema) {
                        #expect(f.elementType == d.type && f.dictionaryID == nil, "\(d.name): \(f.typeDescription)")
                    }
                    #expect(decoder.metadata["source"] == "layout test", "table metadata as schema metadata")
                case .dictionaryBatch:
                    dictionaries += 1
                    let data = try #require(try m.header.table(ArrowIPCFormat.DictionaryBatch.data))
                    let b = try Self.buffers(decoder, m, data)
                    #expect(b.rows == table.tickers.count, "one entry per ticker")
                    for buffer in b.buffers { #expect(buffer.offset % 64 == 0, "dictionary buffer at body offset \(buffer.offset)") }
                    try decoder.readDictionary(m)
                case .recordBatch:
                    batches += 1
                    let b = try Self.buffers(decoder, m, m.header)
                    #expect(b.rows == min(1_024, table.rowCount - rowsSoFar))
                    // Buffers per field: ticker (validity, indices), date (validity, data), each value (validity, data).
                    #expect(b.buffers.count == 2 * (2 + table.schema.count))
                    for (i, buffer) in b.buffers.enumerated() {
                        #expect(buffer.offset % 64 == 0, "buffer \(i) at body offset \(buffer.offset)")
                        #expect(buffer.offset + buffer.length <= m.bodyLength)
                    }
                    #expect(m.bodyLength % 64 == 0, "the body is padded to 64 bytes")
                    #expect(b.buffers[0].length == 0 && b.buffers[2].length == 0, "ticker and date are never null: no validity")
                    #expect(b.buffers[3].length == 4 * b.rows, "date32: 4 bytes per row")
                    for (c, d) in table.schema.enumerated() {
                        let rows = rowsSoFar ..< rowsSoFar + b.rows
                        let nulls = rows.filter { table.columns[c].isNull($0) }.count
                        #expect(b.nulls[2 + c] == nulls, "\(d.name): null count")
                        let validity = b.buffers[4 + 2 * c]
                        #expect(
                            nulls == 0 ? validity.length == 0 : validity.length >= (b.rows + 7) / 8,
                            "\(d.name): validity exactly when nulls")
                        if nulls > 0 { checkedValidity += 1 }
                        #expect(b.buffers[5 + 2 * c].length == d.type.byteWidth * b.rows, "\(d.name): data")
                    }
                    try decoder.readBatch(m)
                    rowsSoFar += b.rows
                case nil:
                    Issue.record("message type \(m.headerType)")
                }
                offset = m.end
            }
            #expect(rowsSoFar == table.rowCount)
        }
        #expect(schemaSeen && dictionaries >= 1 && batches == 3 && checkedValidity > 0)
    }
}
