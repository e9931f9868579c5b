#if canImport(Glibc)
import Glibc
#endif

/// A CSV scanner over bytes: the header, quoted or plain fields, LF or CRLF line ends, and a row
/// loop that appends rows straight into `RowBuffers` (an empty field is a null; blank lines are
/// skipped). Which columns mean what is the caller's business (see `RowSlot`); the Data Link
/// format module decides that from the header. Errors are `DecodeError`s with byte positions.
package struct CSVScanner {
    package let input: ByteInput
    /// The next byte to read.
    package var position: Int

    package init(input: ByteInput, position: Int) {
        self.input = input
        self.position = position
    }

    /// The header's names; `position` moves to the first data line.
    package mutating func readHeader() throws(DecodeError) -> [String] {
        var names = [String]()
        let base = input.base, end = input.count
        var p = position
        while true {
            // Scanned no further than one byte past the longest name: a gigabyte without a comma
            // or a line end is refused at once, not after a pass over all of it.
            let (start, stop, next) = try field(at: p, maximumLength: ByteInput.maximumTextLength)
            guard stop - start <= ByteInput.maximumTextLength else {
                throw .malformed(
                    input.position(start), expected: "a column name of at most \(ByteInput.maximumTextLength) bytes",
                    found: "more")
            }
            names.append(quotedText(start, stop, quoted: start > p))
            p = next
            if p < end && base[p] == UInt8(ascii: ",") {
                p += 1
                continue
            }
            break
        }
        position = try endOfLine(at: p)
        return names
    }

    /// The bytes `start ..< stop` as text, cut to `ByteInput.maximumTextLength` bytes.
    package func string(_ start: Int, _ stop: Int) -> String {
        String(
            decoding: UnsafeBufferPointer(start: input.base + start, count: Swift.min(stop - start, ByteInput.maximumTextLength)),
            as: UTF8.self)
    }

    /// The bytes `start ..< stop` as text, cut to `ByteInput.maximumTextLength` bytes; for the
    /// contents of a quoted field (`quoted`), each doubled quote `""` becomes one `"` (RFC 4180).
    /// Only names and tickers are text; numbers and dates in quotes never hold a quote.
    package func quotedText(_ start: Int, _ stop: Int, quoted: Bool) -> String {
        let base = input.base
        let count = Swift.min(stop - start, ByteInput.maximumTextLength)
        guard quoted, memchr(base + start, Int32(UInt8(ascii: "\"")), count) != nil else { return string(start, stop) }
        var bytes = [UInt8]()
        bytes.reserveCapacity(count)
        var i = start
        while i < start + count {
            bytes.append(base[i])
            // Safe: field(at:) only ends quoted contents after pairs of quotes, so a quote inside
            // is followed by its twin within the contents.
            i += base[i] == UInt8(ascii: "\"") && i + 1 < stop ? 2 : 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The field at `p`: the contents' range (inside quotes if quoted) and the offset of the byte
    /// after it (a comma, a line end or the end). A quoted field's contents keep their doubled
    /// quotes; `quotedText` undoes them.
    /// With `maximumLength`, the scan stops one byte past that many bytes of contents and returns
    /// a range that long (the caller refuses it without the rest being read).
    package func field(at p: Int, maximumLength: Int = .max) throws(DecodeError) -> (Int, Int, Int) {
        let base = input.base, end = input.count
        // The scan stops at `stop` (one byte past the longest contents allowed, or the end).
        let stop = maximumLength >= end - p ? end : p + 2 + maximumLength
        if p < end && base[p] == UInt8(ascii: "\"") {
            var q = p + 1
            while q < stop {
                if base[q] == UInt8(ascii: "\"") {
                    if q + 1 < end && base[q + 1] == UInt8(ascii: "\"") {
                        q += 2
                        continue
                    }
                    break
                }
                q += 1
            }
            if q >= stop && stop < end { return (p + 1, q, q) }  // too long: the caller refuses it
            guard q < end else { throw .truncated(input.position(end), expected: "'\"' closing the field that starts at byte \(p)") }
            let after = q + 1
            if after < end && !Self.isFieldEnd(base[after]) {
                throw .malformed(input.position(after), expected: "',' or a line end after a quoted field", found: input.found(at: after))
            }
            return (p + 1, q, after)
        }
        var q = p
        while q < stop && !Self.isFieldEnd(base[q]) { q += 1 }
        return (p, q, q)
    }

    @inline(__always)
    private static func isFieldEnd(_ b: UInt8) -> Bool {
        b == UInt8(ascii: ",") || b == UInt8(ascii: "\n") || b == UInt8(ascii: "\r")
    }

    /// The offset after the line end at `p` (LF, CRLF, or the end of input).
    private func endOfLine(at p: Int) throws(DecodeError) -> Int {
        let base = input.base, end = input.count
        if p >= end { return p }
        if base[p] == UInt8(ascii: "\n") { return p + 1 }
        if base[p] == UInt8(ascii: "\r") {
            if p + 1 == end { return end }
            if base[p + 1] == UInt8(ascii: "\n") { return p + 2 }
        }
        throw .malformed(input.position(p), expected: "a line end", found: input.found(at: p))
    }

    /// Decodes the rows after the header into new buffers; `kinds` as for
    /// `JSONScanner.decodeRows`. One long function on purpose: it is the hot path of every CSV decode.
    package mutating func decodeRows(
        names: [String], kinds: [Int32], valueCount: Int, symbols: inout [String],
        tickerSymbol: (String) -> String = { $0 }
    ) throws(DecodeError) -> RowBuffers {
        let width = kinds.count
        let base = input.base, end = input.count
        // About 7 bytes per value (`123.45,`) plus the date.
        let estimate = (end - position) / (7 * width + 6) + 16
        let buffers = try RowBuffers(
            columnCount: valueCount, estimatedRows: estimate, withTickers: kinds.contains(RowSlot.ticker),
            source: input.source)
        let values = buffers.values
        var tickers = TickerInterner()
        defer { symbols = tickers.symbols }
        var p = position
        var row = 0
        while p < end {
            // Blank lines.
            if base[p] == UInt8(ascii: "\n") {
                p += 1
                continue
            }
            if base[p] == UInt8(ascii: "\r") && p + 1 < end && base[p + 1] == UInt8(ascii: "\n") {
                p += 2
                continue
            }
            try buffers.reserve(rows: row + 1)
            let dates = buffers.dates
            for i in 0 ..< width {
                // The field [start, stop); fast path unquoted.
                var start = p, stop = p
                let kind = kinds[i]
                var converted = false, quoted = false
                if kind >= 0, let (v, after) = NumberScanning.scanPlainDecimal(base, p, end),
                    after == end || base[after] == UInt8(ascii: ",") || base[after] == UInt8(ascii: "\n")
                        || base[after] == UInt8(ascii: "\r")
                {
                    values[Int(kind)][row] = v
                    p = after
                    converted = true
                } else if p < end && base[p] == UInt8(ascii: "\"") {
                    (start, stop, p) = try field(at: p)
                    quoted = true
                } else {
                    // One test per ordinary byte: LF and CR are control bytes too.
                    while stop < end {
                        let c = base[stop]
                        if c == UInt8(ascii: ",") { break }
                        if c < 0x20 && c != 0x09 {
                            if c == UInt8(ascii: "\n") || c == UInt8(ascii: "\r") { break }
                            // Any other control byte ends the decoding where it stands: never in a
                            // quote file written as text, and garbage (a sparse file's zeros) is
                            // not passed over to its end as one field.
                            throw .malformed(
                                input.position(stop, row: row + 1, column: names[i]), expected: "text, not a control byte",
                                found: input.found(at: stop))
                        }
                        stop += 1
                    }
                    p = stop
                }
                if converted {
                    // Done on the fast path.
                } else if kind >= 0 {
                    let column = values[Int(kind)]
                    if start == stop {
                        column[row] = 0
                        try buffers.setNull(column: Int(kind), row: row)
                    } else if let v = DecimalParser.parseDouble(base + start, count: stop - start) {
                        column[row] = v
                    } else {
                        throw .badNumber(input.position(start, row: row + 1, column: names[i]), found: input.found(start, stop))
                    }
                } else if kind == RowSlot.date {
                    guard let day = Day.parseDay(base + start, count: stop - start) else {
                        throw .badDate(input.position(start, row: row + 1, column: names[i]), found: input.found(start, stop))
                    }
                    dates[row] = day
                } else {
                    let count = stop - start
                    guard count > 0 else {
                        throw .malformed(
                            input.position(start, row: row + 1, column: names[i]), expected: "a ticker", found: "an empty field")
                    }
                    guard count <= ByteInput.maximumTextLength else {
                        throw .malformed(
                            input.position(start, row: row + 1, column: names[i]),
                            expected: "a ticker of at most \(ByteInput.maximumTextLength) bytes", found: "\(count) bytes")
                    }
                    let number = tickers.number(at: start, count: count, in: base) { tickerSymbol(quotedText(start, stop, quoted: quoted)) }
                    buffers.tickerNumbers![row] = number
                }
                // The separator.
                let atComma = p < end && base[p] == UInt8(ascii: ",")
                if i < width - 1 {
                    guard atComma else {
                        throw .rowWidth(input.position(p, row: row + 1, column: names[i + 1]), expected: width, found: i + 1)
                    }
                    p += 1
                } else if atComma {
                    throw .rowWidth(input.position(p, row: row + 1), expected: width, found: width + 1)
                }
            }
            p = try endOfLine(at: p)
            row += 1
            buffers.count = row
        }
        position = p
        return buffers
    }
}
