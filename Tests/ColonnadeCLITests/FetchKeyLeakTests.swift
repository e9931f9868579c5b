import Colonnade
@testable import ColonnadeCLI
import ColonnadeTestSupport
import Foundation
import Testing

/// Issue 11, items 7 and 8 end to end: a server that echoes the key in every kind of response,
/// with and without `--format csv` and `--debug`, never gets it (or a fragment of it) onto
/// standard output or error; the key is never sent over plain HTTP to a remote host; URL
/// credentials are never shown; `--timeout` bounds a trickling response.
@Suite struct FetchKeyLeakTests {
    /// Pieces of the key a cut excerpt could show: its first 6 characters, its last 5.
    static let fragments = [String(fetchTestKey.prefix(6)), String(fetchTestKey.suffix(5))]

    /// 2xx bodies that fail to decode (or decode) with the key where an error excerpt would
    /// show it — at the start of a token, straddling the 32-byte excerpt cut, at the very end of
    /// a truncated body — plus error statuses that echo it.
    static let responses: [(name: String, action: LoopbackHTTPAction)] = {
        let k = fetchTestKey
        let json = "application/json; charset=utf-8"
        return [
            ("json value", .json(#"{"dataset_data":{"column_names":["Date","Close"],"data":[["2014-01-02",\#(k)]]}}"#)),
            ("json date", .json(#"{"dataset_data":{"column_names":["Date","Close"],"data":[["\#(k)",1]]}}"#)),
            (
                "json cut excerpt",
                .json(#"{"dataset_data":{"column_names":["Date","Close"],"data":[["2014-01-02",xxxxxxxxxxxxxxxxxxxxxxxxx\#(k)]]}}"#)
            ),
            ("json column name", .json(#"{"dataset_data":{"column_names":["Date","\#(k)","Date"],"data":[]}}"#)),
            ("json message", .json(#"{"message":"We could not recognize your API key: '\#(k)'"}"#)),
            (
                "json truncated in key",
                .respond(
                    status: 200, headers: ["Content-Type": json],
                    body: Data(#"{"dataset_data":{"column_names":["Date","Close"],"data":[["\#(k.prefix(9))"#.utf8))
            ),
            ("csv value", .csv("Date,Close\n2014-01-02,\(k)\n")),
            ("csv header", .csv("Date,\(k),Date\n2014-01-02,1,2\n")),
            ("csv error body", .csv("code,message\nQEAx01,We could not recognize your API key: '\(k)'\n")),
            ("html", .respond(status: 200, headers: ["Content-Type": "text/html"], body: Data("<html>key \(k)</html>".utf8))),
            (
                "401 json",
                .json(#"{"quandl_error":{"code":"QEAx01","message":"We could not recognize your API key: '\#(k)'"}}"#, status: 401)
            ),
            ("400 plain", .respond(status: 400, headers: ["Content-Type": "text/plain"], body: Data("bad key \(k)".utf8))),
            ("echo header", .respond(status: 403, headers: ["X-Key": k], body: Data("x".utf8))),  // not retried: fast
        ]
    }()

    // Serialized: 52 concurrent in-process fetches, each with its own server, would only load the
    // machine (servers outliving their lifetime, ports reused by other tests' servers).
    @Test(.serialized, arguments: Array(0 ..< 13), [[], ["--format", "csv"], ["--debug"], ["--debug", "--format", "csv"]])
    func anEchoedKeyNeverReachesTheTerminal(index: Int, extra: [String]) async throws {
        let (name, action) = Self.responses[index]
        let scratch = try Scratch()
        try await LoopbackHTTPServer.run({ _ in action }) { server in
            let run = await runOffPool(
                fetchArguments(server, scratch, ["AAPL"] + extra), in: scratch,
                environment: scratch.environment(["NASDAQ_DATA_LINK_API_KEY": fetchTestKey]))
            #expect(run.status == 1, "\(name): \(run.standardError)")
            #expect(!run.errorLines.isEmpty, "\(name)")
            for fragment in Self.fragments {
                #expect(
                    !run.standardError.contains(fragment) && !run.standardOutput.contains(fragment),
                    "\(name) \(extra): '\(fragment)' in \(run.standardError)")
            }
            #expect(server.requests.first?.header("X-Api-Token") == fetchTestKey, "the key was sent")
        }
    }

    @Test func theKeyFromAKeyFileIsRedactedToo() async throws {
        let scratch = try Scratch()
        try scratch.write(fetchTestKey + "\n", to: "k.txt")
        try await LoopbackHTTPServer.run({ _ in
            .json(#"{"dataset_data":{"column_names":["Date","Close"],"data":[["\#(fetchTestKey)",1]]}}"#)
        }) { server in
            let run = await runOffPool(fetchArguments(server, scratch, ["AAPL", "--api-key-file", scratch.file("k.txt")]), in: scratch)
            #expect(run.status == 1)
            for fragment in Self.fragments { #expect(!run.standardError.contains(fragment), "\(run.standardError)") }
        }
    }

    /// `import` of a saved response that echoes the key: standard error passes through the
    /// configured key's redaction, which also removes a start of it (6+ characters) that a
    /// decoder's 32-byte excerpt cut off.
    @Test(arguments: [0, 10, 20, 24, 26])
    func importOfAFileEchoingTheKeyNeverShowsIt(padding: Int) async throws {
        let scratch = try Scratch()
        let filler = String(repeating: "x", count: padding)
        try scratch.write("Date,Close\n2014-01-02,\(filler)\(fetchTestKey)\n", to: "WIKI-AAPL.csv")
        let run = await runOffPool(
            ["import", scratch.file("WIKI-AAPL.csv"), "--snapshot", scratch.snapshot], in: scratch,
            environment: scratch.environment(["NASDAQ_DATA_LINK_API_KEY": fetchTestKey]))
        #expect(run.status == 1)
        #expect(run.errorLines.first?.contains("expected a number") == true, "\(run.standardError)")
        #expect(!run.standardError.contains(fetchTestKey.prefix(6)), "\(run.standardError)")
    }

    @Test func fetchRefusesToSendTheKeyOverPlainHTTPToARemoteHost() async throws {
        let scratch = try Scratch()
        let run = await runOffPool(
            ["fetch", "AAPL", "--base-url", "http://data.nasdaq.example", "--snapshot", scratch.snapshot], in: scratch,
            environment: scratch.environment(["NASDAQ_DATA_LINK_API_KEY": fetchTestKey]))
        #expect(run.status == 1)
        #expect(
            run.errorLines.first?.contains("refusing to send the API key in clear text over plain HTTP to data.nasdaq.example") == true,
            "\(run.standardError)")
        #expect(run.standardError.contains("hint: use an https:// --base-url"))
        #expect(scratch.bytes("quotes.snapshot") == nil)
    }

    @Test func debugNeverPrintsBaseURLCredentials() async throws {
        let scratch = try Scratch()
        try await LoopbackHTTPServer.run({ _ in .respond(status: 403, headers: [:], body: Data("no".utf8)) }) { server in
            let base = server.baseURL.absoluteString.replacingOccurrences(of: "http://", with: "http://bob:pa55word-xyz@")
            let run = await runOffPool(
                ["fetch", "AAPL", "--debug", "--base-url", base, "--snapshot", scratch.snapshot], in: scratch,
                environment: scratch.environment(["NASDAQ_DATA_LINK_API_KEY": fetchTestKey]))
            #expect(run.status == 1)
            #expect(run.standardError.contains("debug: "), "the log ran")
            #expect(!run.standardError.contains("pa55word-xyz") && !run.standardError.contains("bob:"), "\(run.standardError)")
            let bad = await runOffPool(
                ["fetch", "AAPL", "--base-url", "ftp://bob:pa55word-xyz@host/", "--snapshot", scratch.snapshot],
                in: scratch)
            #expect(bad.status == 2 && !bad.standardError.contains("pa55word-xyz"), "\(bad.standardError)")
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func timeoutBoundsATricklingResponse() async throws {
        let scratch = try Scratch()
        let body = Data(repeating: UInt8(ascii: " "), count: 2_000)
        try await LoopbackHTTPServer.run({ _ in
            .drip(status: 200, headers: ["Content-Type": "application/json"], body: body, pieces: 2_000, interval: 0.05)
        }) { server in
            let run = await runOffPool(fetchArguments(server, scratch, ["AAPL", "--timeout", "1"]), in: scratch)
            #expect(run.status == 1)
            #expect(run.errorLines.first?.contains("not complete within 1 s") == true, "\(run.standardError)")
            #expect(run.standardError.contains("hint: --timeout SECONDS"), "\(run.standardError)")
        }
    }
}
