/// An FSE decoding table (RFC 8878 §4.1.1): for each state, the symbol it decodes, how many bits
/// to read for the next state and the baseline they are added to.
///
/// Built from a normalized distribution, either read from a table description in the stream
/// (`read(from:…)`) or given (the predefined distributions).
struct ZstdFSETable {
    /// One row: `symbol`, `bitCount` bits to read, `baseline` to add to them for the next state.
    struct Entry {
        var symbol: UInt8
        var bitCount: UInt8
        var baseline: UInt16
    }

    /// `1 << accuracyLog` rows.
    var entries: [Entry]
    /// log2 of the table's size.
    var accuracyLog: Int

    /// The table of a normalized distribution: `counts[s]` is symbol `s`'s probability (-1 for
    /// "less than 1"); the probabilities (a -1 counting as 1) sum to `1 << accuracyLog`.
    /// - Throws: `malformed` at `offset` when the distribution does not fill the table exactly.
    init(counts: [Int16], accuracyLog: Int, offset: Int) throws(ZstdError) {
        let size = 1 << accuracyLog
        var entries = [Entry](repeating: Entry(symbol: 0, bitCount: 0, baseline: 0), count: size)
        var next = [Int](repeating: 0, count: counts.count)
        var high = size - 1
        var total = 0
        for (symbol, count) in counts.enumerated() {
            if count == -1 {
                guard high >= 0 else { throw .malformed(offset: offset, detail: "an FSE distribution larger than its table") }
                entries[high].symbol = UInt8(symbol)
                high -= 1
                next[symbol] = 1
                total += 1
            } else {
                next[symbol] = Int(count)
                total += Int(count)
            }
        }
        guard total == size else {
            throw .malformed(offset: offset, detail: "an FSE distribution summing to \(total), not \(size)")
        }
        // Pointer loops (a table is built for most blocks of a page): positions are masked to the
        // table, symbols come from `counts`' indices and next states from `next`.
        let step = (size >> 1) + (size >> 3) + 3
        let mask = size - 1
        let position = entries.withUnsafeMutableBufferPointer { e in
            let table = e.baseAddress!
            var position = 0
            counts.withUnsafeBufferPointer { c in
                for symbol in 0 ..< c.count where c[symbol] > 0 {
                    for _ in 0 ..< Int(c[symbol]) {
                        table[position].symbol = UInt8(truncatingIfNeeded: symbol)
                        repeat { position = (position &+ step) & mask } while position > high
                    }
                }
            }
            return position
        }
        guard position == 0 else { throw .malformed(offset: offset, detail: "an FSE distribution that does not fill its table") }
        entries.withUnsafeMutableBufferPointer { e in
            next.withUnsafeMutableBufferPointer { n in
                // Safe: every entry's symbol has a `next` (a symbol of `counts`), states are below size.
                let table = e.baseAddress!, next = n.baseAddress!
                for state in 0 ..< size {
                    let symbol = Int(table[state].symbol)
                    let nextState = next[symbol]
                    next[symbol] = nextState &+ 1
                    let bits = accuracyLog &- (Int.bitWidth &- 1 &- nextState.leadingZeroBitCount)
                    table[state].bitCount = UInt8(truncatingIfNeeded: bits)
                    table[state].baseline = UInt16(truncatingIfNeeded: (nextState &<< bits) &- size)
                }
            }
        }
        self.entries = entries
        self.accuracyLog = accuracyLog
    }

    /// Reads an FSE table description (RFC 8878 §4.1.1) from `bytes[start ..< end]`.
    /// - Returns: the table and the offset of the first byte after the description.
    /// - Throws: `truncated` when the description runs past `end`; `malformed` for an accuracy
    ///   log above `maximumAccuracyLog`, a symbol above `maximumSymbol`, or probabilities that do
    ///   not add up.
    static func read(
        from base: UnsafeRawPointer, start: Int, end: Int, maximumAccuracyLog: Int, maximumSymbol: Int
    ) throws(ZstdError) -> (table: ZstdFSETable, end: Int) {
        var bitPosition = 0
        let available = (end - start) * 8
        /// The next `count` bits (at most 32), zeros past `end`.
        func peek(_ count: Int) -> UInt64 {
            var value: UInt64 = 0
            let firstByte = bitPosition >> 3
            for i in 0 ..< 6 where start + firstByte + i < end {
                // Safe: start + firstByte + i < end.
                value |= UInt64(base.load(fromByteOffset: start + firstByte + i, as: UInt8.self)) << (8 * i)
            }
            return (value >> UInt64(bitPosition & 7)) & ((1 << UInt64(count)) - 1)
        }
        guard end > start else { throw .truncated(offset: start, needed: 1) }
        let accuracyLog = Int(peek(4)) + 5
        bitPosition = 4
        guard accuracyLog <= maximumAccuracyLog else {
            throw .malformed(offset: start, detail: "an FSE accuracy log of \(accuracyLog), above the maximum \(maximumAccuracyLog)")
        }
        var counts = [Int16]()
        counts.reserveCapacity(maximumSymbol + 1)
        var remaining = (1 << accuracyLog) + 1
        var threshold = 1 << accuracyLog
        var bitCount = accuracyLog + 1
        var previousZero = false
        while remaining > 1 {
            if bitPosition > available { throw .truncated(offset: end, needed: (bitPosition - available + 7) / 8) }
            if previousZero {
                var zeros = 0
                while true {
                    let flag = Int(peek(2))
                    bitPosition += 2
                    zeros += flag
                    if flag != 3 { break }
                    if bitPosition > available { throw .truncated(offset: end, needed: 1) }
                }
                guard counts.count + zeros <= maximumSymbol + 1 else {
                    throw .malformed(offset: start + bitPosition / 8, detail: "an FSE distribution with a symbol above \(maximumSymbol)")
                }
                counts.append(contentsOf: repeatElement(0, count: zeros))
                previousZero = false
                continue
            }
            guard counts.count <= maximumSymbol else {
                throw .malformed(offset: start + bitPosition / 8, detail: "an FSE distribution with a symbol above \(maximumSymbol)")
            }
            let maxShort = (2 * threshold - 1) - remaining
            let bits = Int(peek(bitCount))
            var value: Int
            if bits & (threshold - 1) < maxShort {
                value = bits & (threshold - 1)
                bitPosition += bitCount - 1
            } else {
                value = bits & (2 * threshold - 1)
                if value >= threshold { value -= maxShort }
                bitPosition += bitCount
            }
            let probability = value - 1
            remaining -= probability < 0 ? -probability : probability
            counts.append(Int16(probability))
            previousZero = probability == 0
            guard remaining >= 1 else {
                throw .malformed(offset: start + bitPosition / 8, detail: "FSE probabilities adding up to more than the table")
            }
            while remaining < threshold {
                bitCount -= 1
                threshold >>= 1
            }
        }
        guard bitPosition <= available else { throw .truncated(offset: end, needed: (bitPosition - available + 7) / 8) }
        let table = try ZstdFSETable(counts: counts, accuracyLog: accuracyLog, offset: start)
        return (table, start + (bitPosition + 7) / 8)
    }
}
