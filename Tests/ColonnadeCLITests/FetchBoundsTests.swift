import Colonnade
@testable import ColonnadeCLI
import ColonnadeTestSupport
import DataLink
import Foundation
import Glibc
import Testing

/// `colonnade fetch` cannot be held forever nor leave its downloads behind (issue 28, items 6
/// and 12), and says when WIKI is the source (issue 27).
@Suite struct FetchBoundsTests {
    /// A server that hands out a fresh cursor with every page, forever; `rows` rows per page.
    static func endlessPages(rows: Int) -> LoopbackHTTPServer.Handler {
        { request in
            let n = Int(request.query("qopts.cursor_id")?.dropFirst(2) ?? "") ?? 0
            let page = (0 ..< rows).map { _ in (ticker: "AAPL", date: "2014-01-06", open: 1.5, close: 2.0) }
            return .json(datatablePage(page, next: "c-\(n + 1)"))
        }
    }

    /// Empty pages that each point to another: the first one ends the fetch.
    @Test func anEmptyPageWithACursorEndsTheFetch() async throws {
        let scratch = try Scratch()
        try await LoopbackHTTPServer.run(Self.endlessPages(rows: 0)) { server in
            let run = await runOffPool(fetchArguments(server, scratch, ["--table", "WIKI/PRICES", "AAPL"]), in: scratch)
            #expect(run.status == 1)
            #expect(
                run.errorLines == [
                    "error: table WIKI/PRICES (ticker AAPL): page 1 had no rows but a cursor to another page; "
                        + "stopped following the server's cursors"
                ], "\(run.standardError)")
            // Pages decode while the next downloads, so a few may be asked for before page 1's
            // verdict is in; never the unbounded walk's 10,000.
            #expect(server.requests.count < DataLinkClient.maximumPages)
        }
        #expect(scratch.bytes("quotes.snapshot") == nil)
    }

    /// Pages with rows, forever: with the tickers and dates known, one ticker over one week
    /// (5 weekdays) can fill at most ceil(5 / 10,000) + 2 = 3 pages; the fourth is not asked for.
    @Test func pagesAreCappedByTickersAndWeekdays() async throws {
        let scratch = try Scratch()
        try await LoopbackHTTPServer.run(Self.endlessPages(rows: 1)) { server in
            let run = await runOffPool(
                fetchArguments(
                    server, scratch,
                    [
                        "--table", "WIKI/PRICES", "AAPL", "--from", "2014-01-06",
                        "--to", "2014-01-10",
                    ]), in: scratch)
            #expect(run.status == 1)
            #expect(
                run.errorLines == [
                    "error: table WIKI/PRICES (ticker AAPL): the server kept handing out next-page cursors past 3 pages, "
                        + "more than the query can have; stopped"
                ], "\(run.standardError)")
            #expect(server.requests.count == 3)
        }
        #expect(scratch.bytes("quotes.snapshot") == nil)
    }

    /// The whole fetch's deadline: a server that never answers (within the 60 s idle timeout)
    /// is given up on at the deadline, reported as such. The outcome does not depend on timing:
    /// the server never answers, so only the deadline can end the run first.
    @Test func theWholeFetchHasADeadline() async throws {
        let scratch = try Scratch()
        try await LoopbackHTTPServer.run({ _ in .hang }) { server in
            let run = await runOffPool(
                fetchArguments(server, scratch, ["--table", "WIKI/PRICES", "AAPL", "--deadline", "1s"]), in: scratch)
            #expect(run.status == 1)
            #expect(run.errorLines == ["error: fetch did not finish within its deadline of 1 s; nothing was saved"], "\(run.standardError)")
            #expect(run.standardError.contains("hint: --deadline DURATION"))
        }
        #expect(scratch.bytes("quotes.snapshot") == nil)
    }

    @Test(arguments: ["0", "soon", "-5m", "8d", "1y"])
    func aBadDeadlineIsAUsageError(_ value: String) async throws {
        let scratch = try Scratch()
        let run = await runOffPool(
            ["fetch", "AAPL", "--deadline", value, "--base-url", "http://127.0.0.1:9", "--snapshot", scratch.snapshot],
            in: scratch)
        #expect(run.status == 2, "\(run.standardError)")
        #expect(run.standardError.contains("--deadline"))
    }

    // MARK: WIKI

    @Test func choosingWIKISaysItStoppedIn2018() async throws {
        let bodies = QuoteBodies()
        let tables = FetchRequestTests.tablePages
        try await LoopbackHTTPServer.run({ request in
            request.path.hasPrefix("/api/v3/datatables/") ? tables(request) : bodies.serve(request)
        }) { server in
            for (arguments, noted) in [
                (["AAPL"], true), (["AAPL", "--database", "wiki"], true), (["--table", "WIKI/PRICES", "AAPL"], true),
                (["AAPL", "--database", "EOD"], false), (["AAPL", "--quiet"], false),
            ] {
                let scratch = try Scratch()
                let run = await runOffPool(fetchArguments(server, scratch, arguments), in: scratch)
                let notes = run.standardError.split(separator: "\n").filter { $0.hasPrefix("note: WIKI stopped updating in March 2018") }
                #expect(notes.count == (noted ? 1 : 0), "\(arguments): \(run.standardError)")
                if noted {
                    #expect(notes.first?.contains("use --table with a table your own Nasdaq Data Link subscription covers") == true)
                }
            }
        }
    }

    // MARK: Bulk temporaries

    /// A process that has ended: its PID names a temporary nobody holds.
    static func deadPID() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    /// A killed `fetch --bulk` leaves `.NAME.export-PID-N.zip`; the next bulk fetch removes it,
    /// beside the snapshot and beside `--keep-zip`'s path, but never one a live run holds.
    @Test func bulkFetchRemovesTemporariesOfDeadRunsOnly() async throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(atPath: scratch.file("kept"), withIntermediateDirectories: true)
        let dead = try Self.deadPID()
        let staleBesideSnapshot = ".quotes.snapshot.export-\(dead)-1234.zip"
        let staleBesideKept = "kept/.WIKI.zip.export-\(dead)-99.zip"
        let live = ".quotes.snapshot.export-\(getpid())-5678.zip"
        let unrelated = ".other.snapshot.export-\(dead)-1.zip"
        for name in [staleBesideSnapshot, staleBesideKept, live, unrelated] {
            try scratch.write(String(repeating: "PK partial download ", count: 100), to: name)
        }
        // The live run's lock: held by this process for the whole fetch.
        let holder = open(scratch.file(live), O_RDONLY | O_CLOEXEC)
        try #require(holder >= 0)
        defer { close(holder) }
        try #require(flock(holder, LOCK_EX | LOCK_NB) == 0)

        try await LoopbackHTTPServer.run({ _ in FetchBulkTests.zipAction }) { files in
            try await LoopbackHTTPServer.run({ _ in FetchBulkTests.status("fresh", link: FetchBulkTests.link(files)) }) { api in
                let run = await runOffPool(
                    fetchArguments(api, scratch, ["--table", "WIKI/PRICES", "--bulk", "--keep-zip", "kept/WIKI.zip"]),
                    in: scratch, environment: FetchBulkTests.environment(scratch), tuning: FetchBulkTests.tuning)
                #expect(run.status == 0, "\(run.standardError)")
            }
        }
        #expect(scratch.bytes(staleBesideSnapshot) == nil, "a dead run's temporary beside the snapshot is removed")
        #expect(scratch.bytes(staleBesideKept) == nil, "a dead run's temporary beside --keep-zip is removed")
        #expect(scratch.bytes(live) != nil, "a live run's temporary stays")
        #expect(scratch.bytes(unrelated) != nil, "another snapshot's temporary is not this run's to judge")
        #expect(scratch.bytes("kept/WIKI.zip") == FetchBulkTests.zipBytes)
        let left = ((try? FileManager.default.contentsOfDirectory(atPath: scratch.file("kept"))) ?? []).filter { $0.contains(".export-") }
        #expect(left.isEmpty, "\(left)")
    }
}
