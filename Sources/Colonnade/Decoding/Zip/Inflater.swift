/// Inflates one raw DEFLATE stream (RFC 1951: stored, fixed-Huffman and dynamic-Huffman blocks),
/// resumably, into output buffers the caller supplies.
///
///     var inflater = Inflater(compressed)                  // the whole compressed stream
///     var count = 0
///     repeat {
///         count = try inflater.inflate(into: buffer, from: history, capacity: capacity)
///         …                                                // use buffer[history..<count]
///     } while !inflater.isFinished
///
/// The compressed stream is one contiguous buffer (a mapped file or an array); the output comes
/// in pieces. `inflate(into:from:capacity:)` writes at `buffer[from...]` and returns when the
/// buffer is nearly full or the stream ends. Matches may reach back into `buffer[0..<from]`,
/// which must hold the last `from` bytes of output (at least the last 32 KiB, or all output so
/// far if less) — `InflateStream` manages that. The caller's buffer is the only output memory:
/// memory is bounded by the buffer, whatever the stream's size.
///
/// Decoding is table-driven (`HuffmanTable`): a 64-bit bit buffer refilled 8 bytes at a time, one
/// lookup per literal/length code (two for codes longer than 10 bits) and per distance code (8),
/// matches copied 8 bytes at a time when they do not overlap within 8 bytes.
///
/// Every input is safe: malformed streams throw `InflateError`, never read or write out of bounds.
package struct Inflater {
    static let literalLengthBits = 10
    static let distanceBits = 8
    /// The most a single step writes past `from` before checking for room: a 258-byte match,
    /// rounded up by the 8-byte copies.
    static let margin = 258 + 8
    /// The least `capacity - from` a call may give.
    package static let minimumSpace = 1024

    private enum State { case header, stored(remaining: Int), huffman, done }

    private let input: UnsafePointer<UInt8>
    private let inputCount: Int
    private var position = 0
    private var bits: UInt64 = 0
    private var bitCount = 0
    /// Zero bits added past the end of the input (see `refillSlowly`).
    private var paddingBits = 0
    private var state = State.header
    private var finalBlock = false
    private var literalLength = HuffmanTable()
    private var distance = HuffmanTable()
    private var usesFixed = false
    /// Output bytes produced so far (updated as each call returns).
    package private(set) var totalOut = 0
    /// The `from` of the current call, for error messages.
    private var callFrom = 0

    /// An inflater reading `compressed`, which must stay valid and unchanged while it is used.
    package init(_ compressed: UnsafeRawBufferPointer) {
        if let base = compressed.baseAddress, compressed.count > 0 {
            input = base.assumingMemoryBound(to: UInt8.self)
            inputCount = compressed.count
        } else {
            // Safe: with a count of 0 nothing is ever read from it.
            input = UnsafePointer(Inflater.emptyByte)
            inputCount = 0
        }
    }

    // Safe: one byte, never written after initialisation, never read (count 0).
    nonisolated(unsafe) private static let emptyByte: UnsafeMutablePointer<UInt8> = {
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
        p.initialize(to: 0)
        return p
    }()

    /// Whether the final block has ended.
    package var isFinished: Bool { if case .done = state { true } else { false } }

    /// Compressed bytes consumed, once finished (the stream's length; the rest of the input is not
    /// part of it).
    package var consumedCount: Int { position - (bitCount - paddingBits) / 8 }

    /// The compressed byte now being read, for error offsets.
    private var offset: Int { Swift.max(0, Swift.min(inputCount, position - (bitCount - paddingBits) / 8)) }

    /// Inflates into `buffer[from...]` until fewer than 266 bytes of room remain or the stream ends.
    ///
    /// - Parameters:
    ///   - buffer: The output buffer; `buffer[0..<from]` must be the most recent output (history).
    ///   - from: Where new output starts.
    ///   - capacity: The buffer's size; `capacity - from >= minimumSpace`.
    /// - Returns: The end of the output in `buffer` (`from` plus the bytes written).
    /// - Throws: `InflateError` for a malformed or truncated stream.
    package mutating func inflate(into buffer: UnsafeMutablePointer<UInt8>, from: Int, capacity: Int) throws(InflateError) -> Int {
        precondition(from >= 0 && capacity - from >= Self.minimumSpace, "too little room")
        let limit = capacity - Self.margin
        var o = from
        callFrom = from
        loop: while o < limit {
            switch state {
            case .done:
                break loop
            case .header:
                if finalBlock {
                    state = .done
                    break loop
                }
                try readBlockHeader()
            case .stored(let remaining):
                var left = remaining
                // Whole bytes still in the bit buffer first.
                while left > 0 && o < limit && bitCount - paddingBits >= 8 {
                    buffer[o] = UInt8(truncatingIfNeeded: bits)
                    bits >>= 8
                    bitCount -= 8
                    o += 1
                    left -= 1
                }
                if left > 0 && o < limit && bitCount - paddingBits < 8 {
                    // The bit buffer may hold copies of the bytes at `position` above `bitCount`
                    // (see `refill`); the copy below skips them, so drop them.
                    bits = 0
                    let n = Swift.min(left, limit - o, inputCount - position)
                    if n == 0 { throw .truncated(offset: inputCount) }
                    // Safe: n bytes remain in the input and fit before `limit`.
                    (buffer + o).update(from: input + position, count: n)
                    position += n
                    o += n
                    left -= n
                }
                state = left == 0 ? .header : .stored(remaining: left)
            case .huffman:
                o = try decodeHuffman(buffer, o, limit)
            }
        }
        totalOut += o - from
        return o
    }

    // MARK: Bits

    @inline(__always)
    private mutating func refill() {
        if position <= inputCount - 8 {
            // Safe: 8 bytes remain at `position`.
            let word = UInt64(littleEndian: UnsafeRawPointer(input + position).loadUnaligned(as: UInt64.self))
            bits |= word &<< UInt64(bitCount)
            position += (63 - bitCount) >> 3
            bitCount |= 56
        } else {
            refillSlowly()
        }
    }

    /// Near the end: byte by byte, then zero bytes counted in `paddingBits`. Using a padding bit
    /// means the stream is truncated (`checkPadding`).
    @inline(never)
    private mutating func refillSlowly() {
        while bitCount <= 56 {
            if position < inputCount {
                bits |= UInt64(input[position]) &<< UInt64(bitCount)
                position += 1
            } else {
                paddingBits += 8
            }
            bitCount += 8
        }
    }

    @inline(__always)
    private func checkPadding() throws(InflateError) {
        if bitCount < paddingBits { throw .truncated(offset: inputCount) }
    }

    /// The next `n` bits (n ≤ 32), consumed.
    private mutating func take(_ n: Int) throws(InflateError) -> Int {
        if bitCount < n { refill() }
        let v = Int(bits & ((1 &<< UInt64(n)) &- 1))
        bits >>= UInt64(n)
        bitCount -= n
        try checkPadding()
        return v
    }

    // MARK: Block headers

    private mutating func readBlockHeader() throws(InflateError) {
        let at = offset
        let header = try take(3)
        finalBlock = header & 1 != 0
        switch header >> 1 {
        case 0:
            // Stored: skip to a byte boundary, then LEN and NLEN.
            let skip = (bitCount - paddingBits) & 7
            bits >>= UInt64(skip)
            bitCount -= skip
            let length = try take(16), complement = try take(16)
            guard length == ~complement & 0xFFFF else {
                throw .storedLengthMismatch(offset: at, length: length, complement: complement)
            }
            state = length == 0 ? .header : .stored(remaining: length)
        case 1:
            usesFixed = true
            state = .huffman
        case 2:
            try readDynamicTables()
            usesFixed = false
            state = .huffman
        default:
            throw .reservedBlockType(offset: at)
        }
    }

    private static let codeLengthOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    private mutating func readDynamicTables() throws(InflateError) {
        let at = offset
        let literalCount = try take(5) + 257
        let distanceCount = try take(5) + 1
        let codeLengthCount = try take(4) + 4
        guard literalCount <= 286 else { throw .invalidCode(offset: at, detail: "\(literalCount) literal/length codes (at most 286)") }
        guard distanceCount <= 30 else { throw .invalidCode(offset: at, detail: "\(distanceCount) distance codes (at most 30)") }

        var codeLengthLengths = [UInt8](repeating: 0, count: 19)
        for i in 0 ..< codeLengthCount { codeLengthLengths[Self.codeLengthOrder[i]] = UInt8(try take(3)) }
        var codeLengthTable = HuffmanTable()
        do {
            try codeLengthLengths.withUnsafeBufferPointer { l throws(HuffmanTable.Problem) in
                try codeLengthTable.build(lengths: l, primaryBits: 7, meaning: HuffmanTable.plainMeaning)
            }
        } catch {
            throw .invalidCode(offset: at, detail: "the code-length code is \(error == .overSubscribed ? "over-subscribed" : "incomplete")")
        }

        let total = literalCount + distanceCount
        var lengths = [UInt8](repeating: 0, count: total)
        var i = 0
        let mask = UInt64((1 << codeLengthTable.primaryBits) - 1)
        while i < total {
            if bitCount < 16 { refill() }
            let e = codeLengthTable.entries[Int(bits & mask)]
            let kind = (e >> 12) & 0xF
            guard kind == HuffmanTable.Kind.literal else {
                throw .invalidSymbol(offset: offset, detail: "a code-length code the header does not define")
            }
            let length = Int(e & 0xFF)
            bits >>= UInt64(length)
            bitCount -= length
            try checkPadding()
            let symbol = Int(e >> 16)
            switch symbol {
            case 0 ... 15:
                lengths[i] = UInt8(symbol)
                i += 1
            case 16:
                guard i > 0 else { throw .invalidCode(offset: offset, detail: "a repeat of the previous length at the first symbol") }
                let count = 3 + (try take(2))
                guard i + count <= total else { throw .invalidCode(offset: offset, detail: "code lengths repeat past the last symbol") }
                let previous = lengths[i - 1]
                for k in i ..< i + count { lengths[k] = previous }
                i += count
            default:
                let count = symbol == 17 ? 3 + (try take(3)) : 11 + (try take(7))
                guard i + count <= total else { throw .invalidCode(offset: offset, detail: "code lengths repeat past the last symbol") }
                i += count  // already zero
            }
        }
        guard lengths[256] != 0 else { throw .invalidCode(offset: at, detail: "no end-of-block code") }
        do {
            try lengths.withUnsafeBufferPointer { l throws(HuffmanTable.Problem) in
                try literalLength.build(
                    lengths: UnsafeBufferPointer(rebasing: l[0 ..< literalCount]),
                    primaryBits: Self.literalLengthBits, meaning: HuffmanTable.literalLengthMeaning)
            }
        } catch {
            throw .invalidCode(
                offset: at, detail: "the literal/length code is \(error == .overSubscribed ? "over-subscribed" : "incomplete")")
        }
        do {
            try lengths.withUnsafeBufferPointer { l throws(HuffmanTable.Problem) in
                try distance.build(
                    lengths: UnsafeBufferPointer(rebasing: l[literalCount ..< total]),
                    primaryBits: Self.distanceBits, meaning: HuffmanTable.distanceMeaning)
            }
        } catch {
            throw .invalidCode(offset: at, detail: "the distance code is \(error == .overSubscribed ? "over-subscribed" : "incomplete")")
        }
    }

    // MARK: Huffman blocks

    /// Decodes symbols into `out[o...]` until the end of the block or `limit`; returns the new `o`.
    private mutating func decodeHuffman(_ out: UnsafeMutablePointer<UInt8>, _ start: Int, _ limit: Int) throws(InflateError) -> Int {
        let tables: (literalLength: HuffmanTable, distance: HuffmanTable) = usesFixed ? HuffmanTable.fixed : (literalLength, distance)
        return try tables.literalLength.entries.withUnsafeBufferPointer { litTable throws(InflateError) in
            try tables.distance.entries.withUnsafeBufferPointer { distTable throws(InflateError) in
                try decodeSymbols(
                    out, start, limit, litTable, tables.literalLength.primaryBits,
                    distTable, tables.distance.primaryBits)
            }
        }
    }

    @inline(__always)
    private func bitMask(_ n: UInt32) -> UInt64 { (1 &<< UInt64(n)) &- 1 }

    /// Decodes literal/length and distance symbols into `out[start..<limit]`; returns where it stopped.
    ///
    /// One long loop on purpose: it is the inflate hot path (one iteration per symbol). The bit
    /// buffer, its count and the input position live in locals (registers) for the whole loop and
    /// are stored back once, when it returns or throws; the table pointers and masks are hoisted
    /// too, and the literal, length, distance and copy steps share them. Split into functions, or
    /// kept in `self`, they would be stored and reloaded per symbol.
    private mutating func decodeSymbols(
        _ out: UnsafeMutablePointer<UInt8>, _ start: Int, _ limit: Int,
        _ litTable: UnsafeBufferPointer<UInt32>, _ litBits: Int,
        _ distTable: UnsafeBufferPointer<UInt32>, _ distBits: Int
    ) throws(InflateError) -> Int {
        // Safe: tables are non-empty (build always makes the primary table).
        guard let lit = litTable.baseAddress, let dist = distTable.baseAddress else { return start }
        let litMask = UInt64((1 << litBits) - 1), distMask = UInt64((1 << distBits) - 1)
        let input = self.input
        let fastEnd = inputCount - 8
        var bits = self.bits
        var bitCount = self.bitCount
        var position = self.position
        var padding = paddingBits
        var o = start
        defer {
            self.bits = bits
            self.bitCount = bitCount
            self.position = position
        }
        while o < limit {
            if position <= fastEnd {
                // Safe: 8 bytes remain at `position`.
                let word = UInt64(littleEndian: UnsafeRawPointer(input + position).loadUnaligned(as: UInt64.self))
                bits |= word &<< UInt64(bitCount)
                position &+= (63 &- bitCount) &>> 3
                bitCount |= 56
            } else {
                self.bits = bits
                self.bitCount = bitCount
                self.position = position
                refillSlowly()
                bits = self.bits
                bitCount = self.bitCount
                position = self.position
                padding = paddingBits
            }
            // Safe: the masked index is below the primary table's size; a subtable link's value
            // plus its masked index is inside its subtable.
            var e = lit[Int(truncatingIfNeeded: bits & litMask)]
            var kind = (e &>> 12) & 0xF
            if kind == HuffmanTable.Kind.literal {
                // Up to two more literals without a refill: 56 bits hold three 15-bit codes.
                // Safe: o < limit < capacity.
                out[o] = UInt8(truncatingIfNeeded: e &>> 16)
                o &+= 1
                var n = e & 0xFF
                bits &>>= UInt64(n)
                bitCount &-= Int(n)
                e = lit[Int(truncatingIfNeeded: bits & litMask)]
                kind = (e &>> 12) & 0xF
                if kind == HuffmanTable.Kind.literal && o < limit {
                    out[o] = UInt8(truncatingIfNeeded: e &>> 16)
                    o &+= 1
                    n = e & 0xFF
                    bits &>>= UInt64(n)
                    bitCount &-= Int(n)
                    e = lit[Int(truncatingIfNeeded: bits & litMask)]
                    kind = (e &>> 12) & 0xF
                    if kind == HuffmanTable.Kind.literal && o < limit {
                        out[o] = UInt8(truncatingIfNeeded: e &>> 16)
                        o &+= 1
                        n = e & 0xFF
                        bits &>>= UInt64(n)
                        bitCount &-= Int(n)
                    }
                }
                if bitCount < padding { throw .truncated(offset: inputCount) }
                // The next symbol (already looked up, or not) is decoded after a refill.
                continue
            }
            if kind == HuffmanTable.Kind.subtable {
                e = lit[Int(e &>> 16) &+ Int(truncatingIfNeeded: (bits &>> UInt64(litBits)) & bitMask((e &>> 8) & 0xF))]
                kind = (e &>> 12) & 0xF
                if kind == HuffmanTable.Kind.literal {
                    // Safe: o < limit < capacity.
                    out[o] = UInt8(truncatingIfNeeded: e &>> 16)
                    o &+= 1
                    let n = e & 0xFF
                    bits &>>= UInt64(n)
                    bitCount &-= Int(n)
                    if bitCount < padding { throw .truncated(offset: inputCount) }
                    continue
                }
            }
            if kind == HuffmanTable.Kind.endOfBlock {
                let n = e & 0xFF
                bits &>>= UInt64(n)
                bitCount &-= Int(n)
                if bitCount < padding { throw .truncated(offset: inputCount) }
                state = .header
                return o
            }
            guard kind == HuffmanTable.Kind.base else {
                self.bits = bits
                self.bitCount = bitCount
                self.position = position
                throw .invalidSymbol(
                    offset: offset,
                    detail: e & 0xFF == 0
                        ? "a literal/length code the block does not define"
                        : "literal/length symbol \(e >> 16)")
            }
            // Length: code, then extra bits (at most 15 + 5 of the ≥ 56 refilled).
            var n = e & 0xFF
            bits &>>= UInt64(n)
            var used = Int(n)
            let extra = (e &>> 8) & 0xF
            let length = Int(e &>> 16) &+ Int(truncatingIfNeeded: bits & bitMask(extra))
            bits &>>= UInt64(extra)
            used &+= Int(extra)
            // Distance: code, then extra bits (at most 15 + 13 more: 48 in all).
            var d = dist[Int(truncatingIfNeeded: bits & distMask)]
            var dkind = (d &>> 12) & 0xF
            if dkind == HuffmanTable.Kind.subtable {
                d = dist[Int(d &>> 16) &+ Int(truncatingIfNeeded: (bits &>> UInt64(distBits)) & bitMask((d &>> 8) & 0xF))]
                dkind = (d &>> 12) & 0xF
            }
            guard dkind == HuffmanTable.Kind.base else {
                bitCount &-= used
                self.bits = bits
                self.bitCount = bitCount
                self.position = position
                throw .invalidSymbol(
                    offset: offset,
                    detail: d & 0xFF == 0
                        ? "a distance code the block does not define"
                        : "distance symbol \(d >> 16)")
            }
            n = d & 0xFF
            bits &>>= UInt64(n)
            used &+= Int(n)
            let dextra = (d &>> 8) & 0xF
            let distance = Int(d &>> 16) &+ Int(truncatingIfNeeded: bits & bitMask(dextra))
            bits &>>= UInt64(dextra)
            used &+= Int(dextra)
            bitCount &-= used
            if bitCount < padding { throw .truncated(offset: inputCount) }
            guard distance <= o else {
                self.bits = bits
                self.bitCount = bitCount
                self.position = position
                throw .distanceTooFar(offset: offset, distance: distance, available: totalOut + (o - callFrom))
            }
            // Safe: distance <= o, so the source starts inside the buffer; o + length + 7 <
            // limit + 266 = capacity.
            Self.copyMatch(out + o, distance: distance, length: length)
            o &+= length
        }
        return o
    }

    @inline(__always)
    private static func copyMatch(_ dst: UnsafeMutablePointer<UInt8>, distance: Int, length: Int) {
        let src = dst - distance
        if distance >= 8 {
            // Each 8-byte load ends before the store it feeds begins, so overlap is harmless.
            var i = 0
            repeat {
                let w = UnsafeRawPointer(src + i).loadUnaligned(as: UInt64.self)
                UnsafeMutableRawPointer(dst + i).storeBytes(of: w, as: UInt64.self)
                i += 8
            } while i < length
        } else if distance == 1 {
            dst.update(repeating: src.pointee, count: length)
        } else {
            for i in 0 ..< length { dst[i] = src[i] }
        }
    }
}
