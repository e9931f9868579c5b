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

    /// A time of day, `units` of `unitsPerDay` past midnight, as `HH:MM:SS` with the fraction
    /// when there is one (`16:00:00`, `09:30:00.25`).
    static func timeOfDay(_ units: Int64, unitsPerDay: Int64) -> String {
        let perSecond = Swift.max(1, unitsPerDay / 86_400)
        let seconds = units / perSecond, fraction = units % perSecond
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        var text = "\(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60))"
        if fraction != 0 {
            var digits = String(fraction)
            // Never a negative count: an INT96 time of day is read as written, so a hostile one
            // may be negative or longer than a day (Parquet fuzz finding, 2026-11-29).
            digits = String(repeating: "0", count: Swift.max(0, String(perSecond - 1).count - digits.count)) + digits
            while digits.hasSuffix("0") { digits.removeLast() }
            text += "." + digits
        }
        return text
    }

    /// The day of a timestamp of `unitsPerDay` units per day since the epoch, and its time of
    /// day in those units (0 at midnight): the day as written, for naive and UTC timestamps.
    @inline(__always)
    static func dayAndTime(_ value: Int64, unitsPerDay: Int64) -> (day: Int64, units: Int64) {
        let d = day(value, unitsPerDay: unitsPerDay)
        return (d, value &- d &* unitsPerDay)
    }

    /// The day number of a date or timestamp value (`unitsPerDay` 1: a date32 or Parquet DATE day
    /// number), or the error naming it when its day is outside `Day.storableDayNumbers`.
    @inline(__always)
    static func storableDay(_ value: Int64, unitsPerDay: Int64, file: String, column: String, row: Int) throws(InteropError) -> Int32 {
        let days = unitsPerDay == 1 ? value : day(value, unitsPerDay: unitsPerDay)
        guard days >= Int64(Day.storableDayNumbers.lowerBound), days <= Int64(Day.storableDayNumbers.upperBound) else {
            throw dateOutOfRange(value, days: days, unitsPerDay: unitsPerDay, file: file, column: column, row: row)
        }
        return Int32(truncatingIfNeeded: days)
    }

    @inline(never)
    static func dateOutOfRange(_ value: Int64, days: Int64, unitsPerDay: Int64, file: String, column: String, row: Int) -> InteropError {
        let unit =
            [
                1: "days", 86_400: "seconds", 86_400_000: "milliseconds", 86_400_000_000: "microseconds",
                86_400_000_000_000: "nanoseconds",
            ][unitsPerDay] ?? "units"
        let text = Int32(exactly: days).map { "date \(Day.format(day: $0))" } ?? "\(value) \(unit) since 1970-01-01"
        return .dateOutOfRange(file: file, column: column, row: row, value: text)
    }

    /// The chunks (columns of one element type, `type`) joined in order, in one allocation; the
    /// validity bits of chunks with nulls carried over.
    /// - Complexity: one copy of every value, plus one pass over the rows of chunks with nulls.
    static func concatenate(_ chunks: [AnyColumn], as type: ElementType) -> AnyColumn {
        if chunks.count == 1 { return chunks[0] }
        switch type {
        case .int32: return .int32(concatenate(chunks.compactMap { if case .int32(let c) = $0 { c } else { nil } }))
        case .int64: return .int64(concatenate(chunks.compactMap { if case .int64(let c) = $0 { c } else { nil } }))
        case .float32: return .float32(concatenate(chunks.compactMap { if case .float32(let c) = $0 { c } else { nil } }))
        case .float64: return .float64(concatenate(chunks.compactMap { if case .float64(let c) = $0 { c } else { nil } }))
        }
    }

    static func concatenate<T: ColumnElement>(_ parts: [Column<T>]) -> Column<T> {
        let total = parts.reduce(0) { $0 + $1.count }
        var out = Column<T>(unsafeUninitializedCount: total) { dst in
            var at = 0
            for p in parts where p.count > 0 {
                p.withUnsafeBufferPointer { src in
                    // Safe: the parts' counts add up to total, so at ..< at + src.count lies in dst.
                    (dst.baseAddress! + at).initialize(from: src.baseAddress!, count: src.count)
                }
                at += p.count
            }
        }
        if parts.contains(where: { $0.validity != nil }) {
            var bits = Bitmask(count: total, allSet: true)
            var at = 0
            for p in parts {
                if let v = p.validity {
                    for r in 0 ..< p.count where !v[r] { bits[at + r] = false }
                }
                at += p.count
            }
            out.setValidity(bits)
        }
        return out
    }

    /// Interns symbols given as byte ranges, with a fast path for a run of the same symbol.
    struct SymbolInterner {
        var symbols: [String] = []
        var index: [String: Int32] = [:]
        private var last: [UInt8] = []
        private var lastCode: Int32 = -1

        mutating func number(_ bytes: UnsafeRawBufferPointer) -> Int32 {
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

        mutating func number(_ s: String) -> Int32 {
            if let existing = index[s] { return existing }
            let c = Int32(symbols.count)
            symbols.append(s)
            index[s] = c
            return c
        }
    }
}
