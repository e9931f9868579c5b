/// A typed column: `count` contiguous elements in 64-byte-aligned storage, with an optional
/// validity bitmap (a set bit means the row holds a value; no bitmap means no nulls).
///
///     var close = Column<Double>()
///     close.append(86.9)
///     close.append(nil)          // a null
///     close.value(at: 1)         // nil
///
/// The storage can be owned (and grows by copy-on-write) or a view into memory another object
/// owns, such as a memory-mapped snapshot; a mutation of a view copies it first.
/// Memory overhead: the element bytes padded to 64 bytes, plus `count / 8` bytes of validity when
/// there are nulls, plus block summaries (3 values per 4,096 rows) — under 5 % of the element bytes
/// for any column of more than a few thousand rows once built (see `shrinkToFit()`).
public struct Column<Element: ColumnElement>: Sendable {
    @usableFromInline var storedStorage: ColumnStorage
    /// The number of rows.
    public private(set) var count: Int
    var storedValidity: Bitmask?
    var storedSummaries: BlockSummaries<Element>?
    /// Facts computed from the values on first use (the decimal scale, see `Column+DecimalScale`),
    /// shared by copies; every mutation replaces it (as it drops `summaries`).
    var derived = ColumnDerivedValues()
    /// Values not computed yet (a deferred merge, `PendingColumn`): storage, validity and
    /// summaries are then read from it, and the first mutation copies them in and drops it.
    @usableFromInline var pending: PendingColumn<Element>?

    /// The storage behind the values.
    @usableFromInline var storage: ColumnStorage {
        get { pending.map { $0.column.storedStorage } ?? storedStorage }
        set {
            resolvePending()
            storedStorage = newValue
        }
        _modify {
            resolvePending()
            yield &storedStorage
        }
    }
    /// Which rows hold a value; nil when every row does.
    public private(set) var validity: Bitmask? {
        get {
            if let pending { return pending.column.storedValidity }
            return storedValidity
        }
        set {
            resolvePending()
            storedValidity = newValue
        }
        _modify {
            resolvePending()
            yield &storedValidity
        }
    }
    /// Per-block minimum, maximum and unknown count, or nil until `computeSummaries()` runs.
    /// Any mutation drops them.
    public internal(set) var summaries: BlockSummaries<Element>? {
        get {
            if let pending { return pending.column.storedSummaries }
            return storedSummaries
        }
        set {
            resolvePending()
            storedSummaries = newValue
        }
        _modify {
            resolvePending()
            yield &storedSummaries
        }
    }

    /// Whether block summaries are present (or will be: a pending column's are computed with its
    /// values), without computing pending values.
    public var hasSummaries: Bool { pending != nil || storedSummaries != nil }

    /// Whether the values are still to be computed (a deferred merge not read yet; for tests).
    package var isPending: Bool { pending.map { !$0.isResolved } ?? false }

    /// Computes pending values now, on this thread (every copy shares them). For a query about
    /// to read the column from a parallel loop: merged there, the merge would run inside one
    /// worker while the others wait for it; here it runs on every thread (`gatherSummarized`).
    package func resolvePendingValues() { _ = pending?.column }

    /// A column of `count` rows whose values `make` computes on first use, once for every copy
    /// (`PendingColumn`). `make` must return `count` rows, with summaries when they are wanted.
    init(pendingCount count: Int, stitch: ColumnStitch<Element>? = nil, _ make: @escaping @Sendable () -> Column<Element>) {
        self.storedStorage = ColumnStorage(byteCount: 0)
        self.count = count
        self.pending = PendingColumn(stitch: stitch, make)
    }

    /// Where a deferred merge's values lie unmerged (`ColumnStitch`), merged since or not: they
    /// stay valid for every copy of the column. Nil for any other column.
    var stitch: ColumnStitch<Element>? { pending?.stitch }

    /// `stitch` while the values are not merged: what a query reads instead of merging (once
    /// merged, the merged values are read). Nil once merged, or for any other column.
    var unmergedStitch: ColumnStitch<Element>? {
        guard let pending, !pending.isResolved else { return nil }
        return pending.stitch
    }

    /// Copies pending values in (the first mutation of a deferred column does this).
    mutating func resolvePending() {
        guard let p = pending else { return }
        let c = p.column
        precondition(c.count == count, "a pending column resolved to \(c.count) rows, not \(count)")
        pending = nil
        storedStorage = c.storedStorage
        storedValidity = c.storedValidity
        storedSummaries = c.storedSummaries
        derived = c.derived
    }

    /// An empty column.
    public init() {
        storedStorage = ColumnStorage(byteCount: 0)
        count = 0
    }

    /// A column holding `values`, with no nulls.
    public init(_ values: some Collection<Element>) {
        self.init()
        reserveCapacity(values.count)
        withUnsafeMutableSlots { base in
            var i = 0
            for v in values {
                base[i] = v
                i += 1
            }
        }
        count = values.count
    }

    /// A column holding `values`, where nil is a null.
    public init(_ values: some Collection<Element?>) {
        self.init()
        reserveCapacity(values.count)
        for v in values { append(v) }
    }

    /// A column of `count` elements written by `initializer` into uninitialized (zeroed) memory.
    public init(
        unsafeUninitializedCount count: Int,
        initializingWith initializer: (UnsafeMutableBufferPointer<Element>) throws -> Void
    ) rethrows {
        self.init()
        reserveCapacity(count)
        try withUnsafeMutableSlots { base in try initializer(UnsafeMutableBufferPointer(start: base, count: count)) }
        self.count = count
    }

    /// A column of `count` elements written by `initializer` into uninitialized (zeroed) memory,
    /// or nil when that memory cannot be allocated: for a count that comes from input, whose
    /// caller reports the failure (`RowBuffers.takeColumn` throws `DecodeError.outOfMemory`).
    package init?(
        allocatingUnsafeUninitializedCount count: Int,
        initializingWith initializer: (UnsafeMutableBufferPointer<Element>) -> Void
    ) {
        precondition(count >= 0, "negative count")
        let (bytes, overflow) = count.multipliedReportingOverflow(by: MemoryLayout<Element>.stride)
        guard !overflow, let storage = ColumnStorage(allocatingByteCount: bytes) else { return nil }
        self.storedStorage = storage
        self.count = count
        initializer(UnsafeMutableBufferPointer(start: storage.base.assumingMemoryBound(to: Element.self), count: count))
    }

    /// A view of `count` elements in `storage` (owned by a mapping), with optional validity and summaries.
    /// - Precondition: the storage holds at least `count` elements.
    public init(viewing storage: ColumnStorage, count: Int, validity: Bitmask?, summaries: BlockSummaries<Element>?) {
        precondition(storage.byteCapacity >= count * MemoryLayout<Element>.stride, "view too short for column")
        precondition(validity.map { $0.count == count } ?? true, "validity length differs from column length")
        self.storedStorage = storage
        self.count = count
        self.storedValidity = validity
        self.storedSummaries = summaries
    }

    /// The element type.
    public var elementType: ElementType { Element.elementType }

    /// Elements that fit without reallocating.
    public var capacity: Int { storage.byteCapacity / MemoryLayout<Element>.stride }

    /// The storage behind the values (for the snapshot writer).
    package var valueStorage: ColumnStorage { storage }

    /// The raw value in row `row` (the placeholder 0 for a null).
    @inlinable public subscript(row: Int) -> Element {
        precondition(row >= 0 && row < count, "row \(row) out of range 0..<\(count)")
        return UnsafeRawPointer(storage.base).assumingMemoryBound(to: Element.self)[row]
    }

    /// Whether row `row` is null.
    @inlinable public func isNull(_ row: Int) -> Bool {
        guard let validity else { return false }
        return !validity[row]
    }

    /// The value in row `row`, or nil for a null.
    @inlinable public func value(at row: Int) -> Element? {
        isNull(row) ? nil : self[row]
    }

    /// The number of null rows.
    public var nullCount: Int { validity.map { count - $0.nonzeroBitCount } ?? 0 }

    /// Calls `body` with the values (nulls hold a placeholder).
    @inlinable
    public func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R {
        let p = UnsafeRawPointer(storage.base).assumingMemoryBound(to: Element.self)
        return try body(UnsafeBufferPointer(start: p, count: count))
    }

    /// Calls `body` with the values, mutable. Drops block summaries.
    public mutating func withUnsafeMutableBufferPointer<R>(_ body: (UnsafeMutableBufferPointer<Element>) throws -> R) rethrows -> R {
        makeUnique(minimumCapacity: count)
        summaries = nil
        derived = ColumnDerivedValues()
        let p = storage.base.assumingMemoryBound(to: Element.self)
        return try body(UnsafeMutableBufferPointer(start: p, count: count))
    }

    /// Makes room for `minimumCapacity` elements.
    public mutating func reserveCapacity(_ minimumCapacity: Int) {
        makeUnique(minimumCapacity: minimumCapacity)
    }

    /// Appends a value.
    public mutating func append(_ value: Element) {
        resolvePending()
        if count == capacity || storedStorage.isView || !isKnownUniquelyReferenced(&storedStorage) {
            makeUnique(minimumCapacity: count == capacity ? grownCapacity() : count)
        }
        storage.base.assumingMemoryBound(to: Element.self)[count] = value
        count += 1
        validity?.append(true)
        summaries = nil
        derived = ColumnDerivedValues()
    }

    /// Appends a value or, for nil, a null.
    public mutating func append(_ value: Element?) {
        if let value { append(value) } else { appendNull() }
    }

    /// Appends a null.
    public mutating func appendNull() {
        if validity == nil { validity = Bitmask(count: count, allSet: true) }
        let had = count
        append(Element.nullPlaceholder)
        validity![had] = false  // append above added a set bit
    }

    /// Appends rows `range` of `other`, values and nulls.
    public mutating func append(contentsOf other: Column<Element>, rows range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= other.count, "rows \(range) out of 0..<\(other.count)")
        guard !range.isEmpty else { return }
        let start = count
        let needed = count + range.count
        makeUnique(minimumCapacity: needed > capacity ? Swift.max(needed, grownCapacity()) : needed)
        other.withUnsafeBufferPointer { src in
            let dst = storage.base.assumingMemoryBound(to: Element.self) + start
            dst.update(from: src.baseAddress! + range.lowerBound, count: range.count)
        }
        count += range.count
        summaries = nil
        derived = ColumnDerivedValues()
        if other.validity != nil || validity != nil {
            if validity == nil { validity = Bitmask(count: start, allSet: true) }
            if let v = other.validity {
                for r in range { validity!.append(v[r]) }
            } else {
                validity!.append(repeating: true, count: range.count)
            }
        }
    }

    /// Appends `n` nulls.
    /// - Complexity: O(n), as one fill of the values and one of the validity words.
    public mutating func appendNulls(_ n: Int) {
        guard n > 0 else { return }
        if validity == nil { validity = Bitmask(count: count, allSet: true) }
        let start = count, needed = count + n
        makeUnique(minimumCapacity: needed > capacity ? Swift.max(needed, grownCapacity()) : needed)
        withUnsafeMutableSlots { base in (base + start).update(repeating: Element.nullPlaceholder, count: n) }
        count = needed
        validity!.append(repeating: false, count: n)
        summaries = nil
        derived = ColumnDerivedValues()
    }

    /// Drops the validity bitmap when no row is null, and frees unused capacity so the column holds
    /// its elements padded to 64 bytes and nothing more.
    public mutating func shrinkToFit() {
        // Pending values are shrunk when computed (the deferred merge does it).
        if pending != nil { return }
        if let v = validity, v.nonzeroBitCount == count { validity = nil }
        let needed = ColumnStorage.paddedByteCount(count * MemoryLayout<Element>.stride)
        if !storage.isView && storage.byteCapacity > needed {
            storage = storage.copy(usedBytes: count * MemoryLayout<Element>.stride, byteCount: needed)
        }
    }

    /// Replaces the validity bitmap (nil: no nulls).
    /// - Precondition: the bitmap covers `count` rows.
    public mutating func setValidity(_ newValue: Bitmask?) {
        precondition(newValue.map { $0.count == count } ?? true, "validity length differs from column length")
        validity = newValue
        summaries = nil
        derived = ColumnDerivedValues()
    }

    private func grownCapacity() -> Int { Swift.max(16, capacity * 2) }

    private mutating func makeUnique(minimumCapacity: Int) {
        resolvePending()
        let stride = MemoryLayout<Element>.stride
        if storedStorage.isView || !isKnownUniquelyReferenced(&storedStorage) || minimumCapacity > capacity {
            storedStorage = storedStorage.copy(usedBytes: count * stride, byteCount: Swift.max(minimumCapacity, count) * stride)
        }
    }

    private mutating func withUnsafeMutableSlots<R>(_ body: (UnsafeMutablePointer<Element>) throws -> R) rethrows -> R {
        try body(storage.base.assumingMemoryBound(to: Element.self))
    }
}

extension Column: Equatable {
    /// Bit-for-bit equality: same length, same nulls, and the same bit pattern in every non-null row
    /// (so NaN equals the same NaN, and -0.0 differs from 0.0).
    public static func == (lhs: Column, rhs: Column) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for row in 0 ..< lhs.count {
            let ln = lhs.isNull(row), rn = rhs.isNull(row)
            if ln != rn { return false }
            if ln { continue }
            var a = lhs[row], b = rhs[row]
            let same = withUnsafeBytes(of: &a) { pa in withUnsafeBytes(of: &b) { pb in pa.elementsEqual(pb) } }
            if !same { return false }
        }
        return true
    }
}
