import Colonnade
import ColonnadeTestSupport
import DataLinkFormat
import DecodingTestSupport
import Foundation
@testable import ColonnadeIngest
import Testing

/// `QuoteStore.import`, the ingest layer's entry point, in process: a fresh store is written
/// straight (the direct path), a second import upserts under the lock (the ordinary path), both
/// paths give the same bytes, an input with no rows writes nothing, and a failing input leaves the
/// store as it was.
@Suite struct QuoteStoreTests {
    static func scratch() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("colonnade-store-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func importThenImportAgainUpsertsAndTheTwoPathsSaveTheSameBytes() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = [Fixtures.quandlPath("WIKI-AAPL.2014.asc.csv"), Fixtures.quandlPath("WIKI-MSFT.2014.asc.csv")]
        let second = [Fixtures.quandlPath("WIKI-KO.asc.csv")]

        let direct = try QuoteStore(at: dir + "/direct.snapshot")
        var options = ImportOptions()
        options.threads = 2
        let a = try direct.import(first, options: options)
        var ordinaryOptions = options
        ordinaryOptions.ordinaryPathOnly = true
        let ordinary = try QuoteStore(at: dir + "/ordinary.snapshot")
        let b = try ordinary.import(first, options: ordinaryOptions)
        #expect(a.saved && b.saved && a.imported == b.imported)
        #expect(FileManager.default.contents(atPath: direct.path) == FileManager.default.contents(atPath: ordinary.path))

        // Into an existing store: the ordinary path, an upsert of the new rows.
        let c = try direct.import(second, options: options)
        let reference = try QuoteImporter.importFiles(first + second)
        #expect(c.imported.rowCount == (try QuoteImporter.importFiles(second)).rowCount)
        #expect(try direct.load().rowCount == reference.rowCount)
        #expect(try direct.load().tickers.map(\.symbol) == reference.tickers.map(\.symbol))
    }

    @Test func anInputWithNoRowsWritesNothingAndABadOneLeavesTheStoreAlone() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let empty = dir + "/WIKI-NONE.csv"
        try "Date,Open,High,Low,Close,Volume\n".write(toFile: empty, atomically: true, encoding: .utf8)
        let store = try QuoteStore(at: dir + "/s.snapshot")
        var options = ImportOptions()
        options.ordinaryPathOnly = true
        let none = try store.import([empty], options: options)
        #expect(!none.saved && none.imported.rowCount == 0)
        #expect(!FileManager.default.fileExists(atPath: store.path))

        _ = try store.import([Fixtures.quandlPath("WIKI-AAPL.2014.asc.csv")])
        let before = FileManager.default.contents(atPath: store.path)
        let bad = dir + "/WIKI-BAD.csv"
        try "Date,Open,High,Low,Close,Volume\n2014-01-02,1,2,x,4,5\n".write(toFile: bad, atomically: true, encoding: .utf8)
        #expect(throws: ResponseError.self) { try store.import([Fixtures.quandlPath("WIKI-KO.asc.csv"), bad]) }
        #expect(FileManager.default.contents(atPath: store.path) == before)
    }
}
