import Colonnade
import DataLinkFormat
@testable import ColonnadeIngest
import ColonnadeTestSupport
import DecodingTestSupport
import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import Testing

@Suite("Importing response files")
struct ImportTests {
    @Test func tickerFromFileName() {
        #expect(QuoteImporter.tickerSymbol(fromFileName: "FDX.json") == "FDX")
        #expect(QuoteImporter.tickerSymbol(fromFileName: "FDX.csv") == "FDX")
        #expect(QuoteImporter.tickerSymbol(fromFileName: "WIKI-FDX.csv") == "FDX")
        #expect(QuoteImporter.tickerSymbol(fromFileName: "/tmp/x.y/WIKI-BRK_A.2014.asc.csv") == "BRK.A")
        #expect(QuoteImporter.tickerSymbol(fromFileName: ".json") == nil)
        #expect(DataLinkSymbols.symbol(fromCode: "BRK_A") == "BRK.A")
        #expect(DataLinkSymbols.code(fromSymbol: "BRK.A") == "BRK_A")
    }

    static func directory() -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("colonnade-import-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func anErrorInTheSecondOfThreeFilesChangesNothing() throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let generated = QuoteGenerator(tickers: 3, days: 50, seed: 8).makeTable()
        let paths = try QuoteGenerator.writeTimeSeriesCSV(generated, toDirectory: dir)
        var text = try String(contentsOfFile: paths[1], encoding: .utf8)
        text = text.replacingOccurrences(of: "\n2000-02-", with: "\n2000-02-3")  // invalid dates
        try text.write(toFile: paths[1], atomically: true, encoding: .utf8)

        var table = QuoteGenerator(tickers: 1, days: 10, seed: 1).makeTable()
        let before = table
        do {
            try QuoteImporter.importFiles(paths, into: &table)
            Issue.record("imported a corrupt file")
        } catch {
            guard case let .decoding(.badDate(p, _)) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(p.source == (paths[1] as NSString).lastPathComponent)
        }
        #expect(table == before)
    }

    @Test func importsMergeFilesAndHonourTheTickerOverride() throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let generated = Decode.comparable(QuoteGenerator(tickers: 3, days: 30, seed: 4).makeTable())
        let paths = try QuoteGenerator.writeTimeSeriesCSV(generated, toDirectory: dir)
        #expect(try QuoteImporter.importFiles(paths) == generated)

        let single = try QuoteImporter.importFiles([paths[0]], ticker: "ZZZ")
        #expect(single.tickers.map(\.symbol) == ["ZZZ"])

        // The same ticker twice: the later file wins on equal dates.
        let renamed = dir + "/OTHER-AAPL.csv"
        try FileManager.default.copyItem(atPath: paths[1], toPath: renamed)
        let merged = try QuoteImporter.importFiles([paths[0], renamed])
        #expect(merged.tickers.map(\.symbol) == ["AAPL"])
        #expect(merged.rowCount == 30)
        #expect(merged.column(named: "close")!.doubleValue(at: 0) == generated.column(named: "close")!.doubleValue(at: 30))
    }

    @Test func unreadableFiles() {
        #expect(throws: ResponseError.self) { try QuoteImporter.importFiles(["/nonexistent/WIKI-X.csv"]) }
        #expect(throws: ResponseError.self) { try QuoteImporter.importFiles(["/tmp"]) }
    }

    @Test
    func importingFixturesOfSeveralShapes() throws {
        let names = ["WIKI-AAPL.2014.asc.csv", "WIKI-MSFT.2014.asc.csv", "WIKI-PRICES.datatable.2014.csv", "WIKI-AMZN.dataset.json"]
        let table = try QuoteImporter.importFiles(names.map { Fixtures.url($0).path })
        #expect(Set(table.tickers.map(\.symbol)) == ["AAPL", "MSFT", "BRK.A", "ZEN", "AMZN"])
        // The datatable export (later) revised AAPL 2014-06-09's volume and filled MSFT's gaps.
        let aapl = table.ticker("AAPL")!
        let r = aapl.rows.first { table.dates[$0] == Day("2014-06-09")!.daysSinceEpoch }!
        #expect(table.column(named: "volume")!.doubleValue(at: r) == 75_414_997)
        #expect(table.ticker("MSFT")!.rowCount == 252)
    }

    /// A FIFO is refused at once, without waiting for a writer (moved here from the engine's
    /// snapshot write-safety tests with the importer).
    @Test func aFIFOIsRefusedAtOnce() throws {
        let dir = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fifo = dir + "/q.fifo"
        #expect(mkfifo(fifo, 0o644) == 0)
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<String>("")
        Thread.detachNewThread {
            let text: String
            do {
                _ = try QuoteImporter.decodeFile(fifo, ticker: "A")
                text = "imported"
            } catch { text = "\(error)" }
            result.withLock { $0 = text }
            done.signal()
        }
        if done.wait(timeout: .now() + 30) == .timedOut {
            Issue.record("blocked on the FIFO \(fifo)")
            let fd = open(fifo, O_RDWR | O_NONBLOCK)  // lets the blocked open return
            done.wait()
            close(fd)
        }
        let imported = result.withLock { $0 }
        #expect(imported.contains("is a FIFO (named pipe), not a regular file"), "\(imported)")
    }
}
