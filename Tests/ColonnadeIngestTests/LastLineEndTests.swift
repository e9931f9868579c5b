import Colonnade
import ColonnadeTestSupport
import DecodingTestSupport
@testable import DataLinkFormat
@testable import ColonnadeIngest
import Testing

/// `CSVStreamDecoder.lastLineEnd` (a `memchr` for any `"` first, then counted eight bytes at a
/// time) against the plain rule, byte by byte: the last LF with an even number of `"` before it.
/// Random chunks with no quotes at all, quotes only after the last LF, and quotes of every density.
@Suite struct LastLineEndTests {
    static func reference(_ bytes: [UInt8]) -> Int? {
        var quotes = 0
        var last: Int?
        for (i, b) in bytes.enumerated() {
            if b == UInt8(ascii: "\n") && quotes % 2 == 0 { last = i }
            if b == UInt8(ascii: "\"") { quotes += 1 }
        }
        return last
    }

    @Test func theCutIsTheLastLineEndAtEvenQuoteParity() {
        var rng = SplitMix64(seed: 16)
        for round in 0 ..< 4_000 {
            let count = rng.below(300)
            let quoteOneIn = [0, 0, 2, 5, 40, 1_000][round % 6]
            var bytes = (0 ..< count).map { _ -> UInt8 in
                if quoteOneIn > 0 && rng.chance(quoteOneIn) { return UInt8(ascii: "\"") }
                return rng.chance(12) ? UInt8(ascii: "\n") : (rng.chance(5) ? UInt8(ascii: ",") : UInt8(ascii: "7"))
            }
            // Now and then quotes only after the last line end (they must not count).
            if round % 7 == 0 { bytes += [UInt8(ascii: "\""), UInt8(ascii: "x")] }
            let expected = Self.reference(bytes)
            let padded = bytes + [0]
            let got = padded.withUnsafeBufferPointer { CSVStreamDecoder.lastLineEnd($0.baseAddress!, count: bytes.count) }
            #expect(got == expected, "round \(round): \(String(decoding: bytes, as: UTF8.self).debugDescription)")
        }
    }
}
