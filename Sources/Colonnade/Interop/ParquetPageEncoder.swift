/// Encodes one data page of a numeric column: definition levels (optional columns only, bit-packed
/// straight from the validity bits, or one run when there are no nulls), then the PLAIN values of
/// the non-null rows; and folds the page into the chunk's statistics.
enum ParquetPageEncoder {
    static func encode(
        _ column: AnyColumn, _ pieces: [ParquetWriter.Segment], rows: Int, required: Bool,
        statistics: inout ParquetStatistics
    ) -> [UInt8] {
        switch column {
        case .int32(let c): encode(c, pieces, rows: rows, required: required, statistics: &statistics)
        case .int64(let c): encode(c, pieces, rows: rows, required: required, statistics: &statistics)
        case .float32(let c): encode(c, pieces, rows: rows, required: required, statistics: &statistics)
        case .float64(let c): encode(c, pieces, rows: rows, required: required, statistics: &statistics)
        }
    }

    static func encode<T: ColumnElement>(
        _ column: Column<T>, _ pieces: [ParquetWriter.Segment], rows: Int, required: Bool,
        statistics: inout ParquetStatistics
    ) -> [UInt8] {
        let width = MemoryLayout<T>.size
        var nulls = 0
        for p in pieces { nulls += column.validity.map { p.rows.count - $0.nonzeroBitCount(in: p.rows) } ?? 0 }
        var levels = RLEHybridEncoder(bitWidth: 1)
        if !required {
            if nulls == 0 {
                levels.appendRun(1, count: rows)
            } else {
                var bits = [UInt8](repeating: 0, count: (rows + 7) / 8)
                var i = 0
                for p in pieces {
                    for r in p.rows {
                        if !column.isNull(r) { bits[i >> 3] |= 1 << UInt8(i & 7) }
                        i += 1
                    }
                }
                levels.appendBitPacked(bits, count: rows)
            }
        }
        let prefix = required ? 0 : 4 + levels.bytes.count
        var lo = T.nullPlaceholder, hi = T.nullPlaceholder
        var any = false
        // Every byte is written below: the prefix, then one value per non-null row.
        let out = [UInt8](unsafeUninitializedCapacity: prefix + (rows - nulls) * width) { buffer, count in
            count = buffer.count
            let dst = UnsafeMutableRawBufferPointer(buffer)
            if !required {
                var n = UInt32(levels.bytes.count).littleEndian
                // Safe: out holds 4 + levels bytes before the values.
                withUnsafeBytes(of: &n) { dst.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: 4) }
                levels.bytes.withUnsafeBytes { (dst.baseAddress! + 4).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            }
            var at = prefix
            column.withUnsafeBufferPointer { src in
                for p in pieces {
                    if nulls == 0 || column.validity == nil {
                        // Safe: p.rows lies in the column; out has room for every non-null row.
                        (dst.baseAddress! + at).copyMemory(from: src.baseAddress! + p.rows.lowerBound, byteCount: p.rows.count * width)
                        at += p.rows.count * width
                        // Safe: p.rows lies in the column.
                        foldAll(UnsafeBufferPointer(rebasing: src[p.rows]), &lo, &hi, &any)
                    } else {
                        for r in p.rows where !column.isNull(r) {
                            // Safe: as above, one element per non-null row.
                            (dst.baseAddress! + at).storeBytes(of: src[r], as: T.self)
                            at += width
                            fold(src[r], &lo, &hi, &any)
                        }
                    }
                }
            }
        }
        merge(lo, hi, any: any, nulls: nulls, into: &statistics)
        return out
    }

    /// The start of a page without nulls whose values go to the output straight from the column:
    /// the definition levels (one run of `rows` ones, with their length) of an optional column,
    /// nothing for a required one; the page's values are the pieces' rows, in order. Folds the
    /// pieces into the chunk's statistics. Nil when the page has a null (it must be staged).
    static func directPrefix(
        _ column: AnyColumn, _ pieces: [ParquetWriter.Segment], rows: Int, required: Bool,
        statistics: inout ParquetStatistics
    ) -> [UInt8]? {
        switch column {
        case .int32(let c): directPrefix(c, pieces, rows: rows, required: required, statistics: &statistics)
        case .int64(let c): directPrefix(c, pieces, rows: rows, required: required, statistics: &statistics)
        case .float32(let c): directPrefix(c, pieces, rows: rows, required: required, statistics: &statistics)
        case .float64(let c): directPrefix(c, pieces, rows: rows, required: required, statistics: &statistics)
        }
    }

    static func directPrefix<T: ColumnElement>(
        _ column: Column<T>, _ pieces: [ParquetWriter.Segment], rows: Int, required: Bool,
        statistics: inout ParquetStatistics
    ) -> [UInt8]? {
        if let validity = column.validity {
            for p in pieces where validity.nonzeroBitCount(in: p.rows) != p.rows.count { return nil }
        }
        var lo = T.nullPlaceholder, hi = T.nullPlaceholder
        var any = false
        column.withUnsafeBufferPointer { src in
            // Safe: every piece's rows lie in the column.
            for p in pieces { foldAll(UnsafeBufferPointer(rebasing: src[p.rows]), &lo, &hi, &any) }
        }
        merge(lo, hi, any: any, nulls: 0, into: &statistics)
        guard !required else { return [] }
        var levels = RLEHybridEncoder(bitWidth: 1)
        levels.appendRun(1, count: rows)
        var n = UInt32(levels.bytes.count).littleEndian
        return withUnsafeBytes(of: &n) { Array($0) } + levels.bytes
    }

    /// Folds a page's minimum and maximum (`any`: it had a non-NaN value) into the chunk's statistics.
    static func merge<T: ColumnElement>(_ lo: T, _ hi: T, any: Bool, nulls: Int, into statistics: inout ParquetStatistics) {
        var lo = lo, hi = hi
        statistics.nullCount += nulls
        if any {
            if T.self == Double.self || T.self == Float.self {
                // Parquet: a zero minimum is written as -0.0, a zero maximum as +0.0.
                if lo == T.nullPlaceholder { lo = negativeZero(T.self) }
                if hi == T.nullPlaceholder { hi = T.nullPlaceholder }
            }
            let newMin = plainBytes(lo), newMax = plainBytes(hi)
            if let m = statistics.min, let old = value(m, as: T.self) {
                if lo < old { statistics.min = newMin }
            } else if statistics.min == nil {
                statistics.min = newMin
            }
            if let m = statistics.max, let old = value(m, as: T.self) {
                if hi > old { statistics.max = newMax }
            } else if statistics.max == nil {
                statistics.max = newMax
            }
        }
    }

    /// `fold` over a whole buffer, in a loop the compiler can vectorize: after the first non-NaN
    /// value, `v < lo ? v : lo` keeps `lo` for a NaN (every comparison with NaN is false), which
    /// is `fold`'s rule.
    @inline(__always)
    static func foldAll<T: ColumnElement>(_ values: UnsafeBufferPointer<T>, _ lo: inout T, _ hi: inout T, _ any: inout Bool) {
        var i = 0
        if !any {
            while i < values.count && values[i].isNaNValue { i += 1 }
            guard i < values.count else { return }
            lo = values[i]
            hi = values[i]
            any = true
        }
        var l = lo, h = hi
        while i < values.count {
            let v = values[i]
            l = v < l ? v : l
            h = v > h ? v : h
            i += 1
        }
        lo = l
        hi = h
    }

    /// Folds `v` into the running minimum and maximum; NaN is left out (as Parquet requires).
    @inline(__always)
    static func fold<T: ColumnElement>(_ v: T, _ lo: inout T, _ hi: inout T, _ any: inout Bool) {
        if v.isNaNValue { return }
        if !any {
            lo = v
            hi = v
            any = true
            return
        }
        if v < lo { lo = v }
        if v > hi { hi = v }
    }

    static func negativeZero<T: ColumnElement>(_: T.Type) -> T {
        if T.self == Double.self { return unsafeBitCast(-0.0 as Double, to: T.self) }
        if T.self == Float.self { return unsafeBitCast(-0.0 as Float, to: T.self) }
        return T.nullPlaceholder
    }

    static func plainBytes<T: ColumnElement>(_ v: T) -> [UInt8] {
        var x = v
        return withUnsafeBytes(of: &x) { Array($0) }
    }

    static func value<T: ColumnElement>(_ bytes: [UInt8], as: T.Type) -> T? {
        guard bytes.count == MemoryLayout<T>.size else { return nil }
        return bytes.withUnsafeBytes { $0.loadUnaligned(as: T.self) }
    }
}
