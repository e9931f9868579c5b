import Synchronization

/// Cuts the data lines of a CSV into pieces of about `chunkSize` bytes that start at line starts,
/// so the pieces decode independently (on several threads) and give the rows decoding the whole
/// would.
///
/// A line end inside a quoted field is not a line end: a cut is placed after the first LF at or
/// after each nominal offset (`start + k × chunkSize`) before which an even number of `"` bytes
/// lies (from `start`, itself a line start). In well-formed CSV a `"` opens or closes a quoted
/// field or is half of a doubled `""`, so that parity says exactly whether a byte is inside
/// quotes. A stray `"` inside an unquoted field would skew it; the scanner rejects such a field
/// in every column but the ticker, so callers re-decode in one piece when a piece fails or a
/// decoded ticker holds a `"` (see `QuoteImporter`). CRLF stays whole: cuts are after the LF.
///
/// A byte below 0x20 other than TAB, LF and CR (never in a quote file written as text) stops the
/// pass where it is found: `survey` is then nil and the caller decodes the whole input, whose
/// decoder refuses the byte where it stands (or takes it, inside a quoted ticker). Garbage such
/// as a sparse file's zeros after a valid header is so refused within the 32 KiB block that holds
/// its first byte, not after a pass over all of it.
package enum CSVChunker {
    /// What one pass over the data lines found: where the pieces start, and how many lines there
    /// are when each line is plainly one row.
    package struct Survey: Sendable {
        /// The offsets at which pieces start: piece `k` is `[cuts[k], cuts[k + 1])`, the last one
        /// ends at the end. The first is the data's start; all are line starts and ascend strictly.
        package let cuts: [Int]
        /// The lines, when no `"` occurs, no line is blank (an LF right after a line end) and no
        /// line starts with CR: then every line is one row of `CSVScanner.decodeRows` (or fails
        /// it). nil otherwise (the rows must be counted with quotes and blank lines in mind).
        /// Lines end at LF; a last line without one counts.
        package let plainLines: Int?
    }

    /// The offsets at which pieces start (`survey(…)?.cuts`).
    package static func cuts(_ base: UnsafePointer<UInt8>, start: Int, end: Int, chunkSize: Int, threads: Int = 1) -> [Int]? {
        survey(base, start: start, end: end, chunkSize: chunkSize, threads: threads)?.cuts
    }

    /// The cuts of the data lines `start ..< end` into pieces of about `chunkSize` bytes, and
    /// their line count when the lines are plain (see `Survey`), from one pass that counts LFs
    /// and quotes per nominal piece on up to `threads` threads (the result does not depend on
    /// `threads`). nil when a control byte occurs (see the type's comment): the first piece is
    /// counted alone first, so garbage from the data's start is refused before other threads
    /// read past it, and every piece stops at the first such block.
    ///
    /// - Parameters:
    ///   - base: The bytes.
    ///   - start: A line start outside quotes (the first data line).
    ///   - end: The end of the bytes.
    ///   - chunkSize: The nominal piece size in bytes (at least 1).
    ///   - threads: The pass runs on up to this many threads.
    /// - Complexity: O(end − start): the counting pass, and scans from each nominal offset that
    ///   stop at the next one.
    package static func survey(_ base: UnsafePointer<UInt8>, start: Int, end: Int, chunkSize: Int, threads: Int = 1) -> Survey? {
        precondition(start >= 0 && start <= end && chunkSize >= 1, "bad CSV chunking arguments")
        guard end > start else { return Survey(cuts: [start], plainLines: 0) }
        let nominalCount = (end - start + chunkSize - 1) / chunkSize
        // LFs and quotes per nominal segment, the first alone, then the rest in parallel; the
        // quotes' running sum is the parity at each nominal offset.
        var tallies = [Tally](repeating: Tally(), count: nominalCount)
        tallies[0] = tally(base, start, Swift.min(end, start + chunkSize), end: end)
        guard !tallies[0].control else { return nil }
        let control = Atomic<Bool>(false)
        tallies.withUnsafeMutableBufferPointer { counts in
            let out = SharedPointer(base: counts.baseAddress!)
            forEachChunk(nominalCount - 1, threads: threads) { i, _ in
                guard !control.load(ordering: .relaxed) else { return }
                let k = i + 1
                let a = start + k * chunkSize, b = Swift.min(end, a + chunkSize)
                // Safe: each k is claimed by one worker only; a ..< b lies inside start ..< end.
                out.base[k] = tally(base, a, b, end: end)
                if out.base[k].control { control.store(true, ordering: .relaxed) }
            }
        }
        guard !control.load(ordering: .relaxed) else { return nil }
        var lineEnds = 0, quotes = 0, blank = false
        for t in tallies {
            lineEnds += t.lineEnds
            quotes += t.quotes
            blank = blank || t.blank
        }
        let first = base[start]
        let plain = quotes == 0 && !blank && first != UInt8(ascii: "\n") && first != UInt8(ascii: "\r")
        let lines = lineEnds + (base[end - 1] == UInt8(ascii: "\n") ? 0 : 1)
        var cuts = [start]
        var quotesBefore = 0
        for k in 1 ..< nominalCount {
            quotesBefore += tallies[k - 1].quotes
            let nominal = start + k * chunkSize
            let limit = Swift.min(end, nominal + chunkSize)
            var inside = quotesBefore & 1 == 1
            var q = nominal
            // Safe: q < limit <= end.
            while q < limit {
                let b = base[q]
                if b == UInt8(ascii: "\"") {
                    inside.toggle()
                } else if b == UInt8(ascii: "\n") && !inside {
                    break
                }
                q += 1
            }
            let cut = q + 1
            if q < limit && cut < end && cut > cuts[cuts.count - 1] { cuts.append(cut) }
        }
        return Survey(cuts: cuts, plainLines: plain ? lines : nil)
    }

    /// LFs and `"` bytes in a span, whether an LF in it is followed (in it or just after it) by
    /// an LF or a CR, and whether a control byte was found (the counts then stop at its block).
    struct Tally {
        var lineEnds = 0, quotes = 0
        var blank = false, control = false
    }

    /// The tally of `a ..< b` (`b ≤ end`), in blocks of 32 KiB for `lineEndsAndQuotes`; the
    /// byte after each block (if before `end`) is read to see what follows its last LF. A block
    /// holding a control byte ends the tally.
    static func tally(_ base: UnsafePointer<UInt8>, _ a: Int, _ b: Int, end: Int) -> Tally {
        var t = Tally()
        var from = a
        while from < b {
            let to = Swift.min(from + 32_768, b)
            let (lineEnds, quotes, blank, control) = lineEndsAndQuotes(base, from, to)
            if control {
                t.control = true
                return t
            }
            t.lineEnds += lineEnds
            t.quotes += quotes
            t.blank = t.blank || blank
            if to < end && base[to - 1] == UInt8(ascii: "\n") && (base[to] == UInt8(ascii: "\n") || base[to] == UInt8(ascii: "\r")) {
                t.blank = true
            }
            from = to
        }
        return t
    }

    /// In `from ..< to` (at most 65,535 bytes, not empty): the LF bytes, the `"` bytes,
    /// whether an LF before `to − 1` is followed by an LF or a CR (a blank line, or a line
    /// starting with CR, next), and whether a byte below 0x20 other than TAB, LF and CR occurs.
    /// A branch-free loop the compiler vectorizes (16-bit lanes: hence the bound), faster than a
    /// word-at-a-time count of the quotes alone (docs/MEASUREMENTS.md, *Counting line ends and
    /// quotes*).
    @inline(never)
    package static func lineEndsAndQuotes(
        _ base: UnsafePointer<UInt8>, _ from: Int, _ to: Int
    ) -> (lineEnds: Int, quotes: Int, blank: Bool, control: Bool) {
        var lineEnds: UInt16 = 0, quotes: UInt16 = 0, blank: UInt8 = 0, control: UInt8 = 0
        for k in from ..< to - 1 {
            let c = base[k], next = base[k + 1]
            let isEnd: UInt8 = c == UInt8(ascii: "\n") ? 1 : 0
            lineEnds &+= UInt16(isEnd)
            quotes &+= c == UInt8(ascii: "\"") ? 1 : 0
            blank |= isEnd & ((next == UInt8(ascii: "\n") ? 1 : 0) | (next == UInt8(ascii: "\r") ? 1 : 0))
            control |= isControl(c)
        }
        let last = base[to - 1]
        lineEnds &+= last == UInt8(ascii: "\n") ? 1 : 0
        quotes &+= last == UInt8(ascii: "\"") ? 1 : 0
        control |= isControl(last)
        return (Int(lineEnds), Int(quotes), blank != 0, control != 0)
    }

    /// 1 for a byte below 0x20 other than TAB, LF and CR, else 0 (branch-free).
    @inline(__always)
    private static func isControl(_ c: UInt8) -> UInt8 {
        (c < 0x20 ? 1 : 0) & (c != 0x09 ? 1 : 0) & (c != 0x0A ? 1 : 0) & (c != 0x0D ? 1 : 0)
    }
}
