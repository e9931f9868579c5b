#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Growable raw buffers the decoders append rows to: one `Double` buffer per value column, the
/// dates, optional per-row ticker numbers, and null bits allocated only for columns that have a null.
///
/// Decoders read `values`, `dates` and `tickerNumbers` into locals and write `[row]` directly, calling
/// `reserve(rows:)` before a row that may not fit; the buffers come from `malloc`/`realloc`, so
/// reserving from an upper-bound estimate costs address space, not resident memory, and growth of
/// a large buffer is a remap, not a copy. `makeColumns` moves the rows into `Column`s one column at
/// a time (freeing each buffer as it goes), optionally through a permutation, so the peak is the
/// buffers plus one column.
package final class RowBuffers {
    /// The input's name, for errors.
    let source: String
    /// Value columns.
    let columnCount: Int
    /// Rows that fit.
    private(set) var capacity: Int
    /// Rows written (the decoder sets it as it finishes each row).
    package var count = 0
    /// One buffer per value column.
    let values: UnsafeMutablePointer<UnsafeMutablePointer<Double>>
    /// Null bits per value column (a set bit is a null), nil until the column's first null.
    let nulls: UnsafeMutablePointer<UnsafeMutablePointer<UInt64>?>
    /// Days since 1970-01-01 per row.
    private(set) var dates: UnsafeMutablePointer<Int32>
    /// Ticker number per row, for datatables.
    private(set) var tickerNumbers: UnsafeMutablePointer<Int32>?

    /// Buffers for `estimatedRows` rows (at least 16).
    ///
    /// - Throws: `DecodeError.outOfMemory` naming `source` when a buffer cannot be allocated
    ///   (nothing is left allocated then).
    init(columnCount: Int, estimatedRows: Int, withTickers: Bool, source: String) throws(DecodeError) {
        let capacity = Swift.max(16, estimatedRows)
        // Every buffer is allocated before any property is set, so a failure frees what was
        // allocated and throws with nothing half-built.
        var owned: [UnsafeMutableRawPointer] = []
        func buffer<T>(_: T.Type) throws(DecodeError) -> UnsafeMutablePointer<T> {
            guard let p = RowBuffers.allocate(T.self, capacity) else {
                for q in owned { free(q) }
                throw .outOfMemory(source: source, rows: capacity, bytes: RowBuffers.byteCount(T.self, capacity))
            }
            owned.append(UnsafeMutableRawPointer(p))
            return p
        }
        var columns: [UnsafeMutablePointer<Double>] = []
        columns.reserveCapacity(columnCount)
        for _ in 0 ..< columnCount { columns.append(try buffer(Double.self)) }
        let dates = try buffer(Int32.self)
        let tickerNumbers = withTickers ? try buffer(Int32.self) : nil
        self.source = source
        self.columnCount = columnCount
        self.capacity = capacity
        values = .allocate(capacity: Swift.max(columnCount, 1))
        nulls = .allocate(capacity: Swift.max(columnCount, 1))
        for c in 0 ..< columnCount {
            values[c] = columns[c]
            nulls[c] = nil
        }
        self.dates = dates
        self.tickerNumbers = tickerNumbers
    }

    deinit {
        for c in 0 ..< columnCount {
            if values[c] != RowBuffers.taken { free(values[c]) }
            free(nulls[c])
        }
        values.deallocate()
        nulls.deallocate()
        free(dates)
        free(tickerNumbers)
    }

    /// Makes room for at least `rows` rows.
    ///
    /// - Throws: `DecodeError.outOfMemory` when a buffer cannot grow; the buffers then still hold
    ///   every row written so far, at the old capacity.
    @inline(__always)
    func reserve(rows: Int) throws(DecodeError) {
        if rows > capacity { try grow(to: rows) }
    }

    @inline(never)
    private func grow(to rows: Int) throws(DecodeError) {
        let old = capacity
        let new = Swift.max(rows, old + old / 2)
        // A buffer that grew stays grown when a later one fails: `capacity` moves only once all
        // have, and a larger buffer than `capacity` is harmless.
        for c in 0 ..< columnCount {
            values[c] = try growing(values[c], to: new, rows: new)
            if let bits = nulls[c] {
                let oldWords = (old + 63) >> 6, newWords = (new + 63) >> 6
                let grown = try growing(bits, to: newWords, rows: new)
                (grown + oldWords).initialize(repeating: 0, count: newWords - oldWords)
                nulls[c] = grown
            }
        }
        dates = try growing(dates, to: new, rows: new)
        if let t = tickerNumbers { tickerNumbers = try growing(t, to: new, rows: new) }
        capacity = new
    }

    /// `p` reallocated to `count` elements (for `rows` rows), or `.outOfMemory`; `p` stays valid
    /// when it throws.
    private func growing<T>(_ p: UnsafeMutablePointer<T>, to count: Int, rows: Int) throws(DecodeError) -> UnsafeMutablePointer<T> {
        guard let grown = RowBuffers.reallocate(p, count) else {
            throw .outOfMemory(source: source, rows: rows, bytes: RowBuffers.byteCount(T.self, count))
        }
        return grown
    }

    /// Marks `row` of value column `column` null (its value slot must hold 0).
    ///
    /// - Throws: `DecodeError.outOfMemory` when the column's first null needs a bit buffer that
    ///   cannot be allocated.
    @inline(never)
    func setNull(column: Int, row: Int) throws(DecodeError) {
        assert(row < capacity)
        let bits: UnsafeMutablePointer<UInt64>
        if let existing = nulls[column] {
            bits = existing
        } else {
            let words = (capacity + 63) >> 6
            guard let fresh = RowBuffers.allocate(UInt64.self, words) else {
                throw .outOfMemory(source: source, rows: capacity, bytes: RowBuffers.byteCount(UInt64.self, words))
            }
            fresh.initialize(repeating: 0, count: words)
            nulls[column] = fresh
            bits = fresh
        }
        // Safe: row < capacity, and the bit buffer covers capacity rows.
        bits[row >> 6] |= 1 << UInt64(row & 63)
    }

    /// The rows of value column `column` as a `Column<Double>`, in `order` (input row numbers) or
    /// in input order; frees the column's buffers.
    ///
    /// - Throws: `DecodeError.outOfMemory` when the column (or its validity bitmap) cannot be
    ///   allocated; the buffers then still hold the column's rows.
    func takeColumn(_ column: Int, order: UnsafeBufferPointer<Int32>?) throws(DecodeError) -> Column<Double> {
        let n = count
        let src = values[column]
        let made = Column<Double>(allocatingUnsafeUninitializedCount: n) { dst in
            guard let base = dst.baseAddress, n > 0 else { return }
            if let order {
                // Safe: order is a permutation of 0..<n.
                for i in 0 ..< n { base[i] = src[Int(order[i])] }
            } else {
                base.update(from: src, count: n)
            }
        }
        guard var out = made else {
            throw .outOfMemory(source: source, rows: n, bytes: RowBuffers.byteCount(Double.self, n))
        }
        if let bits = nulls[column] {
            guard var validity = Bitmask(allocatingCount: n, allSet: true) else {
                throw .outOfMemory(source: source, rows: n, bytes: RowBuffers.byteCount(UInt64.self, (n + 63) >> 6))
            }
            validity.withUnsafeMutableWords { words in
                func isNull(_ r: Int) -> Bool { bits[r >> 6] & (1 << UInt64(r & 63)) != 0 }
                for i in 0 ..< n {
                    let r = order.map { Int($0[i]) } ?? i
                    if isNull(r) { words[i >> 6] &= ~(1 << UInt64(i & 63)) }
                }
            }
            out.setValidity(validity)
            free(bits)
            nulls[column] = nil
        }
        free(src)
        values[column] = RowBuffers.taken
        return out
    }

    /// The dates as a column, in `order` or input order.
    ///
    /// - Throws: `DecodeError.outOfMemory` when the column cannot be allocated.
    func takeDates(order: UnsafeBufferPointer<Int32>?) throws(DecodeError) -> Column<Int32> {
        let n = count
        let src = dates
        let made = Column<Int32>(allocatingUnsafeUninitializedCount: n) { dst in
            guard let base = dst.baseAddress, n > 0 else { return }
            if let order {
                for i in 0 ..< n { base[i] = src[Int(order[i])] }
            } else {
                base.update(from: src, count: n)
            }
        }
        guard let made else { throw .outOfMemory(source: source, rows: n, bytes: RowBuffers.byteCount(Int32.self, n)) }
        return made
    }

    /// The ticker numbers as an array, in `order` or input order.
    func takeTickerNumbers(order: UnsafeBufferPointer<Int32>?) -> [Int32]? {
        guard let src = tickerNumbers else { return nil }
        let n = count
        return [Int32](unsafeUninitializedCapacity: n) { dst, initialized in
            if let order {
                for i in 0 ..< n { dst[i] = src[Int(order[i])] }
            } else if n > 0 {
                dst.baseAddress!.initialize(from: src, count: n)
            }
            initialized = n
        }
    }

    /// What a taken column's slot holds (never read or written, never freed).
    nonisolated(unsafe) private static let taken = UnsafeMutablePointer<Double>.allocate(capacity: 1)

    /// The bytes of `n` elements of `T` (at least one element), `Int.max` when that overflows.
    static func byteCount<T>(_: T.Type, _ n: Int) -> Int {
        let (bytes, overflow) = Swift.max(n, 1).multipliedReportingOverflow(by: MemoryLayout<T>.stride)
        return overflow ? Int.max : bytes
    }

    /// `n` elements of `T` from `malloc`, or nil when they cannot be allocated (or their size
    /// overflows).
    static func allocate<T>(_: T.Type, _ n: Int) -> UnsafeMutablePointer<T>? {
        let bytes = byteCount(T.self, n)
        guard bytes != Int.max, let raw = malloc(bytes) else { return nil }
        adviseHugePages(raw, bytes)
        return raw.bindMemory(to: T.self, capacity: n)
    }

    /// Asks for transparent huge pages on a large buffer: filling it then takes one page fault
    /// per 2 MiB instead of per 4 KiB (page faults were a quarter of a 1 GB CSV decode).
    private static func adviseHugePages(_ raw: UnsafeMutableRawPointer, _ byteCount: Int) {
        #if os(Linux)
        let huge = 2 << 20
        guard byteCount >= 2 * huge else { return }
        let start = (Int(bitPattern: raw) + huge - 1) & ~(huge - 1)
        let end = (Int(bitPattern: raw) + byteCount) & ~(huge - 1)
        if end > start, let p = UnsafeMutableRawPointer(bitPattern: start) {
            _ = madvise(p, end - start, 14 /* MADV_HUGEPAGE */)
        }
        #endif
    }

    /// `p` grown to `n` elements with `realloc`, or nil (and `p` unchanged) when that fails.
    static func reallocate<T>(_ p: UnsafeMutablePointer<T>, _ n: Int) -> UnsafeMutablePointer<T>? {
        let bytes = byteCount(T.self, n)
        guard bytes != Int.max, let raw = realloc(p, bytes) else { return nil }
        adviseHugePages(raw, bytes)
        return raw.bindMemory(to: T.self, capacity: n)
    }
}
