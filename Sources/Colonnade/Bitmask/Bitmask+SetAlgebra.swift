extension Bitmask {
    /// Keeps only the rows that are also in `other`. In place; no allocation.
    /// - Precondition: both masks cover the same number of rows.
    /// - Complexity: O(count / 64).
    public mutating func formIntersection(_ other: Bitmask) {
        precondition(count == other.count, "bitmask sizes differ: \(count) and \(other.count)")
        other.withUnsafeWords { b in
            withUnsafeMutableWords { a in
                for i in 0 ..< a.count { a[i] &= b[i] }
            }
        }
    }

    /// Adds the rows of `other`. In place.
    /// - Precondition: both masks cover the same number of rows.
    public mutating func formUnion(_ other: Bitmask) {
        precondition(count == other.count, "bitmask sizes differ: \(count) and \(other.count)")
        other.withUnsafeWords { b in
            withUnsafeMutableWords { a in
                for i in 0 ..< a.count { a[i] |= b[i] }
            }
        }
    }

    /// Removes the rows of `other` (and-not). In place.
    /// - Precondition: both masks cover the same number of rows.
    public mutating func subtract(_ other: Bitmask) {
        precondition(count == other.count, "bitmask sizes differ: \(count) and \(other.count)")
        other.withUnsafeWords { b in
            withUnsafeMutableWords { a in
                for i in 0 ..< a.count { a[i] &= ~b[i] }
            }
        }
    }

    /// Flips every row; padding bits stay zero. In place.
    public mutating func complement() {
        withUnsafeMutableWords { a in
            for i in 0 ..< a.count { a[i] = ~a[i] }
        }
        clearPadding()
        assert(paddingIsClear)
    }

    /// The rows in both masks.
    public func intersection(_ other: Bitmask) -> Bitmask {
        var m = self
        m.formIntersection(other)
        return m
    }
    /// The rows in either mask.
    public func union(_ other: Bitmask) -> Bitmask {
        var m = self
        m.formUnion(other)
        return m
    }
    /// The rows of this mask that are not in `other`.
    public func subtracting(_ other: Bitmask) -> Bitmask {
        var m = self
        m.subtract(other)
        return m
    }
    /// The rows not in this mask.
    public func complemented() -> Bitmask {
        var m = self
        m.complement()
        return m
    }

    /// Sets every row.
    public mutating func setAll() {
        withUnsafeMutableWords { a in
            for i in 0 ..< a.count { a[i] = ~0 }
        }
        clearPadding()
    }

    /// Adds the rows in `range`.
    /// - Precondition: `range` lies within `0..<count`.
    /// - Complexity: O(range.count / 64).
    public mutating func insert(rowsIn range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "row range \(range) out of 0..<\(count)")
        withUnsafeMutableWords { Bitmask._setBits(in: $0.baseAddress!, range.lowerBound, range.upperBound) }
    }

    /// Removes the rows in `range`.
    /// - Precondition: `range` lies within `0..<count`.
    public mutating func remove(rowsIn range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "row range \(range) out of 0..<\(count)")
        withUnsafeMutableWords { Bitmask._clearBits(in: $0.baseAddress!, range.lowerBound, range.upperBound) }
    }

    /// Sets bits `[lo, hi)` of raw words.
    @inlinable
    static func _setBits(in words: UnsafeMutablePointer<UInt64>, _ lo: Int, _ hi: Int) {
        guard lo < hi else { return }
        let firstWord = lo >> 6, lastWord = (hi - 1) >> 6
        let firstMask = ~UInt64(0) << UInt64(lo & 63)
        let lastMask = ~UInt64(0) >> UInt64(63 - ((hi - 1) & 63))
        if firstWord == lastWord {
            words[firstWord] |= firstMask & lastMask
            return
        }
        words[firstWord] |= firstMask
        var w = firstWord + 1
        while w < lastWord {
            words[w] = ~0
            w += 1
        }
        words[lastWord] |= lastMask
    }

    /// Clears bits `[lo, hi)` of raw words.
    @inlinable
    static func _clearBits(in words: UnsafeMutablePointer<UInt64>, _ lo: Int, _ hi: Int) {
        guard lo < hi else { return }
        let firstWord = lo >> 6, lastWord = (hi - 1) >> 6
        let firstMask = ~UInt64(0) << UInt64(lo & 63)
        let lastMask = ~UInt64(0) >> UInt64(63 - ((hi - 1) & 63))
        if firstWord == lastWord {
            words[firstWord] &= ~(firstMask & lastMask)
            return
        }
        words[firstWord] &= ~firstMask
        var w = firstWord + 1
        while w < lastWord {
            words[w] = 0
            w += 1
        }
        words[lastWord] &= ~lastMask
    }
}
