@testable import DataLink
import ColonnadeTestSupport
import Foundation
import Testing

/// The export-status bodies (real-shaped CSV from zipline, JSON in the shape Nasdaq's client
/// reads) and the link redaction that goes with them.
@Suite struct ExportStatusTests {
    static func body(_ name: String) throws -> Data {
        try Data(contentsOf: Fixtures.exportDirectory.appendingPathComponent(name))
    }

    @Test func theFixtureBodiesParse() throws {
        let fresh = try #require(ExportStatus.parse(Self.body("WIKI-PRICES.export-status.fresh.json")))
        #expect(fresh.isFresh)
        #expect(fresh.link?.host == "example-bucket.s3.amazonaws.com")
        #expect(fresh.dataSnapshotTime == "2018-04-16 10:42:07 UTC")

        let creating = try #require(ExportStatus.parse(Self.body("WIKI-PRICES.export-status.creating.json")))
        #expect(creating.status == "creating" && creating.link == nil && !creating.isFresh)

        let csv = try #require(ExportStatus.parse(Self.body("WIKI-PRICES.export-status.csv")))
        #expect(csv.isFresh)
        #expect(csv.link?.absoluteString == "https://file_url.mock.quandl")
        #expect(csv.dataSnapshotTime == "2017-10-17 23:48:25 UTC")
    }

    @Test func otherBodiesAreNotStatuses() {
        for text in [
            "", "{}", #"{"datatable":{"data":[]}}"#, "<html></html>", "code,message\nQECx02,nope\n",
            #"{"datatable_bulk_download":{"file":{"link":"ftp://x/y","status":"fresh"}}}"#,
        ] {
            let status = ExportStatus.parse(Data(text.utf8))
            #expect(status == nil || status?.isFresh == false, "\(text)")
        }
    }

    @Test func theLinkAndItsPartsAreRedacted() throws {
        let body = try Self.body("WIKI-PRICES.export-status.fresh.json")
        #expect(ExportStatus.parse(body)?.link != nil)
        let redactor = Redactor(key: nil).hidingURLs(in: body)
        let text = String(decoding: body, as: UTF8.self)
        let redacted = redactor(text)
        #expect(!redacted.contains("X-Amz-Signature"))
        #expect(!redacted.contains("212b326a081eacca455e13140d7bb9db"))
        #expect(redacted.contains("<redacted>"))
        // A page echoing one parameter's value alone; short values (< 8 characters) are not secrets.
        let signed = try #require(URL(string: "https://bucket.example/export/T_0123456789abcdef.zip?X-Amz-Signature=abcdef123456&n=1"))
        let hiding = Redactor(key: nil).hiding(signed)
        #expect(hiding("denied: signature abcdef123456 expired") == "denied: signature <redacted> expired")
        #expect(!hiding("GET /export/T_0123456789abcdef.zip?X-Amz-Signature=abcdef123456&n=1").contains("0123456789abcdef"))
        #expect(hiding("n=1") == "n=1")
    }
}
