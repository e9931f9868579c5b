import Colonnade
@testable import ColonnadeCLI
import ColonnadeTestSupport
import DataLinkFormat
import Foundation
import Synchronization
import Testing

/// `colonnade fetch --table WIKI/PRICES --bulk` against two loopback servers: the API (export
/// status) and the link's host (the zip), played through the whole flow with the real export zip.
@Suite struct FetchBulkTests {
    static let zipBytes: Data = {
        (try? Data(contentsOf: Fixtures.exportDirectory.appendingPathComponent("WIKI-PRICES.export.zip"))) ?? Data()
    }()

    /// The signature part of every link: a secret that must never be printed.
    static let signature = "X-Amz-Signature=f00dfacecafe1234"

    static func link(_ server: LoopbackHTTPServer, _ n: Int = 1) -> String {
        server.baseURL.absoluteString + "/export/WIKI_PRICES_\(n)a2b3c4d5e6.zip?X-Amz-Expires=1800&\(signature)\(n)"
    }

    static func status(_ status: String, link: String?) -> LoopbackHTTPAction {
        let linkJSON = link.map { #""\#($0)""# } ?? "null"
        return .json(
            #"{"datatable_bulk_download":{"file":{"link":\#(linkJSON),"status":"\#(status)","data_snapshot_time":"2018-04-16 10:42:07 UTC"},"datatable":{"last_refreshed_time":"2018-03-27 21:46:11 UTC"}}}"#
        )
    }

    static let zipAction = LoopbackHTTPAction.respond(status: 200, headers: ["Content-Type": "application/zip"], body: zipBytes)

    /// The environment of a run: a key, and short waits between status requests.
    static func environment(_ scratch: Scratch) -> [String: String] {
        scratch.environment(["NASDAQ_DATA_LINK_API_KEY": fetchTestKey])
    }

    /// A 20 ms first wait between export status requests.
    static let tuning = TestTuning(exportFirstPoll: .milliseconds(20))

    /// What `colonnade import` of the uncompressed CSV saves, loaded back.
    static func reference() async throws -> QuoteTable {
        try await ImportArchiveCommandTests.referenceTable(in: Scratch())
    }

    /// Nothing of the link (its path or signature) in what the run printed.
    static func expectLinkHidden(_ run: Invocation, sourceLocation: SourceLocation = #_sourceLocation) {
        for text in [run.standardOutput, run.standardError] {
            #expect(!text.contains("f00dfacecafe"), "the link's signature leaked", sourceLocation: sourceLocation)
            #expect(!text.contains("a2b3c4d5e6"), "the link's path leaked", sourceLocation: sourceLocation)
        }
    }

    /// Temporary export files left in the scratch directory.
    static func leftovers(_ scratch: Scratch) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: scratch.path)) ?? []).filter { $0.contains(".export-") }
    }

    @Test func creatingTwiceThenFreshDownloadsFromTheLinkHostWithoutTheKey() async throws {
        let scratch = try Scratch()
        let counter = AttemptCounter()
        try await LoopbackHTTPServer.run({ _ in Self.zipAction }) { files in
            try await LoopbackHTTPServer.run({ request in
                counter.attempt(request) <= 2 ? Self.status("creating", link: nil) : Self.status("fresh", link: Self.link(files))
            }) { api in
                let arguments = fetchArguments(
                    api, scratch,
                    [
                        "--table", "WIKI/PRICES", "--bulk", "AAPL", "MSFT", "--from", "2014-01-01",
                        "--to", "2014-12-31", "--columns", "ticker,date,close", "--debug",
                    ])
                let run = await runOffPool(arguments, in: scratch, environment: Self.environment(scratch), tuning: Self.tuning)
                #expect(run.status == 0, "\(run.standardError)")
                Self.expectLinkHidden(run)
                #expect(run.standardError.contains("<redacted>"), "--debug shows the status bodies with the link redacted")

                // Three status requests with the key, the filters and qopts.export, no cursor.
                #expect(api.requests.count == 3)
                for request in api.requests {
                    #expect(request.path == "/api/v3/datatables/WIKI/PRICES.json")
                    #expect(
                        request.queryDictionary == [
                            "ticker": "AAPL,MSFT", "date.gte": "2014-01-01", "date.lte": "2014-12-31",
                            "qopts.columns": "ticker,date,close", "qopts.export": "true",
                        ])
                    #expect(request.header("X-Api-Token") == fetchTestKey)
                }
                // One download on the other port, without the key anywhere.
                #expect(files.port != api.port)
                #expect(files.requests.count == 1)
                for request in files.requests {
                    #expect(request.header("X-Api-Token") == nil, "the key must not go to the link's host")
                    #expect(!request.target.contains(fetchTestKey))
                    #expect(!request.headers.contains { $0.value.contains(fetchTestKey) })
                    #expect(request.path == "/export/WIKI_PRICES_1a2b3c4d5e6.zip")
                }
            }
        }
        // The server ignores the filters: the whole export zip is imported.
        #expect(try QuoteTable.load(from: scratch.snapshot) == (await Self.reference()))
        #expect(Self.leftovers(scratch).isEmpty, "the temporary download is removed")
    }

    @Test func aDroppedConnectionIsResumedWithARangeRequest() async throws {
        let scratch = try Scratch()
        let body = Self.zipBytes
        let cut = 12_345
        try await LoopbackHTTPServer.run({ request in
            guard let range = request.header("Range") else {
                return .cutOff(status: 200, headers: ["Content-Type": "application/zip"], body: body, sentBytes: cut)
            }
            guard range == "bytes=\(cut)-" else { return .respond(status: 400, headers: [:], body: Data("bad range \(range)".utf8)) }
            return .respond(
                status: 206,
                headers: [
                    "Content-Type": "application/zip",
                    "Content-Range": "bytes \(cut)-\(body.count - 1)/\(body.count)",
                ],
                body: body.subdata(in: cut ..< body.count))
        }) { files in
            try await LoopbackHTTPServer.run({ _ in Self.status("fresh", link: Self.link(files)) }) { api in
                let run = await runOffPool(
                    fetchArguments(api, scratch, ["--table", "WIKI/PRICES", "--bulk", "--keep-zip", "kept.zip"]),
                    in: scratch, environment: Self.environment(scratch), tuning: Self.tuning)
                #expect(run.status == 0, "\(run.standardError)")
                Self.expectLinkHidden(run)
                #expect(files.requests.count == 2)
                #expect(files.requests.last?.header("Range") == "bytes=\(cut)-")
                #expect(api.requests.count == 1, "a resume needs no new link")
            }
        }
        #expect(scratch.bytes("kept.zip") == body, "--keep-zip keeps the reassembled download byte for byte")
        #expect(try QuoteTable.load(from: scratch.snapshot) == (await Self.reference()))
        #expect(Self.leftovers(scratch).isEmpty)
    }

    @Test func aRefusedLinkIsReplacedByAFreshOne() async throws {
        let scratch = try Scratch()
        let expired =
            #"<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>"#
        let counter = AttemptCounter()
        try await LoopbackHTTPServer.run({ request in
            request.path.contains("WIKI_PRICES_1")
                ? .respond(status: 403, headers: ["Content-Type": "application/xml"], body: Data(expired.utf8))
                : Self.zipAction
        }) { files in
            try await LoopbackHTTPServer.run({ request in Self.status("fresh", link: Self.link(files, counter.attempt(request))) }) { api in
                let run = await runOffPool(
                    fetchArguments(api, scratch, ["--table", "WIKI/PRICES", "--bulk"]),
                    in: scratch, environment: Self.environment(scratch), tuning: Self.tuning)
                #expect(run.status == 0, "\(run.standardError)")
                Self.expectLinkHidden(run)
                #expect(api.requests.count == 2, "a fresh link was asked for")
                #expect(files.requests.map(\.path) == ["/export/WIKI_PRICES_1a2b3c4d5e6.zip", "/export/WIKI_PRICES_2a2b3c4d5e6.zip"])
            }
        }
        #expect(try QuoteTable.load(from: scratch.snapshot) == (await Self.reference()))
    }

    @Test func aLinkRefusedEveryTimeFailsAndChangesNothing() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        let counter = AttemptCounter()
        try await LoopbackHTTPServer.run({ _ in .respond(status: 403, headers: [:], body: Data("denied".utf8)) }) { files in
            try await LoopbackHTTPServer.run({ request in Self.status("fresh", link: Self.link(files, counter.attempt(request))) }) { api in
                let run = await runOffPool(
                    fetchArguments(api, scratch, ["--table", "WIKI/PRICES", "--bulk"]),
                    in: scratch, environment: Self.environment(scratch), tuning: Self.tuning)
                #expect(run.status == 1)
                Self.expectLinkHidden(run)
                #expect(
                    run.errorLines.first?.contains("downloading the export from 127.0.0.1:\(files.port) failed (HTTP 403)") == true,
                    "\(run.standardError)")
                #expect(api.requests.count == 4, "the first link and three fresh ones")
            }
        }
        #expect(scratch.bytes("quotes.snapshot") == before)
        #expect(Self.leftovers(scratch).isEmpty)
    }

    @Test func aLinkThatReturnsHTMLIsRefusedAndChangesNothing() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        let page = "<html><body>Please sign in " + Self.signature + "1</body></html>"
        try await LoopbackHTTPServer.run({ _ in .respond(status: 200, headers: ["Content-Type": "text/html"], body: Data(page.utf8)) }) {
            files in
            try await LoopbackHTTPServer.run({ _ in Self.status("fresh", link: Self.link(files)) }) { api in
                let run = await runOffPool(
                    fetchArguments(api, scratch, ["--table", "WIKI/PRICES", "--bulk"]),
                    in: scratch, environment: Self.environment(scratch), tuning: Self.tuning)
                #expect(run.status == 1)
                Self.expectLinkHidden(run)
                #expect(run.errorLines.first?.contains("not a zip file (content type text/html)") == true, "\(run.standardError)")
            }
        }
        #expect(scratch.bytes("quotes.snapshot") == before)
        #expect(Self.leftovers(scratch).isEmpty)
    }

    @Test func anExportThatStaysCreatingPastTheTimeoutFails() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        try await LoopbackHTTPServer.run({ _ in Self.status("creating", link: nil) }) { api in
            let run = await runOffPool(
                fetchArguments(api, scratch, ["--table", "WIKI/PRICES", "--bulk", "--bulk-timeout", "0.4s"]),
                in: scratch, environment: Self.environment(scratch), tuning: Self.tuning)
            #expect(run.status == 1)
            #expect(run.errorLines.first?.contains("the export was still 'creating' after") == true, "\(run.standardError)")
            #expect(run.standardError.contains("--bulk-timeout"), "the hint names the option")
            // How many status requests fit in 0.4 s depends on the machine's load; the message counts them.
            let count = api.requests.count
            #expect(count >= 1)
            #expect(run.errorLines.first?.contains("(\(count) status request\(count == 1 ? "" : "s"))") == true, "\(run.standardError)")
        }
        #expect(scratch.bytes("quotes.snapshot") == before)
    }

    @Test func aCorruptDownloadIsAPreciseErrorAndChangesNothing() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        var bytes = Self.zipBytes
        bytes[bytes.count / 2] ^= 0x40
        let damaged = bytes
        try await LoopbackHTTPServer.run({ _ in .respond(status: 200, headers: ["Content-Type": "application/zip"], body: damaged) }) {
            files in
            try await LoopbackHTTPServer.run({ _ in Self.status("fresh", link: Self.link(files)) }) { api in
                let run = await runOffPool(
                    fetchArguments(api, scratch, ["--table", "WIKI/PRICES", "--bulk"]),
                    in: scratch, environment: Self.environment(scratch), tuning: Self.tuning)
                #expect(run.status == 1)
                #expect(
                    run.errorLines.first?.hasPrefix("error: WIKI/PRICES export: member 'QUANDL_SAMPLE_TABLE.csv'") == true,
                    "\(run.standardError)")
            }
        }
        #expect(scratch.bytes("quotes.snapshot") == before)
        #expect(Self.leftovers(scratch).isEmpty)
    }

    /// With --keep-zip, a download that fails to import is still kept (byte for byte what arrived,
    /// so a long download need not be repeated to look at it), and the snapshot is unchanged.
    @Test func aKeptZipSurvivesAFailedImport() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        var bytes = Self.zipBytes
        bytes[bytes.count / 2] ^= 0x40
        let damaged = bytes
        try await LoopbackHTTPServer.run({ _ in .respond(status: 200, headers: ["Content-Type": "application/zip"], body: damaged) }) {
            files in
            try await LoopbackHTTPServer.run({ _ in Self.status("fresh", link: Self.link(files)) }) { api in
                let run = await runOffPool(
                    fetchArguments(api, scratch, ["--table", "WIKI/PRICES", "--bulk", "--keep-zip", "kept.zip"]),
                    in: scratch, environment: Self.environment(scratch), tuning: Self.tuning)
                #expect(run.status == 1, "\(run.standardError)")
                Self.expectLinkHidden(run)
            }
        }
        #expect(scratch.bytes("kept.zip") == damaged)
        #expect(scratch.bytes("quotes.snapshot") == before)
        #expect(Self.leftovers(scratch).isEmpty)
    }

    @Test func tickersAreRequiredWithoutBulk() async throws {
        let scratch = try Scratch()
        for arguments in [["fetch"], ["fetch", "--table", "WIKI/PRICES"]] {
            let run = await runOffPool(arguments + ["--snapshot", scratch.snapshot], in: scratch)
            #expect(run.status == 2, "\(run.standardError)")
            #expect(run.standardError.contains("missing argument TICKER..."), "\(run.standardError)")
        }
        #expect(scratch.bytes("quotes.snapshot") == nil)
    }

    @Test func bulkNeedsATable() {
        #expect(usageError(["fetch", "--bulk", "AAPL"], for: .fetch) != nil)
        #expect(usageError(["fetch", "--table", "WIKI/PRICES", "--keep-zip", "x.zip"], for: .fetch) != nil)
        #expect(
            usageError(["fetch", "--table", "WIKI/PRICES", "--bulk", "--keep-zip", "x.zip", "--bulk-timeout", "10m"], for: .fetch) == nil)
    }
}
