import ColonnadeTestSupport
@testable import DataLink
import Foundation
import Synchronization
import Testing

/// How `downloadTableExport` waits for an export: a growing interval capped at
/// `maximumInterval`, a `Retry-After` honoured instead, the wait cut to what is left of the
/// timeout, and a progress event before every wait (the CLI's "waiting for the export" line).
@Suite struct ExportPollingTests {
    static let zip = Data([0x50, 0x4B, 0x05, 0x06] + [UInt8](repeating: 0, count: 18))  // an empty zip

    static func status(_ status: String, link: String?) -> LoopbackHTTPAction {
        let linkJSON = link.map { #""\#($0)""# } ?? "null"
        return .json(#"{"datatable_bulk_download":{"file":{"link":\#(linkJSON),"status":"\#(status)"}}}"#)
    }

    /// A path in a new temporary directory.
    static func scratchFile(_ name: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("export-polling-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent(name).path
    }

    final class Events: Sendable {
        let list = Mutex<[ExportEvent]>([])
        func append(_ e: ExportEvent) { list.withLock { $0.append(e) } }
        var waits: [(String, Duration)] {
            list.withLock { $0.compactMap { if case let .waiting(s, _, next) = $0 { (s, next) } else { nil } } }
        }
    }

    @Test func theIntervalGrowsToItsCapAndRetryAfterIsHonoured() async throws {
        let path = try Self.scratchFile("polling.zip")
        try await LoopbackHTTPServer.run({ _ in .respond(status: 200, headers: ["Content-Type": "application/zip"], body: Self.zip) }) {
            files in
            try await LoopbackHTTPServer.run({ request in
                switch request.sequenceNumber {
                case 0 ..< 7: Self.status(request.sequenceNumber % 2 == 0 ? "creating" : "regenerating", link: nil)
                case 7:
                    .respond(
                        status: 200, headers: ["Content-Type": "application/json", "Retry-After": "45"],
                        body: Data(#"{"datatable_bulk_download":{"file":{"link":null,"status":"creating"}}}"#.utf8))
                case 8: Self.status("creating", link: nil)
                default: Self.status("fresh", link: files.baseURL.absoluteString + "/export/T.zip?X-Amz-Signature=0123456789abcdef")
                }
            }) { api in
                let sleeper = SleepRecorder()
                let client = DataLinkClient(configuration: testConfiguration(api, key: "k3y-for-polling-tests-0000", sleeper: sleeper))
                let events = Events()
                let polling = ExportPolling(firstInterval: .seconds(2), maximumInterval: .seconds(30), growth: 2)
                let download = try await client.downloadTableExport(
                    "WIKI/PRICES", to: nil, to: path, polling: polling, events: { events.append($0) })
                #expect(download.statusRequests == 10)
                // 2, 4, 8, 16, then capped at 30; the 8th answer's Retry-After (45 s) is taken instead
                // of the interval; after it the interval stays at its cap.
                let expected: [Duration] = [
                    .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30), .seconds(30), .seconds(30),
                    .seconds(45), .seconds(30),
                ]
                #expect(sleeper.delays == expected)
                #expect(events.waits.map(\.1) == expected, "each wait announced before it starts")
                #expect(events.waits.map(\.0).prefix(2) == ["creating", "regenerating"])
            }
        }
    }

    /// A probe found a fresh status whose link was `file:///…` waited the whole timeout and then
    /// reported the export as "still 'fresh'". A link we may not download is refused at once,
    /// without printing it (a real link is a signed URL).
    @Test(arguments: ["file:///etc/passwd", "ftp://example.invalid/x.zip", "/relative/x.zip", nil])
    func aFreshStatusWithALinkWeMayNotDownloadIsRefusedAtOnce(link: String?) async throws {
        let path = try Self.scratchFile("link.zip")
        try await LoopbackHTTPServer.run({ _ in Self.status("fresh", link: link) }) { api in
            let sleeper = SleepRecorder()
            let client = DataLinkClient(configuration: testConfiguration(api, key: "k3y-for-polling-tests-0000", sleeper: sleeper))
            let polling = ExportPolling(firstInterval: .seconds(10), timeout: .seconds(3600))
            let error = await dataLinkError { try await client.downloadTableExport("WIKI/PRICES", to: nil, to: path, polling: polling) }
            guard case .unexpectedResponse? = error else {
                Issue.record("expected unexpectedResponse, got \(String(describing: error))")
                return
            }
            let text = "\(error!)"
            #expect(text.contains("the export is fresh, but its file.link is missing or not an absolute http(s) URL"), "\(text)")
            if let link { #expect(!text.contains(link), "the link is not printed") }
            #expect(sleeper.delays.isEmpty, "no waiting: \(sleeper.delays)")
            #expect(api.requests.count == 1)
        }
    }

    @Test func theLastWaitIsCutToTheTimeout() async throws {
        let path = try Self.scratchFile("timeout.zip")
        try await LoopbackHTTPServer.run({ _ in Self.status("creating", link: nil) }) { api in
            // A sleep that lets time pass for real would make the test slow: this one only records,
            // so the timeout is reached by the requests' own time; use a tiny timeout.
            let sleeper = SleepRecorder()
            let client = DataLinkClient(configuration: testConfiguration(api, key: "k3y-for-polling-tests-0000", sleeper: sleeper))
            let polling = ExportPolling(firstInterval: .seconds(10), timeout: .milliseconds(1))
            let error = await dataLinkError { try await client.downloadTableExport("WIKI/PRICES", to: nil, to: path, polling: polling) }
            guard case .exportNotReady(_, let status, _, let requests)? = error else {
                Issue.record("expected exportNotReady, got \(String(describing: error))")
                return
            }
            #expect(status == "creating")
            #expect(requests >= 1)
            #expect(sleeper.delays.allSatisfy { $0 <= .milliseconds(1) }, "never waits past the timeout: \(sleeper.delays)")
        }
    }

    @Test func theDefaultsAreTheIssuesNumbers() {
        let polling = ExportPolling()
        #expect(polling.maximumInterval == .seconds(30))
        #expect(polling.timeout == .seconds(30 * 60))
        var interval = polling.firstInterval
        var steps = 0
        while interval < polling.maximumInterval {
            let next = polling.next(after: interval)
            #expect(next > interval, "grows")
            interval = next
            steps += 1
        }
        #expect(interval == .seconds(30) && steps < 10, "reaches the cap and stays there")
        #expect(polling.next(after: .seconds(30)) == .seconds(30))
    }
}
