import ColonnadeTestSupport
@testable import Colonnade
import Testing

/// `CSVChunker`'s counting pass (`lineEndsAndQuotes`, `tally`, `survey`) against plain byte-by-byte
/// references, on random bytes dense in LF, CR, quotes and bytes that differ from them by one bit.
@Suite("Counting lines and quotes for CSV cuts")
struct CSVChunkerQuoteCountTests {
    static let alphabet: [UInt8] = [
        0x22, 0x22, 0x0A, 0x0A, 0x0D, 0x23, 0x20, 0x02, 0xA2, 0x00, 0xFF, 0x7F, 0x0B, 0x8A, 0x61, 0x2C, 0x09, 0x1F,
    ]

    /// LFs, quotes, whether an LF at k < last is followed by LF or CR, and whether a byte below
    /// 0x20 other than TAB, LF and CR occurs: obviously.
    static func reference(_ b: ArraySlice<UInt8>) -> (Int, Int, Bool, Bool) {
        let bytes = Array(b)
        var blank = false
        for k in 0 ..< max(bytes.count - 1, 0) where bytes[k] == 0x0A && (bytes[k + 1] == 0x0A || bytes[k + 1] == 0x0D) { blank = true }
        let control = bytes.contains { $0 < 0x20 && ![0x09, 0x0A, 0x0D].contains($0) }
        return (bytes.filter { $0 == 0x0A }.count, bytes.filter { $0 == 0x22 }.count, blank, control)
    }

    @Test func theVectorizedCountEqualsAByteCountAtEveryLengthAndOffset() {
        var rng = SplitMix64(seed: 5)
        let bytes = (0 ..< 700).map { _ in Self.alphabet[rng.below(Self.alphabet.count)] }
        bytes.withUnsafeBufferPointer { b in
            for offset in 0 ..< 9 {
                for length in 1 ... 400 {
                    let got = CSVChunker.lineEndsAndQuotes(b.baseAddress!, offset, offset + length)
                    let want = Self.reference(bytes[offset ..< offset + length])
                    #expect(got == want, "offset \(offset) length \(length)")
                }
            }
        }
        let allQuotes = [UInt8](repeating: 0x22, count: 65_535)
        allQuotes.withUnsafeBufferPointer { #expect(CSVChunker.lineEndsAndQuotes($0.baseAddress!, 0, 65_535) == (0, 65_535, false, false)) }
        let allEnds = [UInt8](repeating: 0x0A, count: 65_535)
        allEnds.withUnsafeBufferPointer { #expect(CSVChunker.lineEndsAndQuotes($0.baseAddress!, 0, 65_535) == (65_535, 0, true, false)) }
    }

    /// The tally of a span crosses its 32 KiB blocks: a blank line whose LFs straddle a block's
    /// end, or the span's end, is seen (the byte after the span is read when before `end`).
    @Test func theTallySeesBlankLinesAcrossBlocksAndAtItsEnd() {
        for position in [32_766, 32_767, 32_768, 65_535, 65_536, 70_000] {
            for second in [UInt8(0x0A), 0x0D, 0x61] {
                var bytes = [UInt8](repeating: 0x61, count: 80_000)
                bytes[position] = 0x0A
                bytes[position + 1] = second
                bytes.withUnsafeBufferPointer { b in
                    let t = CSVChunker.tally(b.baseAddress!, 0, bytes.count, end: bytes.count)
                    #expect(t.lineEnds == (second == 0x0A ? 2 : 1) && t.quotes == 0, "at \(position)")
                    #expect(t.blank == (second != 0x61), "at \(position) followed by \(second)")
                    // A span ending right after the first LF reads the byte after it.
                    let cut = CSVChunker.tally(b.baseAddress!, 0, position + 1, end: bytes.count)
                    #expect(cut.blank == (second != 0x61) && cut.lineEnds == 1, "span to \(position + 1)")
                    // One ending at the input's end cannot.
                    let last = CSVChunker.tally(b.baseAddress!, 0, position + 1, end: position + 1)
                    #expect(!last.blank, "input ending at \(position + 1)")
                }
            }
        }
    }

    /// `survey`'s plain line count against its definition, and its cuts against `cuts`'s
    /// reference (line starts after the first LF outside quotes past each nominal offset), for
    /// every chunk size and thread count.
    @Test(arguments: [UInt64(1), 2, 3])
    func theSurveyCountsPlainLinesAndCutsAsTheReference(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        for trial in 0 ..< 60 {
            // Mostly plain text with a few rare bytes, so both outcomes occur.
            let length = 1 + rng.below(3_000)
            var bytes = (0 ..< length).map { _ -> UInt8 in
                let r = rng.below(100)
                return r < 6 ? 0x0A : (r < 12 ? 0x2C : 0x61)
            }
            switch trial % 5 {
            case 0: bytes[rng.below(length)] = 0x22
            case 1: bytes[rng.below(length)] = 0x0D
            case 2:
                let k = rng.below(length)
                bytes[k] = 0x0A
                if k + 1 < length { bytes[k + 1] = 0x0A }
            default: break
            }
            let start = rng.below(min(length, 40))
            let data = bytes[start...]
            var blank = false
            for k in data.indices.dropLast() where data[k] == 0x0A && (data[k + 1] == 0x0A || data[k + 1] == 0x0D) { blank = true }
            let plain = !data.contains(0x22) && !blank && data.first != 0x0A && data.first != 0x0D
            let lines = data.filter { $0 == 0x0A }.count + (data.last == 0x0A ? 0 : 1)
            bytes.withUnsafeBufferPointer { b in
                for chunkSize in [1, 2, 7, 64, 1_000, 1 << 20] {
                    let reference = CSVPieceReference.cuts(bytes, start: start, chunkSize: chunkSize)
                    for threads in [1, 3] {
                        let survey = CSVChunker.survey(b.baseAddress!, start: start, end: length, chunkSize: chunkSize, threads: threads)
                        #expect(survey?.plainLines == (plain ? lines : nil), "trial \(trial) chunk \(chunkSize)")
                        #expect(survey?.cuts == reference, "trial \(trial) chunk \(chunkSize)")
                    }
                }
            }
        }
        let empty: [UInt8] = [0x61, 0x0A]
        empty.withUnsafeBufferPointer { b in
            let survey = CSVChunker.survey(b.baseAddress!, start: 2, end: 2, chunkSize: 5)
            #expect(survey?.cuts == [2] && survey?.plainLines == 0)
        }
    }

    /// A control byte (below 0x20, not TAB, LF or CR) anywhere in the data lines makes the survey
    /// nil, for every position, chunk size and thread count; TAB and CR do not. The tally stops
    /// at the 32 KiB block holding it (GarbageWorkTests shows no byte after that block is read).
    @Test func aControlByteAnywhereMakesTheSurveyNil() {
        var rng = SplitMix64(seed: 11)
        let clean = (0 ..< 5_000).map { _ -> UInt8 in rng.below(10) == 0 ? 0x0A : (rng.below(9) == 0 ? 0x09 : 0x61) }
        clean.withUnsafeBufferPointer { b in
            #expect(CSVChunker.survey(b.baseAddress!, start: 0, end: clean.count, chunkSize: 64, threads: 2) != nil)
        }
        for trial in 0 ..< 40 {
            var bytes = clean
            let position = trial == 0 ? 0 : (trial == 1 ? bytes.count - 1 : rng.below(bytes.count))
            bytes[position] = [0x00, 0x01, 0x0B, 0x0C, 0x1F][trial % 5]
            bytes.withUnsafeBufferPointer { b in
                for chunkSize in [1, 7, 64, 1_000, 1 << 20] {
                    for threads in [1, 3] {
                        let survey = CSVChunker.survey(b.baseAddress!, start: 0, end: bytes.count, chunkSize: chunkSize, threads: threads)
                        #expect(survey == nil, "control byte at \(position), chunk \(chunkSize), threads \(threads)")
                    }
                }
            }
        }
        var big = [UInt8](repeating: 0x61, count: 100_000)
        big[40_000] = 0x00
        big.withUnsafeBufferPointer { b in
            let t = CSVChunker.tally(b.baseAddress!, 0, big.count, end: big.count)
            #expect(t.control && t.lineEnds == 0)
        }
    }
}

/// The reference cuts: where a line starts outside quotes, by the obvious state machine over
/// every byte, taking the first such line end in each nominal piece.
enum CSVPieceReference {
    static func cuts(_ bytes: [UInt8], start: Int, chunkSize: Int) -> [Int] {
        var lineEnds = [Bool](repeating: false, count: bytes.count)
        var inside = false
        for i in start ..< bytes.count {
            if bytes[i] == 0x22 { inside.toggle() } else if bytes[i] == 0x0A && !inside { lineEnds[i] = true }
        }
        var cuts = [start]
        var nominal = start + chunkSize
        while nominal < bytes.count {
            if let q = (nominal ..< min(bytes.count, nominal + chunkSize)).first(where: { lineEnds[$0] }), q + 1 < bytes.count,
                q + 1 > cuts.last!
            {
                cuts.append(q + 1)
            }
            nominal += chunkSize
        }
        return cuts
    }
}
