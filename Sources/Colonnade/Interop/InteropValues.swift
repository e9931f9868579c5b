/// Shared decoding helpers of the Arrow and Parquet readers: bitmaps, numeric conversion, dates.
enum InteropValues {
    /// A validity mask of `count` rows from LSB-first bitmap bytes, nil when every row is valid.
    /// - Precondition: `bitmap` holds at least `(count + 7) / 8` bytes.
    static func bitmask(_ bitmap: UnsafeRawBufferPointer, count: Int) -> Bitmask? {
        var mask = Bitmask(count: count)
        let bytes = (count + 7) / 8
        mask.withUnsafeMutableWords { words in
            // Safe: the words hold at least `bytes` bytes; the caller checked the bitmap's length.
            UnsafeMutableRawPointer(words.baseAddress!).copyMemory(from: bitmap.baseAddress!, byteCount: bytes)
            let tail = count & 63
            if tail != 0 { words[words.count - 1] &= (UInt64(1) << UInt64(tail)) - 1 }
        }
        return mask.nonzeroBitCount == count ? nil : mask
    }

    /// Days since 1970-01-01 of a count of `unitsPerDay` units since the epoch (floor division,
    /// so instants before 1970 fall on the right day).
    @inline(__always)
    static func day(_ value: Int64, unitsPerDay: Int64) -> Int64 {
        let q = value / unitsPerDay
        return (value % unitsPerDay < 0) ? q - 1 : q
    }

    /// Appends `chunk` to `column` (the first chunk is taken as is).
    static func append(_ chunk: AnyColumn, to column: inout AnyColumn?) {
        guard let existing = column, existing.count > 0 else { column = chunk; return }
        switch (existing, chunk) {
        case (.int32(var a), .int32(let b)): a.append(contentsOf: b, rows: 0 ..< b.count); column = .int32(a)
        case (.int64(var a), .int64(let b)): a.append(contentsOf: b, rows: 0 ..< b.count); column = .int64(a)
        case (.float32(var a), .float32(let b)): a.append(contentsOf: b, rows: 0 ..< b.count); column = .float32(a)
        case (.float64(var a), .float64(let b)): a.append(contentsOf: b, rows: 0 ..< b.count); column = .float64(a)
        default: break  // the callers check types per column
        }
    }

    /// Interns symbols given as byte ranges, with a fast path for a run of the same symbol.
    struct SymbolInterner {
        var symbols: [String] = []
        var index: [String: Int32] = [:]
        private var last: [UInt8] = []
        private var lastCode: Int32 = -1

        mutating func code(_ bytes: UnsafeRawBufferPointer) -> Int32 {
            if lastCode >= 0 && bytes.count == last.count && bytes.elementsEqual(last) { return lastCode }
            let s = String(decoding: bytes, as: UTF8.self)
            let c: Int32
            if let existing = index[s] {
                c = existing
            } else {
                c = Int32(symbols.count)
                symbols.append(s)
                index[s] = c
            }
            last = Array(bytes)
            lastCode = c
            return c
        }

        mutating func code(_ s: String) -> Int32 {
            if let existing = index[s] { return existing }
            let c = Int32(symbols.count)
            symbols.append(s)
            index[s] = c
            return c
        }
    }
}
