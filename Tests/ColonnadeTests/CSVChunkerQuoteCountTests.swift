import ColonnadeTestSupport
@testable import Colonnade
import Testing

/// `CSVChunker.countQuotes` (eight bytes at a time) against a plain count, on random bytes
/// dense in quotes and in bytes that differ from `"` by one bit or have the top bit set.
@Suite("Counting quotes for CSV cuts")
struct CSVChunkerQuoteCountTests {
    @Test func theWordAtATimeCountEqualsAByteCountAtEveryLengthAndOffset() {
        var rng = SplitMix64(seed: 5)
        let alphabet: [UInt8] = [0x22, 0x22, 0x23, 0x20, 0x02, 0xA2, 0x00, 0xFF, 0x7F, 0x21, 0x0A, 0x61]
        let bytes = (0 ..< 600).map { _ in alphabet[rng.below(alphabet.count)] }
        bytes.withUnsafeBufferPointer { b in
            for offset in 0 ..< 9 {
                for length in 0 ... 300 {
                    let expected = b[offset ..< offset + length].filter { $0 == 0x22 }.count
                    #expect(CSVChunker.countQuotes(b.baseAddress! + offset, length) == expected, "offset \(offset) length \(length)")
                }
            }
        }
        let allQuotes = [UInt8](repeating: 0x22, count: 1000)
        allQuotes.withUnsafeBufferPointer { #expect(CSVChunker.countQuotes($0.baseAddress!, 1000) == 1000) }
    }
}
