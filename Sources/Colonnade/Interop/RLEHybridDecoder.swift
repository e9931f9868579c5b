/// Reads Parquet's RLE/bit-packed hybrid encoding (definition levels, dictionary indices),
/// bounds-checked: a run that claims more bytes than remain throws.
struct RLEHybridDecoder {
    let bytes: UnsafeRawBufferPointer
    let bitWidth: Int
    var position = 0
    let file: String
    let fileOffset: Int

    init(_ bytes: UnsafeRawBufferPointer, bitWidth: Int, file: String, fileOffset: Int) {
        self.bytes = bytes
        self.bitWidth = bitWidth
        self.file = file
        self.fileOffset = fileOffset
    }

    func bad(_ detail: String) -> InteropError {
        .malformed(file: file, offset: fileOffset + position, detail: "RLE/bit-packed levels: " + detail)
    }

    mutating func varint() throws(InteropError) -> Int {
        var v = 0
        var shift = 0
        while true {
            guard position < bytes.count else { throw .truncated(file: file, offset: fileOffset + position, needed: 1) }
            guard shift < 35 else { throw bad("run header too long") }
            let b = bytes[position]
            position += 1
            v |= Int(b & 0x7F) << shift
            if b < 0x80 { return v }
            shift += 7
        }
    }

    /// Whether the next run repeats `value` for at least `count` values (the fast path for
    /// "no nulls"); consumes nothing.
    func startsWithRun(of value: UInt32, count: Int) -> Bool {
        var copy = self
        guard let header = try? copy.varint(), header & 1 == 0, header >> 1 >= count else { return false }
        let width = (bitWidth + 7) / 8
        guard copy.position + width <= bytes.count else { return false }
        var v: UInt32 = 0
        for k in 0 ..< width { v |= UInt32(bytes[copy.position + k]) << (8 * UInt32(k)) }
        return v == value
    }

    /// Decodes `count` values into `out`.
    mutating func decode(count: Int, into out: UnsafeMutablePointer<UInt32>) throws(InteropError) {
        guard bitWidth >= 0 && bitWidth <= 32 else { throw bad("bit width \(bitWidth)") }
        let mask: UInt64 = bitWidth == 32 ? 0xFFFF_FFFF : (UInt64(1) << UInt64(bitWidth)) - 1
        var done = 0
        while done < count {
            let header = try varint()
            if header & 1 == 0 {
                let run = header >> 1
                let width = (bitWidth + 7) / 8
                guard width <= bytes.count - position else { throw .truncated(file: file, offset: fileOffset + position, needed: width) }
                var v: UInt32 = 0
                for k in 0 ..< width { v |= UInt32(bytes[position + k]) << (8 * UInt32(k)) }
                v &= UInt32(truncatingIfNeeded: mask)
                position += width
                guard run > 0 else { throw bad("empty run") }
                let n = min(run, count - done)
                (out + done).update(repeating: v, count: n)
                done += n
            } else {
                let groups = header >> 1
                guard groups > 0 else { throw bad("empty bit-packed run") }
                let byteCount = groups * bitWidth
                guard byteCount <= bytes.count - position else {
                    throw .truncated(file: file, offset: fileOffset + position, needed: byteCount)
                }
                let values = groups * 8
                let n = min(values, count - done)
                var bitPos = position * 8
                var i = 0
                if let base = bytes.baseAddress {
                    // One little-endian word per value while eight bytes from the value's first
                    // byte are readable: it holds the value's bits (at most 7 + 32 of its 64).
                    while i < n && (bitPos >> 3) + 8 <= bytes.count {
                        // Safe: the word's eight bytes lie within `bytes` (checked above).
                        let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: bitPos >> 3, as: UInt64.self))
                        out[done + i] = UInt32(truncatingIfNeeded: (word &>> UInt64(bitPos & 7)) & mask)
                        bitPos += bitWidth
                        i += 1
                    }
                }
                while i < n {
                    // Near the end of the input: gather bitWidth bits starting at bitPos (LSB first).
                    var v: UInt64 = 0
                    var got = 0
                    var bp = bitPos
                    while got < bitWidth {
                        let byte = UInt64(bytes[bp >> 3]) >> UInt64(bp & 7)
                        let take = min(8 - (bp & 7), bitWidth - got)
                        v |= (byte & ((1 << UInt64(take)) - 1)) << UInt64(got)
                        got += take
                        bp += take
                    }
                    out[done + i] = UInt32(v & mask)
                    bitPos += bitWidth
                    i += 1
                }
                position += byteCount
                done += n
            }
        }
    }
}
