/// The literals section of a compressed block (RFC 8878 §3.1.1.3.1).
extension ZstdDecoder {
    /// A block's literals: `count` bytes at `start`, of which bytes up to `readable` may be read
    /// (past the literals: slack of the scratch buffer, or more input).
    struct Literals {
        var start: UnsafePointer<UInt8>
        var count: Int
        var readable: UnsafePointer<UInt8>
    }

    /// Decodes the literals section at `start`, ending at most at `end`.
    /// - Returns: the literals and the offset of the sequences section.
    mutating func decodeLiterals(start: Int, end: Int) throws(ZstdError) -> (Literals, Int) {
        guard start < end else { throw .truncated(offset: end, needed: 1) }
        let b0 = byte(start)
        let type = b0 & 3
        let sizeFormat = (b0 >> 2) & 3
        if type <= 1 {
            let headerSize = sizeFormat == 1 ? 2 : sizeFormat == 3 ? 3 : 1
            guard headerSize <= end - start else { throw .truncated(offset: end, needed: headerSize - (end - start)) }
            let size =
                switch sizeFormat {
                case 1: (b0 >> 4) + (byte(start + 1) << 4)
                case 3: (b0 >> 4) + (byte(start + 1) << 4) + (byte(start + 2) << 12)
                default: b0 >> 3
                }
            guard size <= blockLimit else { throw literalsTooLarge(start, size) }
            let content = start + headerSize
            if type == 0 {
                guard size <= end - content else { throw .truncated(offset: end, needed: size - (end - content)) }
                let pointer = (base + content).assumingMemoryBound(to: UInt8.self)
                return (Literals(start: pointer, count: size, readable: (base + count).assumingMemoryBound(to: UInt8.self)), content + size)
            }
            guard content < end else { throw .truncated(offset: end, needed: 1) }
            let buffer = scratchBuffer()
            // Safe: size <= blockLimit <= the scratch buffer's size.
            buffer.initialize(repeating: UInt8(byte(content)), count: size)
            return (Literals(start: buffer, count: size, readable: buffer + Self.maximumBlockSize + ZstdOutputBuffer.slack), content + 1)
        }
        let headerSize = sizeFormat <= 1 ? 3 : sizeFormat == 2 ? 4 : 5
        guard headerSize <= end - start else { throw .truncated(offset: end, needed: headerSize - (end - start)) }
        let header = Int(littleEndian(start, size: headerSize))
        let (regenerated, compressed): (Int, Int) =
            switch sizeFormat {
            case 0, 1: ((header >> 4) & 0x3FF, (header >> 14) & 0x3FF)
            case 2: ((header >> 4) & 0x3FFF, (header >> 18) & 0x3FFF)
            default: ((header >> 4) & 0x3FFFF, (header >> 22) & 0x3FFFF)
            }
        let streamCount = sizeFormat == 0 ? 1 : 4
        guard regenerated <= blockLimit else { throw literalsTooLarge(start, regenerated) }
        var position = start + headerSize
        guard compressed <= end - position else { throw .truncated(offset: end, needed: compressed - (end - position)) }
        let sectionEnd = position + compressed
        if type == 2 {
            let (table, after) = try ZstdHuffmanTable.read(from: base, start: position, end: sectionEnd)
            huffman = table
            position = after
        } else if huffman == nil {
            throw .malformed(offset: start, detail: "treeless literals with no Huffman table before them in the frame")
        }
        let buffer = scratchBuffer()
        if streamCount == 1 {
            try decodeHuffmanStream(start: position, end: sectionEnd, into: buffer, count: regenerated)
        } else {
            try decodeFourHuffmanStreams(start: position, end: sectionEnd, into: buffer, count: regenerated)
        }
        return (Literals(start: buffer, count: regenerated, readable: buffer + Self.maximumBlockSize + ZstdOutputBuffer.slack), sectionEnd)
    }

    private func literalsTooLarge(_ offset: Int, _ size: Int) -> ZstdError {
        .malformed(offset: offset, detail: "\(size) literals, more than the frame's block limit of \(blockLimit)")
    }

    /// The scratch buffer, `maximumBlockSize` plus slack.
    mutating func scratchBuffer() -> UnsafeMutablePointer<UInt8> {
        if let scratch { return scratch }
        let made = UnsafeMutablePointer<UInt8>.allocate(capacity: Self.maximumBlockSize + ZstdOutputBuffer.slack)
        made.initialize(repeating: 0, count: Self.maximumBlockSize + ZstdOutputBuffer.slack)
        scratch = made
        return made
    }

    /// Decodes one Huffman stream `start ..< end` into `count` bytes at `output`.
    private func decodeHuffmanStream(start: Int, end: Int, into output: UnsafeMutablePointer<UInt8>, count: Int) throws(ZstdError) {
        guard let huffman else { return }
        var reader = try ZstdBackwardBitReader(base: base, start: start, end: end)
        huffman.entries.withUnsafeBufferPointer { table in
            huffman.pairs.withUnsafeBufferPointer { pairs in
                // Safe: tables of 1 << maximumBits entries.
                let done = decodePairs(&reader, pairs: pairs.baseAddress!, bits: huffman.maximumBits, into: output, end: output + count)
                decodeSymbols(&reader, table: table.baseAddress!, bits: huffman.maximumBits, into: done, count: output + count - done)
            }
        }
        guard reader.isFinished else {
            throw .malformed(offset: start, detail: "a Huffman literals stream not used up exactly by its \(count) literals")
        }
    }

    /// Decodes one or two symbols per lookup (`ZstdHuffmanTable.pairs`) while at least eight
    /// bytes of room are left before `end`; returns where it stopped (the rest is
    /// `decodeSymbols`' to finish exactly).
    @inline(__always)
    private func decodePairs(
        _ reader: inout ZstdBackwardBitReader, pairs: UnsafePointer<UInt32>, bits: Int,
        into output: UnsafeMutablePointer<UInt8>, end: UnsafeMutablePointer<UInt8>
    ) -> UnsafeMutablePointer<UInt8> {
        var out = output
        reader.reload()
        // Four lookups use at most 44 bits and write at most 8 bytes.
        while end - out >= 8 && reader.consumed <= 20 {
            for _ in 0 ..< 4 {
                // Safe: a peek of `bits` bits indexes a table of 1 << bits entries; two bytes are
                // written where at least two are left.
                let entry = pairs[Int(reader.peek(bits))]
                UnsafeMutableRawPointer(out).storeBytes(of: UInt16(truncatingIfNeeded: entry), as: UInt16.self)
                out += Int(entry >> 24)
                reader.skip(Int((entry >> 16) & 0xFF))
            }
            reader.reload()
        }
        return out
    }

    /// Decodes `count` symbols of one stream; the caller checks the stream ended exactly.
    @inline(__always)
    private func decodeSymbols(
        _ reader: inout ZstdBackwardBitReader, table: UnsafePointer<UInt16>, bits: Int,
        into output: UnsafeMutablePointer<UInt8>, count: Int
    ) {
        var out = output
        let end = output + count
        // Four symbols use at most 44 bits: after a reload that leaves at least that many in the
        // container, they are all read from real stream bytes.
        reader.reload()
        while end - out >= 4 && reader.consumed <= 20 {
            for _ in 0 ..< 4 {
                // Safe: a peek of `bits` bits indexes a table of 1 << bits entries.
                let entry = table[Int(reader.peek(bits))]
                out.pointee = UInt8(truncatingIfNeeded: entry)
                reader.skip(Int(entry >> 8))
                out += 1
            }
            reader.reload()
        }
        while out < end {
            let entry = table[Int(reader.peek(bits))]
            out.pointee = UInt8(truncatingIfNeeded: entry)
            reader.skip(Int(entry >> 8))
            out += 1
            reader.reload()
        }
    }

    /// Decodes the jump table and four Huffman streams `start ..< end` into `count` bytes.
    private func decodeFourHuffmanStreams(start: Int, end: Int, into output: UnsafeMutablePointer<UInt8>, count: Int) throws(ZstdError) {
        guard let huffman else { return }
        guard end - start >= 10 else { throw .malformed(offset: start, detail: "four Huffman streams in fewer than 10 bytes") }
        let size1 = Int(littleEndian(start, size: 2)), size2 = Int(littleEndian(start + 2, size: 2))
        let size3 = Int(littleEndian(start + 4, size: 2))
        let start1 = start + 6, start2 = start1 + size1, start3 = start2 + size2, start4 = start3 + size3
        guard start4 < end else {
            throw .malformed(
                offset: start, detail: "a jump table whose streams (\(size1), \(size2), \(size3) bytes) leave none for the fourth")
        }
        let segment = (count + 3) / 4
        let starts = [start1, start2, start3, start4], ends = [start2, start3, start4, end]
        var readers = [ZstdBackwardBitReader]()
        for i in 0 ..< 4 { readers.append(try ZstdBackwardBitReader(base: base, start: starts[i], end: ends[i])) }
        let o1 = output, o2 = output + min(segment, count), o3 = output + min(2 * segment, count)
        let o4 = output + min(3 * segment, count), oEnd = output + count
        var r1 = readers[0], r2 = readers[1], r3 = readers[2], r4 = readers[3]
        huffman.entries.withUnsafeBufferPointer { buffer in
            huffman.pairs.withUnsafeBufferPointer { pairBuffer in
                let table = buffer.baseAddress!
                let pairs = pairBuffer.baseAddress!
                let bits = huffman.maximumBits
                var p1 = o1, p2 = o2, p3 = o3, p4 = o4
                r1.reload()
                r2.reload()
                r3.reload()
                r4.reload()
                if r1.consumed <= 7 && r2.consumed <= 7 && r3.consumed <= 7 && r4.consumed <= 7 {
                    // The reference decoder's fast 4X2 loop: each stream's unread bits at the top
                    // of a word whose lowest set bit counts the bits used, so a lookup is one
                    // shift; five lookups per stream (at most 55 bits, 10 bytes) between refills,
                    // for as many rounds as every stream has input (7 bytes a round, never before
                    // its own first byte) and room in its segment (10 bytes a round) for.
                    let shift = UInt64(64 - bits)
                    var b1 = (r1.container | 1) &<< UInt64(r1.consumed), b2 = (r2.container | 1) &<< UInt64(r2.consumed)
                    var b3 = (r3.container | 1) &<< UInt64(r3.consumed), b4 = (r4.container | 1) &<< UInt64(r4.consumed)
                    var i1 = r1.position, i2 = r2.position, i3 = r3.position, i4 = r4.position
                    while true {
                        let input = Swift.min(Swift.min(i1 - start1, i2 - start2), Swift.min(i3 - start3, i4 - start4)) / 7
                        let room = Swift.min(Swift.min(o2 - p1, o3 - p2), Swift.min(o4 - p3, oEnd - p4)) / 10
                        let rounds = Swift.min(input, room)
                        if rounds <= 0 { break }
                        for _ in 0 ..< rounds {
                            for _ in 0 ..< 5 {
                                // Safe: each pointer has two bytes of room in its segment (10 a
                                // round), and a lookup of the top `bits` bits indexes the table.
                                huffmanPairStep(&b1, &p1, pairs, shift)
                                huffmanPairStep(&b2, &p2, pairs, shift)
                                huffmanPairStep(&b3, &p3, pairs, shift)
                                huffmanPairStep(&b4, &p4, pairs, shift)
                            }
                            // Safe: each stream moves back at most 7 bytes a round, and had 7 per round.
                            huffmanRefill(&b1, &i1, base)
                            huffmanRefill(&b2, &i2, base)
                            huffmanRefill(&b3, &i3, base)
                            huffmanRefill(&b4, &i4, base)
                        }
                    }
                    r1.resume(at: i1, consumed: b1.trailingZeroBitCount)
                    r2.resume(at: i2, consumed: b2.trailingZeroBitCount)
                    r3.resume(at: i3, consumed: b3.trailingZeroBitCount)
                    r4.resume(at: i4, consumed: b4.trailingZeroBitCount)
                }
                // One or two symbols per lookup; each stream moves at its own pace, so each keeps
                // eight bytes of room in its own segment (four lookups write at most eight).
                while o2 - p1 >= 8 && o3 - p2 >= 8 && o4 - p3 >= 8 && oEnd - p4 >= 8
                    && r1.consumed <= 20 && r2.consumed <= 20 && r3.consumed <= 20 && r4.consumed <= 20
                {
                    for _ in 0 ..< 4 {
                        // Safe: each pointer has two bytes of room in its segment, and a peek of
                        // `bits` bits indexes the table.
                        let e1 = pairs[Int(r1.peek(bits))], e2 = pairs[Int(r2.peek(bits))]
                        let e3 = pairs[Int(r3.peek(bits))], e4 = pairs[Int(r4.peek(bits))]
                        UnsafeMutableRawPointer(p1).storeBytes(of: UInt16(truncatingIfNeeded: e1), as: UInt16.self)
                        UnsafeMutableRawPointer(p2).storeBytes(of: UInt16(truncatingIfNeeded: e2), as: UInt16.self)
                        UnsafeMutableRawPointer(p3).storeBytes(of: UInt16(truncatingIfNeeded: e3), as: UInt16.self)
                        UnsafeMutableRawPointer(p4).storeBytes(of: UInt16(truncatingIfNeeded: e4), as: UInt16.self)
                        p1 += Int(e1 >> 24)
                        p2 += Int(e2 >> 24)
                        p3 += Int(e3 >> 24)
                        p4 += Int(e4 >> 24)
                        r1.skip(Int((e1 >> 16) & 0xFF))
                        r2.skip(Int((e2 >> 16) & 0xFF))
                        r3.skip(Int((e3 >> 16) & 0xFF))
                        r4.skip(Int((e4 >> 16) & 0xFF))
                    }
                    r1.reload()
                    r2.reload()
                    r3.reload()
                    r4.reload()
                }
                p1 = decodePairs(&r1, pairs: pairs, bits: bits, into: p1, end: o2)
                p2 = decodePairs(&r2, pairs: pairs, bits: bits, into: p2, end: o3)
                p3 = decodePairs(&r3, pairs: pairs, bits: bits, into: p3, end: o4)
                p4 = decodePairs(&r4, pairs: pairs, bits: bits, into: p4, end: oEnd)
                decodeSymbols(&r1, table: table, bits: bits, into: p1, count: o2 - p1)
                decodeSymbols(&r2, table: table, bits: bits, into: p2, count: o3 - p2)
                decodeSymbols(&r3, table: table, bits: bits, into: p3, count: o4 - p3)
                decodeSymbols(&r4, table: table, bits: bits, into: p4, count: oEnd - p4)
            }
        }
        for (i, reader) in [r1, r2, r3, r4].enumerated() where !reader.isFinished {
            throw .malformed(offset: starts[i], detail: "Huffman literals stream \(i + 1) of 4 not used up exactly by its literals")
        }
    }
}

/// One lookup of the fast 4X2 loop: the top `64 - shift` bits of `bits` index `pairs`; the one or
/// two symbols are stored (two bytes are written), and their bits shifted out.
@inline(__always)
private func huffmanPairStep(
    _ bits: inout UInt64, _ out: inout UnsafeMutablePointer<UInt8>, _ pairs: UnsafePointer<UInt32>, _ shift: UInt64
) {
    let entry = pairs[Int(truncatingIfNeeded: bits &>> shift)]
    UnsafeMutableRawPointer(out).storeBytes(of: UInt16(truncatingIfNeeded: entry), as: UInt16.self)
    bits &<<= UInt64((entry &>> 16) & 0xFF)
    out += Int(entry &>> 24)
}

/// Refills a fast-loop word: the bits used (its trailing zeros, at most 63) move the stream back
/// by whole bytes, and the eight bytes there are loaded with the marker bit set at the bottom,
/// then shifted past the bits of their top byte already used.
/// - Precondition: the new position is at or after the stream's first byte.
@inline(__always)
private func huffmanRefill(_ bits: inout UInt64, _ position: inout Int, _ base: UnsafeRawPointer) {
    let used = bits.trailingZeroBitCount
    position &-= used &>> 3
    let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt64.self))
    bits = (word | 1) &<< UInt64(used & 7)
}
