/// A canonical Huffman code (RFC 1951 §3.2.2) as a two-level lookup table: the next `primaryBits`
/// input bits index the primary table directly; codes longer than that go through one subtable
/// indexed by the following bits. One lookup (two for long codes) decodes a symbol, with no
/// bit-by-bit walking.
///
/// Each entry is a `UInt32`:
///
///     bits  0… 7  code length in bits (for a subtable link: unused)
///     bits  8…11  extra bits that follow the code (lengths and distances)
///     bits 12…15  kind: literal, base (length or distance), end of block, subtable link, invalid
///     bits 16…31  value: the literal byte, the base length or distance, the subtable's first entry
///
/// A subtable link keeps its subtable's index width in bits 8…11. Entries no code reaches are
/// `invalid`, so incomplete codes (allowed in a few cases, see `build`) decode safely.
struct HuffmanTable {
    enum Kind {
        static let literal: UInt32 = 0
        static let base: UInt32 = 1
        static let endOfBlock: UInt32 = 2
        static let subtable: UInt32 = 3
        static let invalid: UInt32 = 4
    }

    /// The entries: primary first, then the subtables.
    var entries: [UInt32] = []
    /// Bits that index the primary table.
    private(set) var primaryBits = 0

    @inline(__always) static func entry(kind: UInt32, value: UInt32, extra: UInt32 = 0, length: UInt32 = 0) -> UInt32 {
        value << 16 | kind << 12 | extra << 8 | length
    }

    static let invalidEntry = entry(kind: Kind.invalid, value: 0)

    /// What a code's symbol means, before the code length is added: the entry without its length.
    typealias SymbolMeaning = (Int) -> UInt32

    /// Why `build` refused a set of code lengths.
    enum Problem: Error { case overSubscribed, incomplete }

    /// Builds the table for `lengths` (one code length 0…15 per symbol; 0 means unused).
    ///
    /// Following zlib, the code must be complete, except that a code of a single symbol with a
    /// 1-bit length is allowed (the other bit pattern decodes as invalid), and a code with no
    /// symbols at all gives a table of invalid entries (a block may use no distances).
    ///
    /// - Throws: `.overSubscribed` (more codes than the lengths allow) or `.incomplete`.
    mutating func build(
        lengths: UnsafeBufferPointer<UInt8>, primaryBits requestedBits: Int,
        meaning: SymbolMeaning
    ) throws(Problem) {
        var counts = [Int](repeating: 0, count: 16)
        var maxLength = 0
        for l in lengths where l > 0 {
            counts[Int(l)] += 1
            maxLength = Swift.max(maxLength, Int(l))
        }
        var left = 1
        for l in 1 ..< 16 {
            left <<= 1
            left -= counts[l]
            if left < 0 { throw .overSubscribed }
        }
        if left > 0 && maxLength > 1 { throw .incomplete }

        let primary = Swift.max(1, Swift.min(requestedBits, Swift.max(maxLength, 1)))
        primaryBits = primary
        let primarySize = 1 << primary
        entries.removeAll(keepingCapacity: true)
        entries.append(contentsOf: repeatElement(Self.invalidEntry, count: primarySize))
        if maxLength == 0 { return }

        // The first canonical code of each length.
        var nextCode = [Int](repeating: 0, count: 17)
        var code = 0
        for l in 1 ..< 16 {
            code = (code + counts[l - 1]) << 1
            nextCode[l] = code
        }
        let subBits = Swift.max(maxLength - primary, 0)
        var subtableOf = [Int](repeating: -1, count: subBits > 0 ? primarySize : 0)
        for symbol in 0 ..< lengths.count {
            let length = Int(lengths[symbol])
            guard length > 0 else { continue }
            let canonical = nextCode[length]
            nextCode[length] += 1
            // DEFLATE sends codes most significant bit first into a stream read from the least
            // significant bit: index by the reversed code.
            let reversed = Self.reverse(canonical, bits: length)
            let e = meaning(symbol) | UInt32(length)
            if length <= primary {
                var i = reversed
                while i < primarySize {
                    entries[i] = e
                    i += 1 << length
                }
            } else {
                let prefix = reversed & (primarySize - 1)
                var start = subtableOf[prefix]
                if start < 0 {
                    start = entries.count
                    subtableOf[prefix] = start
                    entries.append(contentsOf: repeatElement(Self.invalidEntry, count: 1 << subBits))
                    entries[prefix] = Self.entry(kind: Kind.subtable, value: UInt32(start), extra: UInt32(subBits))
                }
                var i = reversed >> primary
                let step = 1 << (length - primary)
                while i < 1 << subBits {
                    entries[start + i] = e
                    i += step
                }
            }
        }
    }

    static func reverse(_ code: Int, bits: Int) -> Int {
        var r = 0, c = code
        for _ in 0 ..< bits {
            r = r << 1 | (c & 1)
            c >>= 1
        }
        return r
    }

    // MARK: The meanings of DEFLATE's alphabets

    static let lengthBases: [UInt32] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59,
        67, 83, 99, 115, 131, 163, 195, 227, 258,
    ]
    static let lengthExtra: [UInt32] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let distanceBases: [UInt32] = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769,
        1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
    ]
    static let distanceExtra: [UInt32] = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10,
        11, 11, 12, 12, 13, 13,
    ]

    /// Literal/length alphabet: 0…255 literals, 256 end of block, 257…285 lengths, 286–287 invalid.
    static func literalLengthMeaning(_ symbol: Int) -> UInt32 {
        if symbol < 256 { return entry(kind: Kind.literal, value: UInt32(symbol)) }
        if symbol == 256 { return entry(kind: Kind.endOfBlock, value: 0) }
        let i = symbol - 257
        guard i < 29 else { return entry(kind: Kind.invalid, value: UInt32(symbol)) }
        return entry(kind: Kind.base, value: lengthBases[i], extra: lengthExtra[i])
    }

    /// Distance alphabet: 0…29, 30–31 invalid.
    static func distanceMeaning(_ symbol: Int) -> UInt32 {
        guard symbol < 30 else { return entry(kind: Kind.invalid, value: UInt32(symbol)) }
        return entry(kind: Kind.base, value: distanceBases[symbol], extra: distanceExtra[symbol])
    }

    /// Code-length alphabet: the symbol itself.
    static func plainMeaning(_ symbol: Int) -> UInt32 {
        entry(kind: Kind.literal, value: UInt32(symbol))
    }

    /// The fixed codes of block type 1 (RFC 1951 §3.2.6).
    static let fixed: (literalLength: HuffmanTable, distance: HuffmanTable) = {
        var lengths = [UInt8](repeating: 8, count: 288)
        for s in 144 ..< 256 { lengths[s] = 9 }
        for s in 256 ..< 280 { lengths[s] = 7 }
        var literalLength = HuffmanTable(), distance = HuffmanTable()
        do {
            try lengths.withUnsafeBufferPointer { l throws(Problem) in
                try literalLength.build(lengths: l, primaryBits: Inflater.literalLengthBits, meaning: literalLengthMeaning)
            }
            let five = [UInt8](repeating: 5, count: 32)
            try five.withUnsafeBufferPointer { l throws(Problem) in
                try distance.build(lengths: l, primaryBits: Inflater.distanceBits, meaning: distanceMeaning)
            }
        } catch {
            preconditionFailure("the fixed Huffman codes are complete")
        }
        return (literalLength, distance)
    }()
}
