extension Bitmask {
    /// The number of rows in the set (population count).
    /// - Complexity: O(count / 64).
    public var nonzeroBitCount: Int {
        withUnsafeWords { w in
            var total = 0
            for x in w { total &+= x.nonzeroBitCount }
            return total
        }
    }

    /// The number of set rows within `range`.
    public func nonzeroBitCount(in range: Range<Int>) -> Int {
        precondition(range.lowerBound >= 0 && range.upperBound <= count)
        guard !range.isEmpty else { return 0 }
        return withUnsafeWords { w in
            let lo = range.lowerBound, hi = range.upperBound
            let firstWord = lo >> 6, lastWord = (hi - 1) >> 6
            let firstMask = ~UInt64(0) << UInt64(lo & 63)
            let lastMask = ~UInt64(0) >> UInt64(63 - ((hi - 1) & 63))
            if firstWord == lastWord { return (w[firstWord] & firstMask & lastMask).nonzeroBitCount }
            var total = (w[firstWord] & firstMask).nonzeroBitCount + (w[lastWord] & lastMask).nonzeroBitCount
            var i = firstWord + 1
            while i < lastWord {
                total &+= w[i].nonzeroBitCount
                i += 1
            }
            return total
        }
    }

    /// Whether no row is set.
    /// The first row in `0 ..< count` whose bit is clear, or nil when every row is set.
    /// - Complexity: O(count / 64).
    public var firstClearRow: Int? {
        withUnsafeWords { w in
            for (i, word) in w.enumerated() where ~word != 0 {
                let row = i * 64 + (~word).trailingZeroBitCount
                return row < count ? row : nil
            }
            return nil
        }
    }

    public var isEmpty: Bool { withUnsafeWords { w in !w.contains { $0 != 0 } } }

    /// The set rows in ascending order.
    public var setRows: SetRows { SetRows(mask: self) }

    /// Calls `body` with every set row within `range`, in ascending order, stopping when it returns false.
    ///
    /// Enumerates words with `trailingZeroBitCount` and `word &= word &- 1`, so the cost is
    /// proportional to the words scanned plus the rows found.
    @inlinable
    public func forEachSetRow(in range: Range<Int>? = nil, _ body: (Int) throws -> Bool) rethrows {
        let r = range ?? 0 ..< count
        guard !r.isEmpty else { return }
        try withUnsafeWords { w in
            let firstWord = r.lowerBound >> 6, lastWord = (r.upperBound - 1) >> 6
            for wi in firstWord ... lastWord {
                var word = w[wi]
                if wi == firstWord { word &= ~UInt64(0) << UInt64(r.lowerBound & 63) }
                if wi == lastWord { word &= ~UInt64(0) >> UInt64(63 - ((r.upperBound - 1) & 63)) }
                while word != 0 {
                    let row = (wi << 6) | word.trailingZeroBitCount
                    if try !body(row) { return }
                    word &= word &- 1
                }
            }
        }
    }

    /// The set rows of a mask, in ascending order.
    public struct SetRows: Sequence, Sendable {
        let mask: Bitmask

        public func makeIterator() -> Iterator { Iterator(mask: mask) }

        /// Iterates set rows word by word.
        public struct Iterator: IteratorProtocol {
            let mask: Bitmask
            var wordIndex = -1
            var word: UInt64 = 0

            init(mask: Bitmask) { self.mask = mask }

            public mutating func next() -> Int? {
                while word == 0 {
                    wordIndex += 1
                    if wordIndex >= mask.wordCount { return nil }
                    word = mask.withUnsafeWords { $0[wordIndex] }
                }
                let row = (wordIndex << 6) | word.trailingZeroBitCount
                word &= word &- 1
                return row
            }
        }
    }
}
