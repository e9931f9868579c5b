import Colonnade
@testable import ColonnadeCLI
import ColonnadeTestSupport
import DataLink
import Foundation
import Testing

/// `colonnade fetch` against a server that lies about lengths or never stops sending
/// (issue 28, items 4 and 5): never a crash, never a truncated body taken as whole, never
/// memory past the limit, and the snapshot untouched.
@Suite struct FetchHostileResponseTests {
    /// 28 rows of a time-series CSV; the hostile answers send the first 9 of them.
    static let csv: String = {
        var text = "Date,Open,High,Low,Close,Volume\n"
        for day in 1 ... 28 { text += "2014-02-\(day < 10 ? "0" : "")\(day),1.5,2.5,0.5,2.0,1000\n" }
        return text
    }()

    static var nineRows: Data {
        let lines = csv.split(separator: "\n", omittingEmptySubsequences: false).prefix(10)
        return Data((lines.joined(separator: "\n") + "\n").utf8)
    }

    /// A response whose header says `length` and whose body is the first nine rows, then FIN.
    static func lying(_ length: String) -> LoopbackHTTPAction {
        .verbatim(head: "HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\nContent-Length: \(length)\r\nConnection: close\r\n", body: nineRows)
    }

    /// The environment of an in-process run whose requests go through the built
    /// `colonnade-transfer`, as the real `colonnade` does.
    static func isolated(_ scratch: Scratch, _ extra: [String: String] = [:]) throws -> [String: String] {
        scratch.environment([FetchCommand.transferExecutableVariable: try BuiltExecutable.transfer()].merging(extra) { _, new in new })
    }

    /// `Content-Length: 9223372036854775807` traps inside FoundationNetworking (its header
    /// callback converts the length to Int64 through a Double, which rounds to 2^63) before any
    /// delegate sees the response. The real executable runs the request in a child process, so
    /// the trap is a malformed response: exit 1, no crash, nothing saved.
    @Test func contentLengthNearInt64MaxIsAMalformedResponseNotACrash() async throws {
        let scratch = try Scratch()
        try await LoopbackHTTPServer.run({ _ in Self.lying("9223372036854775807") }) { server in
            let result = try BuiltExecutable.run(
                fetchArguments(server, scratch, ["AAPL", "--format", "csv"]),
                environment: scratch.environment())
            #expect(!result.terminatedBySignal, "fetch crashed: \(result.standardError)")
            #expect(result.status == 1, "\(result.standardError)")
            #expect(result.standardError.contains("error: AAPL: dataset WIKI/AAPL: malformed response: "), "\(result.standardError)")
            #expect(result.standardError.contains("signal 4 (SIGILL)"), "\(result.standardError)")
            #expect(server.requests.count == 1, "a malformed response is not retried")
        }
        #expect(scratch.bytes("quotes.snapshot") == nil, "nothing was saved")
    }

    /// The same trap, in process with the child as the real executable runs it: the test
    /// process survives too.
    @Test func contentLengthNearInt64MaxInProcessWithTheTransferProcess() async throws {
        let scratch = try Scratch()
        try await LoopbackHTTPServer.run({ _ in Self.lying("9223372036854775807") }) { server in
            let run = await runOffPool(
                fetchArguments(server, scratch, ["AAPL", "--format", "csv"]), in: scratch,
                environment: try Self.isolated(scratch))
            #expect(run.status == 1)
            #expect(
                run.errorLines.first?.hasPrefix(
                    "error: AAPL: dataset WIKI/AAPL: malformed response: the process running the transfer ended by signal 4") == true,
                "\(run.standardError)")
        }
        #expect(scratch.bytes("quotes.snapshot") == nil)
    }

    /// A length that does not fit Int64 is ignored by libcurl, which then reads to the end of the
    /// connection: the nine rows sent would be taken as the whole body. The header is read as
    /// sent, and refused — in process and through the transfer process.
    @Test(arguments: ["9223372036854775808", "18446744073709551616", "1000000000000000000000000000000"])
    func contentLengthPastInt64IsRefusedNotTruncated(_ length: String) async throws {
        for isolated in [false, true] {
            let scratch = try Scratch()
            try await LoopbackHTTPServer.run({ _ in Self.lying(length) }) { server in
                let environment = isolated ? try Self.isolated(scratch) : scratch.environment([FetchCommand.transferExecutableVariable: ""])
                let run = await runOffPool(
                    fetchArguments(server, scratch, ["AAPL", "--format", "csv"]), in: scratch, environment: environment)
                #expect(run.status == 1, "isolated \(isolated): \(run.standardError)")
                #expect(
                    run.errorLines == [
                        "error: AAPL: dataset WIKI/AAPL: malformed response: Content-Length '\(length)' is too large to be a length"
                    ],
                    "isolated \(isolated): \(run.standardError)")
                #expect(server.requests.count == 1)
            }
            #expect(scratch.bytes("quotes.snapshot") == nil, "no truncated body saved (isolated \(isolated))")
        }
    }

    /// Two different lengths in one header: contradictory, refused (libcurl takes the first).
    @Test func contradictoryContentLengthIsRefused() async throws {
        let scratch = try Scratch()
        let length = "\(Self.csv.utf8.count), 10"
        let action = LoopbackHTTPAction.verbatim(
            head: "HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\nContent-Length: \(length)\r\nConnection: close\r\n",
            body: Data(Self.csv.utf8))
        try await LoopbackHTTPServer.run({ _ in action }) { server in
            let run = await runOffPool(
                fetchArguments(server, scratch, ["AAPL", "--format", "csv"]), in: scratch,
                environment: try Self.isolated(scratch))
            #expect(run.status == 1)
            #expect(
                run.errorLines == [
                    "error: AAPL: dataset WIKI/AAPL: malformed response: Content-Length '\(length)' declares different lengths"
                ],
                "\(run.standardError)")
        }
        #expect(scratch.bytes("quotes.snapshot") == nil)
    }

    /// An honest response still arrives whole through the transfer process.
    @Test func anHonestResponseArrivesWholeThroughTheTransferProcess() async throws {
        let scratch = try Scratch()
        try await LoopbackHTTPServer.run({ _ in .csv(Self.csv) }) { server in
            let run = await runOffPool(
                fetchArguments(server, scratch, ["AAPL", "--format", "csv"]), in: scratch,
                environment: try Self.isolated(scratch))
            #expect(run.status == 0, "\(run.standardError)")
        }
        #expect(try QuoteTable.load(from: scratch.snapshot).rowCount == 28)
    }

    /// An endless body (chunked, no length, sent as fast as the socket takes it) is counted as it
    /// arrives from the transfer process and cut within one frame of the limit, whatever the
    /// server's pace: the error says how many bytes had arrived.
    @Test func endlessBodyStopsWithinOneFrameOfTheLimit() async throws {
        let scratch = try Scratch()
        let limit = 1_000_000
        try await LoopbackHTTPServer.run({ _ in .flood(status: 200, headers: ["Content-Type": "text/csv"], byteCount: 1 << 40) }) {
            server in
            let run = await runOffPool(
                fetchArguments(server, scratch, ["AAPL", "--format", "csv"]), in: scratch,
                environment: try Self.isolated(scratch, [:]), tuning: TestTuning(maximumResponseBytes: limit))
            #expect(run.status == 1)
            let line = try #require(run.errorLines.first)
            let prefix = "error: AAPL: dataset WIKI/AAPL: response too large ("
            #expect(line.hasPrefix(prefix), "\(line)")
            let received = Int(line.dropFirst(prefix.count).prefix { $0.isNumber }) ?? -1
            #expect(received > limit && received <= limit + TransferProcess.maximumFrame, "\(line)")
            #expect(line.hasSuffix("bytes arrived, decoded, when reading stopped; limit \(limit) bytes)"), "\(line)")
            #expect(await server.waitUntilIdle(), "the transfer was ended")
        }
        #expect(scratch.bytes("quotes.snapshot") == nil)
    }
}

/// The export link of `fetch --bulk` is a server too: the same lengths, the same answers.
@Suite struct FetchBulkHostileLengthTests {
    static func run(_ head: String) async throws -> Invocation {
        let scratch = try Scratch()
        return try await LoopbackHTTPServer.run({ _ in .verbatim(head: head, body: Data("PK\u{3}\u{4}partial".utf8)) }) { files in
            try await LoopbackHTTPServer.run({ _ in FetchBulkTests.status("fresh", link: FetchBulkTests.link(files)) }) { api in
                let run = await runOffPool(
                    fetchArguments(api, scratch, ["--table", "WIKI/PRICES", "--bulk"]), in: scratch,
                    environment: try FetchHostileResponseTests.isolated(scratch, FetchBulkTests.environment(scratch)),
                    tuning: FetchBulkTests.tuning)
                #expect(scratch.bytes("quotes.snapshot") == nil)
                #expect(FetchBulkTests.leftovers(scratch).isEmpty)
                return run
            }
        }
    }

    @Test func aContentLengthNearInt64MaxOnTheExportLinkIsAMalformedDownload() async throws {
        let run = try await Self.run(
            "HTTP/1.1 200 OK\r\nContent-Type: application/zip\r\nContent-Length: 9223372036854775807\r\nConnection: close\r\n")
        #expect(run.status == 1)
        #expect(run.errorLines.first?.contains("downloading the export from 127.0.0.1") == true, "\(run.standardError)")
        #expect(
            run.errorLines.first?.contains("malformed response: the process running the transfer ended by signal 4 (SIGILL)") == true,
            "\(run.standardError)")
        FetchBulkTests.expectLinkHidden(run)
    }

    @Test func aContentLengthPastInt64OnTheExportLinkIsRefused() async throws {
        let run = try await Self.run(
            "HTTP/1.1 200 OK\r\nContent-Type: application/zip\r\nContent-Length: 18446744073709551616\r\nConnection: close\r\n")
        #expect(run.status == 1)
        #expect(
            run.errorLines.first?.hasSuffix("malformed response: Content-Length '18446744073709551616' is too large to be a length")
                == true,
            "\(run.standardError)")
        FetchBulkTests.expectLinkHidden(run)
    }
}
