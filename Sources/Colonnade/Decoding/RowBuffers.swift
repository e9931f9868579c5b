#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Growable raw buffers the decoders append rows to: one `Double` buffer per value column, the
/// dates, optional per-row ticker codes, and null bits allocated only for columns that have a null.
///
/// Decoders read `values`, `dates` and `tickerCodes` into locals and write `[row]` directly, calling
/// `reserve(rows:)` before a row that may not fit; the buffers come from `malloc`/`realloc`, so
/// reserving from an upper-bound estimate costs address space, not resident memory, and growth of
/// a large buffer is a remap, not a copy. `makeColumns` moves the rows into `Column`s one column at
/// a time (freeing each buffer as it goes), optionally through a permutation, so the peak is the
/// buffers plus one column.
package final class RowBuffers {
    /// Value columns.
    let columnCount: Int
    /// Rows that fit.
    private(set) var capacity: Int
    /// Rows written (the decoder sets it as it finishes each row).
    var count = 0
    /// One buffer per value column.
    let values: UnsafeMutablePointer<UnsafeMutablePointer<Double>>
    /// Null bits per value column (a set bit is a null), nil until the column's first null.
    let nulls: UnsafeMutablePointer<UnsafeMutablePointer<UInt64>?>
    /// Days since 1970-01-01 per row.
    private(set) var dates: UnsafeMutablePointer<Int32>
    /// Ticker code per row, for datatables.
    private(set) var tickerCodes: UnsafeMutablePointer<Int32>?

    init(columnCount: Int, estimatedRows: Int, withTickers: Bool) {
        self.columnCount = columnCount
        capacity = Swift.max(16, estimatedRows)
        values = .allocate(capacity: Swift.max(columnCount, 1))
        nulls = .allocate(capacity: Swift.max(columnCount, 1))
        for c in 0 ..< columnCount {
            values[c] = RowBuffers.allocate(Double.self, capacity)
            nulls[c] = nil
        }
        dates = RowBuffers.allocate(Int32.self, capacity)
        tickerCodes = withTickers ? RowBuffers.allocate(Int32.self, capacity) : nil
    }

    deinit {
        for c in 0 ..< columnCount {
            free(values[c])
            free(nulls[c])
        }
        values.deallocate()
        nulls.deallocate()
        free(dates)
        free(tickerCodes)
    }

    /// Makes room for at least `rows` rows.
    @inline(__always)
    func reserve(rows: Int) {
        if rows > capacity { grow(to: rows) }
    }

    @inline(never)
    private func grow(to rows: Int) {
        let old = capacity
        let new = Swift.max(rows, old + old / 2)
        for c in 0 ..< columnCount {
            values[c] = RowBuffers.reallocate(values[c], new)
            if let bits = nulls[c] {
                let oldWords = (old + 63) >> 6, newWords = (new + 63) >> 6
                let grown = RowBuffers.reallocate(bits, newWords)
                (grown + oldWords).initialize(repeating: 0, count: newWords - oldWords)
                nulls[c] = grown
            }
        }
        dates = RowBuffers.reallocate(dates, new)
        if let t = tickerCodes { tickerCodes = RowBuffers.reallocate(t, new) }
        capacity = new
    }

    /// Marks `row` of value column `column` null (its value slot must hold 0).
    @inline(never)
    func setNull(column: Int, row: Int) {
        assert(row < capacity)
        if nulls[column] == nil {
            let words = (capacity + 63) >> 6
            let bits = RowBuffers.allocate(UInt64.self, words)
            bits.initialize(repeating: 0, count: words)
            nulls[column] = bits
        }
        // Safe: row < capacity, and the bit buffer covers capacity rows.
        nulls[column]![row >> 6] |= 1 << UInt64(row & 63)
    }

    /// The rows of value column `column` as a `Column<Double>`, in `order` (input row numbers) or
    /// in input order; frees the column's buffers.
    func takeColumn(_ column: Int, order: UnsafeBufferPointer<Int32>?) -> Column<Double> {
        let n = count
        let src = values[column]
        var out = Column<Double>(unsafeUninitializedCount: n) { dst in
            guard let base = dst.baseAddress, n > 0 else { return }
            if let order {
                // Safe: order is a permutation of 0..<n.
                for i in 0 ..< n { base[i] = src[Int(order[i])] }
            } else {
                base.update(from: src, count: n)
            }
        }
        free(src)
        values[column] = RowBuffers.allocate(Double.self, 1)
        if let bits = nulls[column] {
            var validity = Bitmask(count: n, allSet: true)
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
        return out
    }

    /// The dates as a column, in `order` or input order.
    func takeDates(order: UnsafeBufferPointer<Int32>?) -> Column<Int32> {
        let n = count
        let src = dates
        return Column<Int32>(unsafeUninitializedCount: n) { dst in
            guard let base = dst.baseAddress, n > 0 else { return }
            if let order {
                for i in 0 ..< n { base[i] = src[Int(order[i])] }
            } else {
                base.update(from: src, count: n)
            }
        }
    }

    /// The ticker codes as an array, in `order` or input order.
    func takeTickerCodes(order: UnsafeBufferPointer<Int32>?) -> [Int32]? {
        guard let src = tickerCodes else { return nil }
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

    private static func allocate<T>(_: T.Type, _ n: Int) -> UnsafeMutablePointer<T> {
        guard let raw = malloc(Swift.max(n, 1) * MemoryLayout<T>.stride) else {
            fatalError("out of memory allocating \(n) decoder rows")
        }
        adviseHugePages(raw, n * MemoryLayout<T>.stride)
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

    private static func reallocate<T>(_ p: UnsafeMutablePointer<T>, _ n: Int) -> UnsafeMutablePointer<T> {
        guard let raw = realloc(p, Swift.max(n, 1) * MemoryLayout<T>.stride) else {
            fatalError("out of memory growing decoder rows to \(n)")
        }
        adviseHugePages(raw, n * MemoryLayout<T>.stride)
        return raw.bindMemory(to: T.self, capacity: n)
    }
}
