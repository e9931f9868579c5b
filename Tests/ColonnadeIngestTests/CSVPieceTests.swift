import Colonnade
import ColonnadeTestSupport
import DecodingTestSupport
@testable import DataLinkFormat
@testable import ColonnadeIngest
import Foundation
import Testing

/// A datatable CSV cut at line ends and decoded in pieces, against an obvious reference for the
/// cuts and the whole-file decode (and `Double(String)`) for the rows, at every cut position.
@Suite("Decoding a CSV in pieces")
struct CSVPieceTests {
    struct Written {
        var text: [UInt8]
        /// (ticker, date, value fields as written; nil = empty).
        var rows: [(String, String, [String?])]
    }

    /// Rows in random order (tickers interleaved), LF and CRLF line ends, blank lines, quoted
    /// numbers, quoted tickers holding a comma or a line end, empty fields.
    static func randomCSV(seed: UInt64, rows: Int, quoteInTicker: Bool = false) -> Written {
        var rng = SplitMix64(seed: seed)
        let symbols = ["AA", "\"B,B\"", "\"C\nC\"", "\"D\r\nD\"", "EE"] + (quoteInTicker ? ["\"F\"\"F\""] : [])
        let names = ["AA", "B,B", "C\nC", "D\r\nD", "EE", "F\"F"]
        var text = Array("ticker,date,open,close\r\n".utf8)
        var used = Set<String>()
        var written: [(String, String, [String?])] = []
        while written.count < rows {
            let t = rng.below(symbols.count)
            let day = Day(daysSinceEpoch: Int32(10_000 + rng.below(200))).description
            guard used.insert("\(t) \(day)").inserted else { continue }
            var fields: [String?] = []
            var line = symbols[t] + "," + day
            for _ in 0 ..< 2 {
                let field: String?
                switch rng.below(6) {
                case 0: field = nil
                case 1: field = String(Double(bitPattern: rng.next() & 0x7FEF_FFFF_FFFF_FFFF))
                case 2: field = "\(rng.below(100_000)).\(rng.below(100_000_000))"
                default: field = String(Double(rng.below(1 << 40)) / 1_000.0)
                }
                fields.append(field)
                let quoted = rng.chance(4)
                line += "," + (field.map { quoted ? "\"\($0)\"" : $0 } ?? "")
            }
            line += rng.chance(2) ? "\r\n" : "\n"
            if rng.chance(10) { line += rng.chance(2) ? "\n" : "\r\n" }
            text += Array(line.utf8)
            written.append((names[t], day, fields))
        }
        return Written(text: text, rows: written)
    }

    /// Where a line starts outside quotes, by the obvious state machine over every byte.
    static func referenceCuts(_ bytes: [UInt8], start: Int, chunkSize: Int) -> [Int] {
        var lineEnds = [Bool](repeating: false, count: bytes.count)
        var inside = false
        for i in start ..< bytes.count {
            if bytes[i] == UInt8(ascii: "\"") { inside.toggle() } else if bytes[i] == UInt8(ascii: "\n") && !inside { lineEnds[i] = true }
        }
        var cuts = [start]
        var nominal = start + chunkSize
        while nominal < bytes.count {
            if let q = (nominal ..< Swift.min(bytes.count, nominal + chunkSize)).first(where: { lineEnds[$0] }),
                q + 1 < bytes.count, q + 1 > cuts.last!
            {
                cuts.append(q + 1)
            }
            nominal += chunkSize
        }
        return cuts
    }

    static let headerLength = "ticker,date,open,close\r\n".utf8.count

    @Test(arguments: [UInt64(1), 2])
    func cutsAreTheReferenceLineStartsForEveryChunkSize(seed: UInt64) {
        let csv = Self.randomCSV(seed: seed, rows: 25)
        csv.text.withUnsafeBufferPointer { b in
            for chunkSize in 1 ... csv.text.count {
                for threads in chunkSize % 7 == 0 ? [1, 3] : [1] {
                    let cuts = CSVChunker.cuts(
                        b.baseAddress!, start: Self.headerLength, end: b.count, chunkSize: chunkSize, threads: threads)
                    #expect(
                        cuts == Self.referenceCuts(csv.text, start: Self.headerLength, chunkSize: chunkSize),
                        "chunk size \(chunkSize), threads \(threads)")
                }
            }
        }
    }

    @Test(arguments: [UInt64(3), 4])
    func piecesDecodeToTheWholeFileAtEveryCutPosition(seed: UInt64) throws {
        let csv = Self.randomCSV(seed: seed, rows: 25)
        var whole = try QuoteDecoder.decode(csv.text, source: "P.csv").table
        whole.computeSummaries()
        // The values are Double(String) of the text, bit for bit.
        for (symbol, day, fields) in csv.rows {
            let t = try #require(whole.ticker(symbol))
            let row = try #require(t.rows.first { whole.dates[$0] == Day(day)!.daysSinceEpoch })
            for (c, field) in fields.enumerated() {
                #expect(whole.columns[c].doubleValue(at: row)?.bitPattern == field.map { Double($0)!.bitPattern })
            }
        }
        try csv.text.withUnsafeBytes { bytes in
            for chunkSize in 1 ... csv.text.count {
                let pieces = try #require(
                    QuoteImporter.decodeInPieces(bytes, source: "P.csv", threads: 2, chunkSize: chunkSize),
                    "chunk size \(chunkSize)")
                #expect(pieces == whole, "chunk size \(chunkSize)")
            }
        }
    }

    @Test func aQuoteInATickerFallsBackToTheWholeFile() throws {
        let csv = Self.randomCSV(seed: 5, rows: 60, quoteInTicker: true)
        var whole = try QuoteDecoder.decode(csv.text, source: "Q.csv").table
        whole.computeSummaries()
        #expect(whole.tickers.contains { $0.symbol.contains("\"") })
        csv.text.withUnsafeBytes { bytes in
            #expect(QuoteImporter.decodeInPieces(bytes, source: "Q.csv", threads: 2, chunkSize: 50) == nil)
        }
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data(csv.text).write(to: URL(fileURLWithPath: dir + "/Q.csv"))
        let imported = try QuoteImporter.importFiles(
            [dir + "/Q.csv"], ticker: nil, archiveOptions: .init(), threads: 2,
            chunkSize: 50, largeFileSize: 1, progress: nil)
        #expect(imported == whole)
    }

    @Test func aDateInTwoPiecesIsTheWholeFilesDuplicateError() throws {
        var text = Array("ticker,date,open\n".utf8)
        for d in 0 ..< 50 { text += Array("AA,2001-01-\(String(format: "%02d", d % 28 + 1)),\(d).5\n".utf8) }
        var whole: ResponseError?
        do { _ = try QuoteDecoder.decode(text, source: "D.csv") } catch { whole = error }
        guard case .decoding(.duplicateDate) = whole else {
            Issue.record("expected a duplicate date, got \(String(describing: whole))")
            return
        }
        text.withUnsafeBytes { bytes in
            #expect(QuoteImporter.decodeInPieces(bytes, source: "D.csv", threads: 2, chunkSize: 64) == nil)
        }
    }
}
