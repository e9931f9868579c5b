/// A JSON scanner over bytes whose state is this struct's stored properties (a value type kept in
/// locals by the caller), and a row loop that appends a `data` array of rows straight into
/// `RowBuffers`. The shape of a document (which keys mean what) is the caller's business: the
/// Data Link format module walks its response shapes with `forEachKey` and hands each rows array
/// to `decodeRows`. Errors are `DecodeError`s with byte positions.
package struct JSONScanner {
    package let input: ByteInput
    /// The next byte to read.
    package var position: Int
    /// Nesting depth of `skipValue`, bounded so hostile input cannot exhaust the stack.
    private static let maximumDepth = 256

    package init(input: ByteInput, position: Int) {
        self.input = input
        self.position = position
    }

    // MARK: Rows

    /// Decodes a `data` array of rows into new buffers.
    ///
    /// `kinds[i]` says what row position `i` holds (see `RowSlot`): a value column index (≥ 0),
    /// the date, the ticker (its number is appended; `symbols` collects the symbols in number order,
    /// `tickerSymbol` turns a ticker as written into a symbol) or a skipped value.
    ///
    /// The row loop is one long function on purpose: it is the hot path of every JSON decode, and
    /// keeping the pointers and the row counter in locals is what makes it fast.
    package mutating func decodeRows(
        names: [String], kinds: [Int32], symbols: inout [String], valueCount: Int,
        tickerSymbol: (String) -> String = { $0 }
    ) throws(DecodeError) -> RowBuffers {
        let width = kinds.count
        // An estimate of the rows (`["2017-09-29",960.11,…],` is about 8 bytes per value + 16).
        let estimate = (input.count - position) / (8 * width + 8) + 16
        let buffers = try RowBuffers(
            columnCount: valueCount, estimatedRows: estimate, withTickers: kinds.contains(RowSlot.ticker),
            source: input.source)
        let base = input.base
        let end = input.count
        let values = buffers.values
        var p = position
        var row = 0
        var tickers = TickerInterner()
        defer { symbols = tickers.symbols }

        @inline(__always) func skipBlanks() {
            while p < end && base[p] <= 32 && ByteInput.isBlank(base[p]) { p += 1 }
        }
        func fail(_ expected: String, column i: Int? = nil) -> DecodeError {
            let name = i.map { names[$0] }
            if p >= end { return .truncated(input.position(p, row: row + 1, column: name), expected: expected) }
            return .malformed(input.position(p, row: row + 1, column: name), expected: expected, found: input.found(at: p))
        }

        skipBlanks()
        guard p < end, base[p] == UInt8(ascii: "[") else { throw fail("'[' starting the 'data' array") }
        p += 1
        skipBlanks()
        if p < end && base[p] == UInt8(ascii: "]") {
            position = p + 1
            return buffers
        }
        while true {
            skipBlanks()
            guard p < end, base[p] == UInt8(ascii: "[") else { throw fail("'[' starting row \(row + 1)") }
            p += 1
            try buffers.reserve(rows: row + 1)
            let dates = buffers.dates
            for i in 0 ..< width {
                skipBlanks()
                if i > 0 {
                    guard p < end else { throw fail("',' or ']'", column: i) }
                    if base[p] == UInt8(ascii: ",") {
                        p += 1
                        skipBlanks()
                    } else if base[p] == UInt8(ascii: "]") {
                        throw .rowWidth(input.position(p, row: row + 1, column: names[i]), expected: width, found: i)
                    } else {
                        throw fail("',' or ']'", column: i)
                    }
                }
                guard p < end else { throw fail("a value", column: i) }
                let kind = kinds[i]
                let b = base[p]
                if kind >= 0 {
                    let column = values[Int(kind)]
                    if b == UInt8(ascii: "n") {
                        guard end - p >= 4, base[p + 1] == UInt8(ascii: "u"), base[p + 2] == UInt8(ascii: "l"),
                            base[p + 3] == UInt8(ascii: "l")
                        else {
                            throw .badNumber(input.position(p, row: row + 1, column: names[i]), found: input.found(at: p))
                        }
                        p += 4
                        column[row] = 0
                        try buffers.setNull(column: Int(kind), row: row)
                    } else {
                        var start = p, stop = p
                        if b == UInt8(ascii: "\"") {
                            // A quoted number: the bytes between the quotes.
                            start = p + 1
                            stop = start
                            while stop < end && base[stop] != UInt8(ascii: "\"") && base[stop] != UInt8(ascii: "\\") { stop += 1 }
                            guard stop < end, base[stop] == UInt8(ascii: "\"") else {
                                if stop >= end {
                                    p = stop
                                    throw fail("'\"' closing a quoted number", column: i)
                                }
                                throw .badNumber(input.position(p, row: row + 1, column: names[i]), found: input.found(at: p))
                            }
                            p = stop + 1
                        } else {
                            if let (v, after) = NumberScanning.scanPlainDecimal(base, p, end) {
                                let c = after < end ? base[after] : UInt8(ascii: ",")
                                if c == UInt8(ascii: ",") || c == UInt8(ascii: "]") || c <= 32 || c == UInt8(ascii: "}") {
                                    column[row] = v
                                    p = after
                                    continue
                                }
                            }
                            while stop < end {
                                let c = base[stop]
                                if c == UInt8(ascii: ",") || c == UInt8(ascii: "]") || c <= 32 || c == UInt8(ascii: "}") { break }
                                stop += 1
                            }
                            p = stop
                        }
                        // Safe: start ≤ stop ≤ end.
                        guard let v = DecimalParser.parseDouble(base + start, count: stop - start) else {
                            let at = b == UInt8(ascii: "\"") ? start - 1 : start
                            throw .badNumber(input.position(at, row: row + 1, column: names[i]), found: input.found(at: at))
                        }
                        column[row] = v
                    }
                } else if kind == RowSlot.date {
                    // The fast path is exactly `"YYYY-MM-DD"`.
                    if b == UInt8(ascii: "\""), end - p >= 12, base[p + 11] == UInt8(ascii: "\""),
                        let day = Day.parseDay(base + p + 1, count: 10)
                    {
                        dates[row] = day
                        p += 12
                    } else {
                        throw .badDate(input.position(p, row: row + 1, column: names[i]), found: input.found(at: p))
                    }
                } else if kind == RowSlot.ticker {
                    guard b == UInt8(ascii: "\"") else { throw fail("a ticker string", column: i) }
                    position = p
                    let range = try readStringRange()
                    p = position
                    let count = range.upperBound - range.lowerBound
                    guard count > 0 else { throw fail("a ticker", column: i) }
                    guard count <= ByteInput.maximumTextLength else {
                        throw .malformed(
                            input.position(range.lowerBound, row: row + 1, column: names[i]),
                            expected: "a ticker of at most \(ByteInput.maximumTextLength) bytes", found: "\(count) bytes")
                    }
                    let number = tickers.number(at: range.lowerBound, count: count, in: base) { tickerSymbol(string(range)) }
                    buffers.tickerNumbers![row] = number
                } else {
                    position = p
                    try skipValue()
                    p = position
                }
            }
            skipBlanks()
            guard p < end else { throw fail("']' ending row \(row + 1)") }
            if base[p] == UInt8(ascii: ",") {
                throw .rowWidth(input.position(p, row: row + 1, column: nil), expected: width, found: width + 1)
            }
            guard base[p] == UInt8(ascii: "]") else { throw fail("']' ending row \(row + 1)") }
            p += 1
            row += 1
            buffers.count = row
            skipBlanks()
            guard p < end else { throw fail("',' or ']' after row \(row)") }
            if base[p] == UInt8(ascii: ",") {
                p += 1
                continue
            }
            if base[p] == UInt8(ascii: "]") {
                p += 1
                break
            }
            throw fail("',' or ']' after row \(row)")
        }
        position = p
        return buffers
    }

    /// Decodes a time-series `data` array: the date first, then one value per other column.
    package mutating func decodeSeriesRows(names: [String]) throws(DecodeError) -> RowBuffers {
        var unused: [String] = []
        let kinds = (0 ..< names.count).map { $0 == 0 ? RowSlot.date : Int32($0 - 1) }
        return try decodeRows(names: names, kinds: kinds, symbols: &unused, valueCount: names.count - 1)
    }

    // MARK: Scanner

    package mutating func skipBlanks() {
        while position < input.count && ByteInput.isBlank(input.base[position]) { position += 1 }
    }

    package mutating func expect(_ byte: UInt8, _ what: String) throws(DecodeError) {
        skipBlanks()
        guard position < input.count else { throw .truncated(input.position(position), expected: what) }
        guard input.base[position] == byte else {
            throw .malformed(input.position(position), expected: what, found: input.found(at: position))
        }
        position += 1
    }

    package mutating func expectObjectStart(_ what: String) throws(DecodeError) {
        try expect(UInt8(ascii: "{"), what)
        position -= 1
    }

    /// Calls `body` for each key of the object at `position` (just before its `{`), with `position`
    /// at the key's value; `body` must consume the value.
    package mutating func forEachKey(_ body: (inout JSONScanner, Range<Int>) throws(DecodeError) -> Void) throws(DecodeError) {
        guard try beginObject() else { return }
        repeat {
            let key = try readKey()
            try body(&self, key)
        } while try nextMember()
    }

    /// Enters the object at `position` (its `{`, or just after it): false when the object is empty
    /// (its `}` is consumed then), true when a key follows.
    package mutating func beginObject() throws(DecodeError) -> Bool {
        skipBlanks()
        if position < input.count && input.base[position] == UInt8(ascii: "{") { position += 1 }
        skipBlanks()
        if position < input.count && input.base[position] == UInt8(ascii: "}") {
            position += 1
            return false
        }
        return true
    }

    /// Reads a key and its `:`, leaving `position` at the value; returns the key's contents.
    package mutating func readKey() throws(DecodeError) -> Range<Int> {
        skipBlanks()
        guard position < input.count else { throw .truncated(input.position(position), expected: "a key") }
        guard input.base[position] == UInt8(ascii: "\"") else {
            throw .malformed(input.position(position), expected: "a key string", found: input.found(at: position))
        }
        let key = try readStringRange()
        try expect(UInt8(ascii: ":"), "':' after a key")
        skipBlanks()
        return key
    }

    /// After a member's value: true when `,` and another member follow, false at the object's `}`
    /// (both consumed).
    package mutating func nextMember() throws(DecodeError) -> Bool {
        skipBlanks()
        guard position < input.count else { throw .truncated(input.position(position), expected: "',' or '}'") }
        let b = input.base[position]
        position += 1
        if b == UInt8(ascii: ",") { return true }
        if b == UInt8(ascii: "}") { return false }
        position -= 1
        throw .malformed(input.position(position), expected: "',' or '}'", found: input.found(at: position))
    }

    /// Calls `body` for each element of the array at `position`, with `position` at the element.
    package mutating func forEachElement(_ body: (inout JSONScanner) throws(DecodeError) -> Void) throws(DecodeError) {
        try expect(UInt8(ascii: "["), "'['")
        skipBlanks()
        if position < input.count && input.base[position] == UInt8(ascii: "]") {
            position += 1
            return
        }
        while true {
            skipBlanks()
            try body(&self)
            skipBlanks()
            guard position < input.count else { throw .truncated(input.position(position), expected: "',' or ']'") }
            let b = input.base[position]
            position += 1
            if b == UInt8(ascii: ",") { continue }
            if b == UInt8(ascii: "]") { return }
            position -= 1
            throw .malformed(input.position(position), expected: "',' or ']'", found: input.found(at: position))
        }
    }

    package mutating func readStringArray(what: String) throws(DecodeError) -> [String] {
        var out: [String] = []
        try forEachElement { (d: inout JSONScanner) throws(DecodeError) in
            guard d.position < d.input.count, d.input.base[d.position] == UInt8(ascii: "\"") else {
                if d.position >= d.input.count { throw .truncated(d.input.position(d.position), expected: what) }
                throw .malformed(d.input.position(d.position), expected: what, found: d.input.found(at: d.position))
            }
            let range = try d.readStringRange()
            guard range.count <= ByteInput.maximumTextLength else {
                throw .malformed(
                    d.input.position(range.lowerBound), expected: "\(what) of at most \(ByteInput.maximumTextLength) bytes each",
                    found: "\(range.count) bytes")
            }
            out.append(d.string(range))
        }
        return out
    }

    /// A string value, or nil for `null`; any other value is skipped and gives its text.
    package mutating func readOptionalString() throws(DecodeError) -> String? {
        skipBlanks()
        guard position < input.count else { throw .truncated(input.position(position), expected: "a value") }
        switch input.base[position] {
        case UInt8(ascii: "\""):
            return string(try readStringRange())
        case UInt8(ascii: "n"):
            let start = position
            try skipValue()
            if input.matches(start, position, "null") { return nil }
            return string(start ..< position)
        default:
            let start = position
            try skipValue()
            return string(start ..< position)
        }
    }

    /// Reads the string at `position` (its opening quote) and returns the range of its contents
    /// (escapes not decoded).
    package mutating func readStringRange() throws(DecodeError) -> Range<Int> {
        let open = position
        var p = position + 1
        let base = input.base, end = input.count
        while p < end {
            let b = base[p]
            if b == UInt8(ascii: "\"") {
                position = p + 1
                return open + 1 ..< p
            }
            p += b == UInt8(ascii: "\\") ? 2 : 1
        }
        throw .truncated(input.position(end), expected: "'\"' closing the string that starts at byte \(open)")
    }

    /// Skips one value of any kind, checking its nesting.
    package mutating func skipValue(depth: Int = 0) throws(DecodeError) {
        skipBlanks()
        guard position < input.count else { throw .truncated(input.position(position), expected: "a value") }
        guard depth < Self.maximumDepth else {
            throw .malformed(input.position(position), expected: "nesting at most \(Self.maximumDepth) deep", found: "deeper nesting")
        }
        switch input.base[position] {
        case UInt8(ascii: "\""):
            _ = try readStringRange()
        case UInt8(ascii: "{"):
            try forEachKey { (d: inout JSONScanner, _: Range<Int>) throws(DecodeError) in try d.skipValue(depth: depth + 1) }
        case UInt8(ascii: "["):
            try forEachElement { (d: inout JSONScanner) throws(DecodeError) in try d.skipValue(depth: depth + 1) }
        default:
            // A number or a literal: letters, digits, '.', '+', '-'.
            let start = position
            while position < input.count {
                let b = input.base[position]
                let isToken =
                    (b &- UInt8(ascii: "0")) < 10 || ((b | 0x20) &- UInt8(ascii: "a")) < 26
                    || b == UInt8(ascii: ".") || b == UInt8(ascii: "+") || b == UInt8(ascii: "-")
                if !isToken { break }
                position += 1
            }
            if position == start {
                throw .malformed(input.position(start), expected: "a value", found: input.found(at: start))
            }
        }
    }

    package func duplicateKey(_ key: Range<Int>) -> DecodeError {
        .malformed(input.position(key.lowerBound - 1), expected: "each key once", found: "'\(string(key))' again")
    }

    /// The contents of a JSON string (escapes decoded; invalid escapes and UTF-8 become U+FFFD),
    /// of its first `ByteInput.maximumTextLength` bytes.
    package func string(_ range: Range<Int>) -> String {
        let range = range.lowerBound ..< Swift.min(range.upperBound, range.lowerBound + ByteInput.maximumTextLength)
        let base = input.base
        guard range.contains(where: { base[$0] == UInt8(ascii: "\\") }) else {
            return String(decoding: UnsafeBufferPointer(start: base + range.lowerBound, count: range.count), as: UTF8.self)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(range.count)
        var scalars = String.UnicodeScalarView()
        func flush() {
            if !bytes.isEmpty {
                scalars.append(contentsOf: String(decoding: bytes, as: UTF8.self).unicodeScalars)
                bytes.removeAll(keepingCapacity: true)
            }
        }
        func hex4(_ at: Int) -> UInt32? {
            guard at + 4 <= range.upperBound else { return nil }
            var v: UInt32 = 0
            for k in 0 ..< 4 {
                let c = base[at + k]
                let d: UInt8
                switch c {
                case UInt8(ascii: "0") ... UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
                case UInt8(ascii: "a") ... UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A") ... UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
                default: return nil
                }
                v = v << 4 | UInt32(d)
            }
            return v
        }
        var i = range.lowerBound
        while i < range.upperBound {
            let b = base[i]
            guard b == UInt8(ascii: "\\"), i + 1 < range.upperBound else {
                bytes.append(b)
                i += 1
                continue
            }
            let e = base[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "n"): bytes.append(10)
            case UInt8(ascii: "t"): bytes.append(9)
            case UInt8(ascii: "r"): bytes.append(13)
            case UInt8(ascii: "b"): bytes.append(8)
            case UInt8(ascii: "f"): bytes.append(12)
            case UInt8(ascii: "u"):
                flush()
                guard let unit = hex4(i) else {
                    scalars.append("\u{FFFD}")
                    continue
                }
                i += 4
                if unit >= 0xD800 && unit < 0xDC00, i + 6 <= range.upperBound, base[i] == UInt8(ascii: "\\"),
                    base[i + 1] == UInt8(ascii: "u"), let low = hex4(i + 2), low >= 0xDC00 && low < 0xE000
                {
                    i += 6
                    scalars.append(Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)) ?? "\u{FFFD}")
                } else {
                    scalars.append(Unicode.Scalar(unit) ?? "\u{FFFD}")
                }
            default: bytes.append(e)  // \" \\ \/ and, leniently, anything else
            }
        }
        flush()
        return String(scalars)
    }
}
