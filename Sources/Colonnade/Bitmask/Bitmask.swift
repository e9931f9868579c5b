/// A packed set of row numbers: one bit per row, 64 rows per `UInt64` word.
///
/// Bit layout (the same as Apache Arrow's validity bitmaps):
///
///     word 0                                         word 1
///     bit 63 ............................ bit 1 bit 0   bit 63 ............ bit 0
///     row 63 ............................ row 1 row 0   row 127 ........... row 64
///
/// Row `r` is bit `r & 63` (least significant first) of word `r >> 6`. Bits past `count` in the
/// last word — the *padding bits* — are always zero: every operation that could set them
/// (`complement`, `setAll`, `insert(rowsIn:)`) clears them again, so population counts and
/// iteration never see rows that do not exist. Word storage is 64-byte aligned and padded
/// to whole 64-byte lines, like column storage.
///
/// In-place operations are primary (`formIntersection`, `formUnion`, `subtract`, `complement`);
/// the allocating ones (`intersection`, `union`, `subtracting`, `complemented`) derive from them.
public struct Bitmask: Sendable {
    @usableFromInline var storage: ColumnStorage
    /// The number of rows the mask covers (valid bits).
    public private(set) var count: Int

    /// A mask of `count` rows, all clear (or all set).
    public init(count: Int, allSet: Bool = false) {
        precondition(count >= 0, "negative bit count")
        self.count = count
        self.storage = ColumnStorage(byteCount: Bitmask.wordCount(forBits: count) * 8, mapLargeBuffers: false)
        if allSet { setAll() }
    }

    /// A mask of `count` rows, all clear, for setting a few bits only (as-of screens: at most
    /// one a ticker): its words are not zeroed by a pass over them, so only the pages written
    /// are ever given memory (`ColumnStorage.init(sparselyWrittenByteCount:)`).
    package init(sparselyWrittenCount count: Int) {
        precondition(count >= 0, "negative bit count")
        self.count = count
        self.storage = ColumnStorage(sparselyWrittenByteCount: Bitmask.wordCount(forBits: count) * 8)
    }

    /// A mask of `count` rows, all clear (or all set), or nil when its words cannot be allocated:
    /// for a count that comes from input, whose caller reports the failure.
    package init?(allocatingCount count: Int, allSet: Bool = false) {
        precondition(count >= 0, "negative bit count")
        guard let storage = ColumnStorage(allocatingByteCount: Bitmask.wordCount(forBits: count) * 8, mapLargeBuffers: false) else {
            return nil
        }
        self.count = count
        self.storage = storage
        if allSet { setAll() }
    }

    /// A mask over existing words (copied); padding bits are cleared.
    public init(words: some Collection<UInt64>, count: Int) {
        precondition(words.count == Bitmask.wordCount(forBits: count), "word count does not match bit count")
        self.init(count: count)
        storage.base.withMemoryRebound(to: UInt64.self, capacity: wordCount) { out in
            for (i, w) in words.enumerated() { out[i] = w }
        }
        clearPadding()
    }

    /// A mask whose words are a view into memory owned by `storage` (a mapped snapshot).
    ///
    /// - Precondition: the storage holds at least `wordCount(forBits: count)` words.
    public init(viewing storage: ColumnStorage, count: Int) {
        precondition(storage.byteCapacity >= Bitmask.wordCount(forBits: count) * 8, "view too short for bitmask")
        self.storage = storage
        self.count = count
    }

    /// The number of 64-bit words needed for `bits` rows.
    @inlinable public static func wordCount(forBits bits: Int) -> Int { (bits + 63) >> 6 }

    /// The number of words in use.
    @inlinable public var wordCount: Int { Bitmask.wordCount(forBits: count) }

    /// The storage behind the words (for the snapshot writer).
    package var wordStorage: ColumnStorage { storage }

    /// Calls `body` with the words (read-only).
    @inlinable
    public func withUnsafeWords<R>(_ body: (UnsafeBufferPointer<UInt64>) throws -> R) rethrows -> R {
        let p = UnsafeRawPointer(storage.base).assumingMemoryBound(to: UInt64.self)
        return try body(UnsafeBufferPointer(start: p, count: wordCount))
    }

    /// Calls `body` with the words (mutable). The caller must leave padding bits zero.
    @inlinable
    public mutating func withUnsafeMutableWords<R>(_ body: (UnsafeMutableBufferPointer<UInt64>) throws -> R) rethrows -> R {
        makeUnique()
        let p = storage.base.assumingMemoryBound(to: UInt64.self)
        return try body(UnsafeMutableBufferPointer(start: p, count: wordCount))
    }

    @usableFromInline mutating func makeUnique() {
        if storage.isView || !isKnownUniquelyReferenced(&storage) {
            storage = storage.copy(usedBytes: wordCount * 8, byteCount: wordCount * 8)
        }
    }

    /// Clears the bits past `count` in the last word.
    @usableFromInline mutating func clearPadding() {
        let tail = count & 63
        guard tail != 0 else { return }
        let last = wordCount - 1
        storage.base.assumingMemoryBound(to: UInt64.self)[last] &= (UInt64(1) << UInt64(tail)) &- 1
    }

    /// Whether row `row` is in the set.
    @inlinable public subscript(row: Int) -> Bool {
        get {
            precondition(row >= 0 && row < count, "row \(row) out of range 0..<\(count)")
            let w = UnsafeRawPointer(storage.base).assumingMemoryBound(to: UInt64.self)[row >> 6]
            return (w >> UInt64(row & 63)) & 1 == 1
        }
        set {
            precondition(row >= 0 && row < count, "row \(row) out of range 0..<\(count)")
            makeUnique()
            let p = storage.base.assumingMemoryBound(to: UInt64.self)
            let bit = UInt64(1) << UInt64(row & 63)
            if newValue { p[row >> 6] |= bit } else { p[row >> 6] &= ~bit }
        }
    }

    /// Appends one row (used while building validity bitmaps).
    public mutating func append(_ bit: Bool) {
        let needed = Bitmask.wordCount(forBits: count + 1) * 8
        if storage.isView || !isKnownUniquelyReferenced(&storage) || needed > storage.byteCapacity {
            storage = storage.copy(usedBytes: wordCount * 8, byteCount: Swift.max(needed, storage.byteCapacity * 2))
        }
        count += 1
        if bit { self[count - 1] = true }
    }

    /// Appends `n` rows, all set or all clear.
    public mutating func append(repeating bit: Bool, count n: Int) {
        precondition(n >= 0)
        let start = count
        let needed = Bitmask.wordCount(forBits: count + n) * 8
        if storage.isView || !isKnownUniquelyReferenced(&storage) || needed > storage.byteCapacity {
            storage = storage.copy(usedBytes: wordCount * 8, byteCount: Swift.max(needed, storage.byteCapacity * 2))
        }
        count += n
        if bit { insert(rowsIn: start ..< start + n) }
    }
}

extension Bitmask: Equatable {
    /// Two masks are equal when they cover the same number of rows and hold the same rows.
    public static func == (lhs: Bitmask, rhs: Bitmask) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.withUnsafeWords { a in rhs.withUnsafeWords { b in a.elementsEqual(b) } }
    }
}
