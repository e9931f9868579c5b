/// A Huffman decoding table for literals (RFC 8878 §4.2): `1 << maximumBits` entries, indexed by
/// the next `maximumBits` bits of a stream; each gives the symbol and its code's length.
struct ZstdHuffmanTable {
    /// Entry `i`: the symbol in the low byte, the code length in the high byte.
    var entries: [UInt16]
    /// The longest code's length, 1...11.
    var maximumBits: Int
    /// Entry `i`: the one or two symbols whose codes the next `maximumBits` bits `i` begin with
    /// (a second only when its whole code is among those bits): first symbol in bits 0-7, second
    /// in 8-15, the bits used in 16-23, the symbol count (1 or 2) in 24-31. Decoding two symbols
    /// per lookup, as the reference decoder's "X2" tables do.
    var pairs: [UInt32]

    /// Reads a Huffman tree description (RFC 8878 §4.2.1) from `base[start ..< end]`.
    /// - Returns: the table and the offset after the description.
    /// - Throws: `truncated` or `malformed` (weights that do not form a complete code).
    static func read(from base: UnsafeRawPointer, start: Int, end: Int) throws(ZstdError) -> (table: ZstdHuffmanTable, end: Int) {
        guard start < end else { throw .truncated(offset: start, needed: 1) }
        // Safe: start < end.
        let header = Int(base.load(fromByteOffset: start, as: UInt8.self))
        var weights = [UInt8]()
        weights.reserveCapacity(256)
        let after: Int
        if header >= 128 {
            let count = header - 127
            let bytes = (count + 1) / 2
            guard start + 1 + bytes <= end else { throw .truncated(offset: end, needed: start + 1 + bytes - end) }
            for i in 0 ..< count {
                // Safe: start + 1 + i / 2 < start + 1 + bytes <= end.
                let byte = base.load(fromByteOffset: start + 1 + i / 2, as: UInt8.self)
                weights.append(i & 1 == 0 ? byte >> 4 : byte & 15)
            }
            after = start + 1 + bytes
        } else {
            let streamEnd = start + 1 + header
            guard header > 0 else { throw .malformed(offset: start, detail: "a Huffman tree description of 0 bytes") }
            guard streamEnd <= end else { throw .truncated(offset: end, needed: streamEnd - end) }
            let (fse, tableEnd) = try ZstdFSETable.read(
                from: base, start: start + 1, end: streamEnd, maximumAccuracyLog: 6, maximumSymbol: 12)
            guard tableEnd < streamEnd else { throw .truncated(offset: streamEnd, needed: 1) }
            var reader = try ZstdBackwardBitReader(base: base, start: tableEnd, end: streamEnd)
            let log = fse.accuracyLog
            var state1 = Int(reader.read(log))
            var state2 = Int(reader.read(log))
            reader.reload()
            guard !reader.isOverflowed else {
                throw .malformed(offset: tableEnd, detail: "Huffman weights whose FSE stream is too short for its two states")
            }
            try fse.entries.withUnsafeBufferPointer { (table) throws(ZstdError) in
                while true {
                    guard weights.count <= 253 else {
                        throw .malformed(offset: tableEnd, detail: "more than 255 Huffman weights")
                    }
                    // Safe: states are built from `baseline + bits < size`, or the accuracy-log read.
                    let e1 = table[state1]
                    weights.append(e1.symbol)
                    state1 = Int(e1.baseline) + Int(reader.read(Int(e1.bitCount)))
                    reader.reload()
                    if reader.isOverflowed {
                        weights.append(table[state2].symbol)
                        break
                    }
                    let e2 = table[state2]
                    weights.append(e2.symbol)
                    state2 = Int(e2.baseline) + Int(reader.read(Int(e2.bitCount)))
                    reader.reload()
                    if reader.isOverflowed {
                        weights.append(table[state1].symbol)
                        break
                    }
                }
            }
            after = streamEnd
        }
        return (try ZstdHuffmanTable(weights: weights, offset: start), after)
    }

    /// The table for `weights` of symbols 0, 1, …; the last symbol's weight is implied.
    init(weights given: [UInt8], offset: Int) throws(ZstdError) {
        var weights = given
        guard weights.count <= 255 else { throw .malformed(offset: offset, detail: "more than 255 Huffman weights") }
        var total = 0
        for w in weights {
            guard w <= 11 else { throw .malformed(offset: offset, detail: "a Huffman weight of \(w), above 11") }
            if w > 0 { total += 1 << (Int(w) - 1) }
        }
        guard total > 0 else { throw .malformed(offset: offset, detail: "Huffman weights that are all 0") }
        let maximumBits = Int.bitWidth - total.leadingZeroBitCount  // highest bit + 1
        guard maximumBits <= 11 else { throw .malformed(offset: offset, detail: "a Huffman code longer than 11 bits") }
        let rest = (1 << maximumBits) - total
        guard rest > 0, rest & (rest - 1) == 0 else {
            throw .malformed(offset: offset, detail: "Huffman weights that do not complete to a power of 2")
        }
        weights.append(UInt8(rest.trailingZeroBitCount + 1))
        var rankCounts = [Int](repeating: 0, count: 13)
        for w in weights { rankCounts[Int(w)] += 1 }
        guard rankCounts[1] >= 2, rankCounts[1] & 1 == 0 else {
            throw .malformed(offset: offset, detail: "Huffman weights without an even number (at least 2) of weight 1")
        }
        // Codes are assigned from the lowest weight (longest code) up, symbols in order.
        var starts = [Int](repeating: 0, count: 13)
        var position = 0
        for w in 1 ... 12 {
            starts[w] = position
            position += rankCounts[w] << (w - 1)
        }
        // Every entry is written once: the weights, the implied one included, fill the table
        // exactly (checked above). Pointer loops: a table is built for most blocks of a page.
        let size = 1 << maximumBits
        let entries = [UInt16](unsafeUninitializedCapacity: size) { e, initialized in
            // Safe: each symbol's run starts where the runs of its weight so far end, and the runs
            // of all weights tile 0 ..< size.
            let table = e.baseAddress!
            for (symbol, w) in weights.enumerated() where w > 0 {
                let width = 1 << (Int(w) - 1)
                let length = maximumBits + 1 - Int(w)
                let first = starts[Int(w)]
                (table + first).initialize(repeating: UInt16(symbol) | UInt16(length) << 8, count: width)
                starts[Int(w)] = first + width
            }
            initialized = size
        }
        self.entries = entries
        self.maximumBits = maximumBits
        let mask = size - 1
        pairs = entries.withUnsafeBufferPointer { e in
            [UInt32](unsafeUninitializedCapacity: size) { p, initialized in
                // Safe: i and (i << n1) & mask are below size.
                let table = e.baseAddress!, out = p.baseAddress!
                for i in 0 ..< size {
                    let e1 = table[i]
                    let n1 = Int(e1 >> 8)
                    let e2 = table[(i &<< n1) & mask]
                    let n2 = Int(e2 >> 8)
                    let one = UInt32(e1 & 0xFF) | UInt32(n1) << 16 | 1 << 24
                    let two = UInt32(e1 & 0xFF) | UInt32(e2 & 0xFF) << 8 | UInt32(n1 &+ n2) << 16 | 2 << 24
                    out[i] = n1 &+ n2 <= maximumBits ? two : one
                }
                initialized = size
            }
        }
    }
}
