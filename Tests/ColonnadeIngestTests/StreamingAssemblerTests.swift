import Colonnade
import ColonnadeTestSupport
import DecodingTestSupport
@testable import DataLinkFormat
@testable import ColonnadeIngest
import Foundation
import Testing

/// `ColumnAssembler`'s streaming append (ColumnAssembler+Streaming.swift) against a table built
/// directly from the generated values: a datatable CSV cut at random line ends into pieces of
/// 0 to ~1,200 lines (block boundaries at 511/512/513 rows, empty pieces, pieces in reverse line
/// order), decoded as the stream decoder decodes them, appended with columns that start tiny and
/// must grow, or sized from the input, or the default. The finished table must equal the
/// reference (values bit for bit, nulls, ticker index), its block summaries the row-by-row pass,
/// and its snapshot the reference's bytes. Pieces that do not concatenate are refused, unchanged.
@Suite struct StreamingAssemblerTests {
    static let valueNames = ["Open", "Close", "Volume"]

    struct Generated {
        var header: String
        var lines: [String]
        /// Per line: its ticker's index.
        var lineTickers: [Int]
        var reference: QuoteTable
    }

    /// Tickers of 1…1,700 rows, dates ascending with gaps; `Close` has nulls in one ticker, `Volume`
    /// holds ±0.
    static func generate(seed: UInt64) -> Generated {
        var rng = SplitMix64(seed: seed)
        let menu = [1, 2, 3, 511, 512, 513, 1_023, 1_024, 1_025, 1_700]
        var lengths = (0 ..< 3 + Int(rng.below(8))).map { _ in menu[rng.below(menu.count)] }
        lengths.append(Int(rng.below(900)) + 1)
        var lines: [String] = [], lineTickers: [Int] = []
        var dates: [Int32] = []
        var values = [[Double?]](repeating: [], count: 3)
        var entries: [TickerEntry] = []
        for (t, count) in lengths.enumerated() {
            let symbol = "T\(t)"
            entries.append(TickerEntry(symbol: symbol, firstRow: dates.count, rowCount: count))
            var day = Int32(9_000 + Int(rng.below(40)))
            for r in 0 ..< count {
                let open = Double(rng.below(2_000_000)) / 100 - 1_000
                let close: Double? = t == 1 && (r == count - 1 || rng.chance(6)) ? nil : Double(rng.below(50_000)) / 8
                let pick = rng.below(6)
                let volume = pick == 0 ? 0.0 : (pick == 1 ? -0.0 : Double(rng.below(9_000_000)))
                dates.append(day)
                values[0].append(open)
                values[1].append(close)
                values[2].append(volume)
                lines.append("\(symbol),\(Day(daysSinceEpoch: day)),\(open),\(close.map { "\($0)" } ?? ""),\(volume)\n")
                lineTickers.append(t)
                day += Int32(1 + rng.below(3))
            }
        }
        let schema = valueNames.map { ColumnDescriptor(name: $0, type: .float64) }
        let columns: [AnyColumn] = values.map { v in v.contains(nil) ? .float64(Column(v)) : .float64(Column(v.map { $0! })) }
        var reference = try! QuoteTable(schema: schema, columns: columns, dates: Column(dates), tickers: entries, dateColumnName: "date")
        reference.shrinkToFit()
        reference.computeSummaries()
        return Generated(header: "ticker,date,Open,Close,Volume\n", lines: lines, lineTickers: lineTickers, reference: reference)
    }

    /// The header's layout, read as the stream decoder reads it.
    static func layout(_ header: String) throws -> CSVScanner.Layout {
        let bytes = Array(header.utf8)
        return try bytes.withUnsafeBufferPointer { b in
            var scanner = CSVScanner(input: ByteInput(base: b.baseAddress!, count: b.count, source: "test"), position: 0)
            return try scanner.readLayout()
        }
    }

    /// `lines` decoded as one piece, as `CSVStreamDecoder`'s workers decode them; and their bytes.
    static func decode(_ lines: ArraySlice<String>, _ layout: CSVScanner.Layout) throws -> (DecodedRows, Int) {
        let bytes = Array(lines.joined().utf8)
        // An empty piece still needs an address: one spare byte, never read (count excludes it).
        let padded = bytes + [0]
        let rows = try padded.withUnsafeBufferPointer { p in
            var scanner = CSVScanner(input: ByteInput(base: p.baseAddress!, count: bytes.count, source: "test"), position: 0)
            return try scanner.decodeDatatableRowsInPlace(layout)
        }
        return (rows, bytes.count)
    }

    /// Random cuts: piece sizes from a menu around block boundaries, zero included.
    static func pieces(_ count: Int, rng: inout SplitMix64) -> [Range<Int>] {
        let menu = [0, 0, 1, 2, 7, 511, 512, 513, 1_000]
        var cuts: [Range<Int>] = []
        var start = 0
        while start < count {
            let size = rng.chance(3) ? Int(rng.below(1_200)) : menu[rng.below(menu.count)]
            let end = Swift.min(count, start + size)
            cuts.append(start ..< end)
            start = end
        }
        if rng.chance(2) { cuts.append(count ..< count) }  // an empty last piece
        return cuts
    }

    static func bits(_ s: BlockSummaries<Double>?) -> [[UInt64]] {
        guard let s else { return [] }
        return [s.minimums.map(\.bitPattern), s.maximums.map(\.bitPattern), s.unknownCounts.map(UInt64.init)]
    }

    @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6])
    func randomPiecesAppendToTheWholeTable(seed: UInt64) throws {
        let generated = Self.generate(seed: seed)
        let layout = try Self.layout(generated.header)
        let totalBytes = generated.lines.reduce(0) { $0 + $1.utf8.count }
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let expectedBytes = try ParallelImportTests.snapshotBytes(generated.reference, in: dir)
        var rng = SplitMix64(seed: seed &* 977)
        // (initial rows, input size): tiny and growing many times; sized from the input; the default.
        for (initial, total) in [(1, nil), (300, nil), (nil, totalBytes), (nil, nil)] as [(Int?, Int?)] {
            let label = "seed \(seed), initial \(initial.map(String.init) ?? "default"), total \(total.map(String.init) ?? "unknown")"
            let assembler = try #require(
                ColumnAssembler(
                    streamingValueNames: Self.valueNames, dateColumnName: "date",
                    totalBytes: total, initialRowCapacity: initial))
            let startCapacity = assembler.rowCapacity
            var appended = 0
            for cut in Self.pieces(generated.lines.count, rng: &rng) {
                var lines = generated.lines[cut]
                // A piece of one ticker in reverse line order: decoded through a permutation.
                if Set(generated.lineTickers[cut]).count == 1 && rng.chance(2) { lines = ArraySlice(lines.reversed()) }
                let (rows, bytes) = try Self.decode(lines, layout)
                #expect(assembler.append(rows, bytes: bytes), "\(label): piece \(cut)")
                appended += cut.count
                #expect(assembler.appendedRowCount == appended, "\(label)")
            }
            if initial == 1 { #expect(assembler.rowCapacity > startCapacity, "\(label): the columns grew") }
            let table = assembler.finishAppending()
            #expect(table == generated.reference, "\(label)")
            #expect(table.hasSummaries, "\(label)")
            #expect(table.dates.summaries == BlockSummaries(rowByRow: table.dates), "\(label)")
            for column in table.columns {
                guard case .float64(let c) = column else {
                    Issue.record("not Float64")
                    continue
                }
                #expect(Self.bits(c.summaries) == Self.bits(BlockSummaries(rowByRow: c)), "\(label)")
            }
            #expect(table.columns[1].validity != nil, "\(label): Close has nulls")
            #expect(try ParallelImportTests.snapshotBytes(table, in: dir) == expectedBytes, "\(label)")
        }
    }

    /// A piece that does not continue the rows appended is refused and changes nothing: a ticker
    /// seen before, a ticker continuing with a date not after its last, other columns.
    @Test func piecesThatDoNotConcatenateAreRefused() throws {
        let layout = try Self.layout("ticker,date,Open,Close,Volume\n")
        let assembler = try #require(
            ColumnAssembler(
                streamingValueNames: Self.valueNames, dateColumnName: "date",
                totalBytes: nil, initialRowCapacity: 2))
        let (first, firstBytes) = try Self.decode(["A,2014-01-02,1,2,3\n", "A,2014-01-03,4,5,6\n", "B,2014-01-02,7,8,9\n"], layout)
        #expect(assembler.append(first, bytes: firstBytes))
        let refused: [[String]] = [
            ["A,2014-01-06,1,1,1\n"],  // A was seen before and is not the last ticker
            ["B,2014-01-02,1,1,1\n"],  // B continues with a date not after its last
            ["B,2014-01-01,1,1,1\n"],
        ]
        for lines in refused {
            let (rows, bytes) = try Self.decode(ArraySlice(lines), layout)
            #expect(!assembler.append(rows, bytes: bytes), "\(lines)")
            #expect(assembler.appendedRowCount == 3)
        }
        let other = try Self.layout("ticker,date,Open,Close\n")
        let (otherRows, otherBytes) = try Self.decode(["C,2014-01-02,1,2\n"], other)
        #expect(!assembler.append(otherRows, bytes: otherBytes), "other columns")
        // B continuing with a later date, and a new ticker, still append after the refusals.
        let (more, moreBytes) = try Self.decode(["B,2014-01-03,1,2,3\n", "C,2014-01-02,4,5,6\n"], layout)
        #expect(assembler.append(more, bytes: moreBytes))
        let table = assembler.finishAppending()
        #expect(table.tickers.map(\.symbol) == ["A", "B", "C"])
        #expect(table.tickers.map(\.rowCount) == [2, 2, 1])
        #expect(table.dates.count == 5)
        guard case .float64(let open) = table.columns[0] else {
            Issue.record("not Float64")
            return
        }
        #expect((0 ..< 5).map { open[$0] } == [1, 4, 7, 1, 4])
    }

    /// Through the stream decoder: a file whose tickers are not in one run each (A, B, A again)
    /// falls back to merging the pieces kept whole, and equals the whole file's decode.
    @Test func aFileNotSortedByTickerImportsAsItsBytesDo() {
        var text = "ticker,date,Open,Close,Volume\n"
        for (symbol, days) in [("A", 1 ... 20), ("B", 1 ... 20), ("A", 21 ... 28)] {
            for d in days { text += "\(symbol),2014-02-\(String(format: "%02d", d)),\(d).5,\(d),\(d * 100)\n" }
        }
        StreamImportTests.expectSame(Array(text.utf8), "A, B, A again")
    }
}
