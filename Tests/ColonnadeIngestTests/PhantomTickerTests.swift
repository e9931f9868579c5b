@testable import Colonnade
@testable import DataLinkFormat
@testable import ColonnadeIngest
import ColonnadeTestSupport
import DecodingTestSupport
import Foundation
import Testing

/// A hostile-input probe imported `README.md`, a header-only `Open,Close` file and a text or
/// symlink zip member with exit 0, each adding a ticker with no rows named after the file. A file
/// with no date column is refused; a header-only file with one adds no ticker; a zip member that
/// is a link, a zip, a Parquet or an Arrow file is refused saying so.
@Suite struct PhantomTickerTests {
    @Test(arguments: ["Open,Close\n", "# Colonnade\n\nAn in-memory columnar analytics engine\n", "Open,Close\n1,2\n", "x\n"])
    func aFileWithNoDateColumnIsRefused(text: String) {
        let error = Decode.failure(text, ticker: nil, source: "README.md")
        #expect(error?.description.contains("README.md: missing a date column") == true, "\(String(describing: error))")
    }

    @Test func aDateColumnNamedOtherwiseIsStillReadWhenItHoldsDates() throws {
        let table = try Decode.text("Month,Value\n2014-01-31,1.5\n2014-02-28,2.5\n", ticker: "X").table
        #expect(table.rowCount == 2 && table.tickers.map(\.symbol) == ["X"])
        let named = try Decode.text("Trade Date,Value\n2014-01-31,1.5\n", ticker: "X").table
        #expect(named.rowCount == 1)
    }

    @Test(arguments: [
        "Date,Open,Close\n", "Date,Open,Close\r\n\r\n",
        #"{"dataset_data":{"column_names":["Date","Open"],"data":[]}}"#,
        #"{"dataset":{"dataset_code":"AAPL","column_names":["Date","Open"],"data":[]}}"#,
        "ticker,date,open\n",
    ])
    func aHeaderOnlyResponseAddsNoTicker(text: String) throws {
        let table = try Decode.text(text, ticker: nil, source: "WIKI-AAPL.csv").table
        #expect(table.tickers.isEmpty && table.rowCount == 0)
        // Through the importer too (the file name would have named the ticker).
        let dir = NSTemporaryDirectory() + "/colonnade-phantom-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data(text.utf8).write(to: URL(fileURLWithPath: dir + "/WIKI-AAPL.csv"))
        let imported = try QuoteImporter.importFiles([dir + "/WIKI-AAPL.csv"])
        #expect(imported.tickers.isEmpty && imported.rowCount == 0)
    }

    static func archive(_ members: [ZipBuilder.Member]) throws -> ZipArchive {
        try ZipArchive(bytes: ZipBuilder(members).bytes(), name: "in.zip")
    }

    @Test func zipMembersThatAreNotQuoteFilesAreRefusedSayingWhatTheyAre() throws {
        let quotes = ZipBuilder.Member.stored("WIKI-AAPL.csv", Array("Date,Close\n2014-01-02,1\n".utf8))
        var link = ZipBuilder.Member.stored("WIKI-KO.csv", Array("WIKI-AAPL.csv".utf8))
        link.externalAttributes = UInt32(0o120777) << 16
        let cases: [(ZipBuilder.Member, String)] = [
            (link, "in.zip:WIKI-KO.csv: not a Quandl response: the member is a symbolic link"),
            (.stored("README.txt", Array("This archive holds quotes.\n".utf8)), "in.zip:README.txt: missing a date column"),
            (.stored("inner.zip", ZipBuilder([quotes]).bytes()), "the member is a zip archive inside the zip"),
            (.stored("q.parquet", Array("PAR1\u{0}\u{0}PAR1".utf8)), "the member is a Parquet file inside a zip"),
            (.stored("q.arrow", Array("ARROW1\u{0}\u{0}".utf8)), "the member is an Arrow IPC file inside a zip"),
        ]
        for (member, message) in cases {
            do {
                let table = try ArchiveImporter.importArchive(try Self.archive([quotes, member]), options: .init(threads: 1))
                Issue.record("\(member.name): imported \(table.tickers.map(\.symbol))")
            } catch {
                #expect("\(error)".contains(message), "\(member.name): \(error)")
            }
        }
        // A regular file's mode is not a link.
        var regular = quotes
        regular.externalAttributes = UInt32(0o100644) << 16
        let table = try ArchiveImporter.importArchive(try Self.archive([regular]), options: .init(threads: 1))
        #expect(table.tickers.map(\.symbol) == ["AAPL"])
        #expect(try Self.archive([link]).members[0].isSymbolicLink && !(try Self.archive([regular]).members[0].isSymbolicLink))
    }
}
