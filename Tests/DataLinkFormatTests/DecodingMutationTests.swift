import Colonnade
import DataLinkFormat
import ColonnadeTestSupport
import DecodingTestSupport
import Foundation
import Testing

@Suite("Decoding survives corrupted input")
struct DecodingMutationTests {
    /// Valid responses: small generated ones of every shape, plus small real fixtures.
    static func corpus() throws -> [(String, [UInt8])] {
        let table = QuoteGenerator(tickers: 2, days: 40, seed: 3).makeTable()
        var out: [(String, [UInt8])] = [
            ("dataset_data", QuoteGenerator.datasetJSON(table, ticker: 0)),
            ("dataset", QuoteGenerator.datasetJSON(table, ticker: 1, shape: .dataset)),
            ("datatable.csv", QuoteGenerator.datatableCSV(table)),
            ("series.csv", QuoteGenerator.timeSeriesCSV(table, ticker: 0)),
        ]
        for name in ["WIKI-PRICES.datatable.json", "error.QECx05.json", "error.QECx02.csv", "WIKI-PRICES.datatable.mock-wrapped.json"] {
            out.append((name, Array(try Fixtures.quandl(name))))
        }
        return out
    }

    static let structural: [UInt8] = Array("{}[],:\"\\0123456789.eE+-nul \n\r".utf8) + [0, 0xFF, 0xC3]

    static func mutate(_ bytes: [UInt8], rng: inout SplitMix64) -> [UInt8] {
        var b = bytes
        let edits = 1 + Int(rng.next() % 3)
        for _ in 0 ..< edits {
            let at = b.isEmpty ? 0 : Int(rng.next() % UInt64(b.count))
            switch rng.next() % 5 {
            case 0: b.removeSubrange(at...)  // truncate
            case 1: b.removeSubrange(at ..< min(b.count, at + 1 + Int(rng.next() % 16)))
            case 2: b.insert(structural[Int(rng.next() % UInt64(structural.count))], at: at)
            case 3: if !b.isEmpty { b[at] ^= UInt8(truncatingIfNeeded: 1 << (rng.next() % 8)) }
            default: if !b.isEmpty { b[at] = structural[Int(rng.next() % UInt64(structural.count))] }
            }
        }
        return b
    }

    @Test func thousandsOfRandomEditsEitherDecodeOrThrowDecodeError() throws {
        var rng = SplitMix64(seed: 20_240_601)
        var decoded = 0, failed = 0
        for (name, bytes) in try Self.corpus() {
            for _ in 0 ..< 600 {
                let mutated = Self.mutate(bytes, rng: &rng)
                do {
                    let response = try QuoteDecoder.decode(mutated, ticker: "T", source: name)
                    // Whatever decodes is a consistent, sorted table.
                    for t in response.table.tickers where t.rowCount > 1 {
                        for r in t.rows.dropFirst() where response.table.dates[r] <= response.table.dates[r - 1] {
                            Issue.record("\(name): unsorted after decoding a mutation")
                        }
                    }
                    decoded += 1
                } catch {
                    #expect(!error.description.contains("\n"))
                    failed += 1
                }
            }
        }
        #expect(decoded + failed >= 2_400)
        #expect(failed > 0 && decoded > 0)
    }

    @Test func deepNestingIsAnErrorNotAStackOverflow() {
        let text = #"{"junk":"# + String(repeating: "[", count: 100_000) + "}"
        guard case .malformed? = Decode.error(text) else {
            Issue.record("\(String(describing: Decode.error(text)))")
            return
        }
    }
}
