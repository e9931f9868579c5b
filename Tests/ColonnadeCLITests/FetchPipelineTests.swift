import Colonnade
import DataLink
import DataLinkURLSession
import DataLinkFormat
@testable import ColonnadeCLI
@testable import ColonnadeIngest
import ColonnadeTestSupport
import Foundation
import Synchronization
import Testing

/// `fetch` decodes a response on another thread while the next one downloads (one request in
/// flight at a time, as a free key allows). Against the loopback server:
///
/// - the overlap itself, as an ordering that a serial fetch cannot produce: the decode of
///   response 1 is held until the server has received request 2 (a serial fetch sends request 2
///   only after decoding response 1, so it would wait out the gate and fail);
/// - the same snapshot bytes as decoding every response in turn (the obviously-correct serial
///   reference, run here with the engine's decoder and merge), for tickers and for pages;
/// - the first error in request order wins, and the snapshot stays as it was;
/// - Ctrl-C with a response decoded and the next one hanging ends cleanly.
@Suite struct FetchPipelineTests {
    /// An append-only log shared by the server's threads, the decoding threads and the test.
    final class EventLog: Sendable {
        private let entries = Mutex<[String]>([])
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
        func index(of entry: String) -> Int? { all.firstIndex(of: entry) }
    }

    /// A one-shot signal with a bounded wait: the bound only limits how long a broken (serial)
    /// fetch holds the test up; a passing run never waits for it.
    final class Gate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        func open() { semaphore.signal() }
        func wait() -> Bool { semaphore.wait(timeout: .now() + 30) == .success }
    }

    static func client(_ server: LoopbackHTTPServer, concurrency: Int = 1) -> DataLinkClient {
        DataLinkClient(
            configuration: DataLinkConfiguration(
                transport: .urlSession, baseURL: server.baseURL, apiKey: APIKey(fetchTestKey)!,
                maxConcurrentRequests: concurrency))
    }

    static func silentProgress(_ total: Int) -> @Sendable (FetchProgress) -> Void {
        let progress = ColonnadeCLI.Progress(enabled: false, total: total, writer: MemoryOutputWriter())
        return { progress.advance(rows: $0.rows, bytes: $0.bytes, tickers: $0.tickers) }
    }

    /// Events that hold decode 0 until `gate` opens, and log every start and end.
    static func holdingFirstDecode(until gate: Gate, log: EventLog) -> @Sendable (DecodeAhead.Event) -> Void {
        { event in
            switch event {
            case .started(let n):
                log.add("decode \(n) started")
                if n == 0 && !gate.wait() { log.add("decode 0 gave up waiting for request 2") }
            case .finished(let n):
                log.add("decode \(n) finished")
            }
        }
    }

    // MARK: Overlap

    @Test func aTickersResponseDecodesWhileTheNextTickerDownloads() async throws {
        let bodies = QuoteBodies(tickers: 4, days: 200)
        let log = EventLog(), gate = Gate()
        let handler: LoopbackHTTPServer.Handler = { request in
            log.add("request \(request.sequenceNumber + 1)")
            if request.sequenceNumber == 1 { gate.open() }
            return bodies.serve(request)
        }
        try await LoopbackHTTPServer.run(handler) { server in
            let plan = FetchPlan(
                symbols: bodies.symbols, database: "WIKI", table: nil, from: nil, to: nil, update: false,
                format: .json, existing: QuoteTable(), decodeDepth: 2,
                decodeEvents: Self.holdingFirstDecode(until: gate, log: log))
            let outcome = try await plan.run(client: Self.client(server), progress: Self.silentProgress(4))
            #expect(outcome.failures.isEmpty)
            // The responses went, in request order, into one set of final columns: the table one
            // per response would merge into.
            let table = try #require(outcome.tables.count == 1 ? outcome.tables[0] : nil, "\(outcome.tables.map(\.rowCount))")
            #expect(table.tickers.map(\.symbol) == bodies.symbols)
            #expect(table.tickers.map(\.rowCount) == bodies.symbols.map(bodies.rowCount))
            var each = try bodies.symbols.map { symbol in
                try bodies.datasetJSON(symbol).withUnsafeBytes { try QuoteDecoder.decode($0, ticker: symbol, source: symbol).table }
            }
            #expect(table == QuoteTable.merging(&each))
            #expect(server.maxConcurrentRequests == 1, "downloads stay one at a time")
        }
        let events = log.all
        #expect(!events.contains("decode 0 gave up waiting for request 2"), "\(events)")
        let second = try #require(log.index(of: "request 2"), "\(events)")
        let firstDecoded = try #require(log.index(of: "decode 0 finished"), "\(events)")
        let firstStarted = try #require(log.index(of: "decode 0 started"), "\(events)")
        #expect(firstStarted < second, "\(events)")
        #expect(second < firstDecoded, "response 1 was still decoding when request 2 arrived: \(events)")
        #expect(events.filter { $0.hasPrefix("request") }.count == 4)
        #expect(events.filter { $0.hasSuffix("finished") }.count == 4)
    }

    @Test func aPageDecodesWhileTheNextPageDownloads() async throws {
        let pages = TablePages(QuoteBodies(tickers: 3, days: 100).table, perPage: 70)
        #expect(pages.bodies.count == 5)
        let log = EventLog(), gate = Gate()
        let handler: LoopbackHTTPServer.Handler = { request in
            log.add("request \(request.sequenceNumber + 1)")
            if request.sequenceNumber == 1 { gate.open() }
            return pages.serve(request)
        }
        try await LoopbackHTTPServer.run(handler) { server in
            let plan = FetchPlan(
                symbols: pages.symbols, database: "WIKI", table: "WIKI/PRICES", from: nil, to: nil, update: false,
                format: .json, existing: QuoteTable(), decodeDepth: 2,
                decodeEvents: Self.holdingFirstDecode(until: gate, log: log))
            let outcome = try await plan.run(client: Self.client(server), progress: Self.silentProgress(3))
            #expect(outcome.failures.isEmpty)
            // Five pages of 70, 70, 70, 70 and 20 rows, tickers continuing across pages, in one
            // set of final columns: the table the pages decoded one by one merge into.
            let table = try #require(outcome.tables.count == 1 ? outcome.tables[0] : nil, "\(outcome.tables.map(\.rowCount))")
            #expect(table.rowCount == 300 && table.tickers.map(\.symbol) == pages.symbols)
            var each = try pages.bodies.enumerated().map { k, body in
                try body.withUnsafeBytes { try QuoteDecoder.decode($0, source: "page \(k + 1)").table }
            }
            #expect(each.map(\.rowCount) == [70, 70, 70, 70, 20])
            #expect(table == QuoteTable.merging(&each))
            #expect(server.requests.map { $0.query("qopts.cursor_id") } == [nil, "p2", "p3", "p4", "p5"])
        }
        let events = log.all
        #expect(!events.contains("decode 0 gave up waiting for request 2"), "\(events)")
        let second = try #require(log.index(of: "request 2"), "\(events)")
        let firstDecoded = try #require(log.index(of: "decode 0 finished"), "\(events)")
        #expect(second < firstDecoded, "\(events)")
    }

    // MARK: Same bytes as the serial path

    /// The serial reference: each body decoded in request order by the engine's decoder, merged
    /// and upserted into the stored table as `fetch` did before it overlapped, saved to `path`.
    static func serialReference(bodies: [(source: String, ticker: String?, body: Data)], existing: QuoteTable, path: String) throws -> Data
    {
        var tables = try bodies.map { item in
            try item.body.withUnsafeBytes { try QuoteDecoder.decode($0, ticker: item.ticker, source: item.source).table }
        }
        let incoming = QuoteTable.merging(&tables, threads: 1)
        var merged = existing
        merged.upsert(contentsOf: [incoming], threads: 1)
        try merged.save(to: path)
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    @Test(arguments: [("1", "json"), ("3", "json"), ("1", "csv")])
    func tickersGiveTheSerialSnapshotByteForByte(concurrency: String, format: String) async throws {
        let scratch = try Scratch()
        try await makeSnapshot(in: scratch, tickers: 3, days: 50)
        let existing = try QuoteTable.load(from: scratch.snapshot)
        let bodies = QuoteBodies(tickers: 12, days: 250, seed: 20_261_125)
        // Not in the table's order, so that merging has work to do.
        let symbols = Array(bodies.symbols.reversed())
        let expected = try Self.serialReference(
            bodies: symbols.map {
                ("WIKI/\($0)", FetchPlan.storedSymbol($0), format == "csv" ? bodies.datasetCSV($0) : bodies.datasetJSON($0))
            },
            existing: existing, path: scratch.file("reference.snapshot"))
        try await LoopbackHTTPServer.run(bodies.serve) { server in
            let run = await runOffPool(
                fetchArguments(server, scratch, symbols + ["--concurrency", concurrency, "--format", format]),
                in: scratch, environment: scratch.environment(["NASDAQ_DATA_LINK_API_KEY": fetchTestKey]))
            #expect(run.status == 0, "\(run.standardError)")
            #expect(server.requests.count == symbols.count)
        }
        // The fetch appended a version to the existing snapshot (a store now): the table it reads
        // as, saved, is the serial reference byte for byte.
        try QuoteTable.load(from: scratch.snapshot).save(to: scratch.file("fetched.snapshot"))
        #expect(scratch.bytes("fetched.snapshot") == expected)
    }

    @Test func pagesGiveTheSerialSnapshotByteForByte() async throws {
        let scratch = try Scratch()
        try await makeSnapshot(in: scratch, tickers: 3, days: 50)
        let existing = try QuoteTable.load(from: scratch.snapshot)
        let pages = TablePages(QuoteBodies(tickers: 9, days: 120, seed: 99).table, perPage: 101)
        let expected = try Self.serialReference(
            bodies: pages.bodies.enumerated().map { ("WIKI/PRICES page \($0.offset + 1)", nil, $0.element) },
            existing: existing, path: scratch.file("reference.snapshot"))
        try await LoopbackHTTPServer.run(pages.serve) { server in
            let run = await runOffPool(
                fetchArguments(server, scratch, ["--table", "WIKI/PRICES"] + pages.symbols),
                in: scratch, environment: scratch.environment(["NASDAQ_DATA_LINK_API_KEY": fetchTestKey]))
            #expect(run.status == 0, "\(run.standardError)")
            #expect(server.requests.count == pages.bodies.count)
        }
        // The fetch appended a version to the existing snapshot (a store now): the table it reads
        // as, saved, is the serial reference byte for byte.
        try QuoteTable.load(from: scratch.snapshot).save(to: scratch.file("fetched.snapshot"))
        #expect(scratch.bytes("fetched.snapshot") == expected)
    }

    // MARK: Errors

    /// The second ticker's body has a bad date and the fourth is unknown: both are named, in
    /// request order, and nothing is saved.
    @Test func tickerErrorsAreReportedInRequestOrderAndNothingIsSaved() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch, tickers: 3, days: 50)
        let bodies = QuoteBodies(tickers: 4, days: 100)
        let symbols = bodies.symbols
        let handler: LoopbackHTTPServer.Handler = { request in
            guard let symbol = bodies.symbol(forPath: request.path) else { return notFound }
            if symbol == symbols[1] {
                // The first row's date becomes one that does not exist.
                var text = String(decoding: bodies.datasetJSON(symbol), as: UTF8.self)
                let data = text.range(of: #""data":[[""#)!
                text.replaceSubrange(data.upperBound ..< text.index(data.upperBound, offsetBy: 10), with: "2001-02-30")
                return .json(text)
            }
            if symbol == symbols[3] { return notFound }
            return bodies.serve(request)
        }
        try await LoopbackHTTPServer.run(handler) { server in
            let run = await runOffPool(
                fetchArguments(server, scratch, symbols), in: scratch,
                environment: scratch.environment(["NASDAQ_DATA_LINK_API_KEY": fetchTestKey]))
            #expect(run.status == 1)
            let errors = run.errorLines
            #expect(errors.count == 2, "\(run.standardError)")
            #expect(errors.first?.hasPrefix("error: \(symbols[1]): WIKI/\(symbols[1]):") == true, "\(errors)")
            #expect(errors.first?.contains("expected a date YYYY-MM-DD") == true, "\(errors)")
            #expect(errors.last?.hasPrefix("error: \(symbols[3]): ") == true, "\(errors)")
            #expect(run.standardError.contains("2 of 4 tickers failed; nothing was saved"))
        }
        #expect(scratch.bytes("quotes.snapshot") == before)
    }

    /// Page 2 does not decode (a bad date) and page 3, already asked for while page 2 decoded,
    /// is refused by the server: page 2's error is the one reported, and nothing is saved.
    @Test func aBadPageBeatsALaterDownloadErrorAndNothingIsSaved() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch, tickers: 3, days: 50)
        let pages = TablePages(QuoteBodies(tickers: 3, days: 60).table, perPage: 50, badDateOnPage: 2)
        let log = EventLog(), gate = Gate()
        let handler: LoopbackHTTPServer.Handler = { request in
            log.add("request \(request.sequenceNumber + 1)")
            if request.sequenceNumber == 2 {
                gate.open()
                return .json(quandlErrorBody("QEPx04", "You do not have permission to view this table."), status: 403)
            }
            return pages.serve(request)
        }
        try await LoopbackHTTPServer.run(handler) { server in
            // In-process plan, with page 2's decode held until request 3 has arrived: the download
            // error is certain to come first, and the decode error must still win.
            let plan = FetchPlan(
                symbols: pages.symbols, database: "WIKI", table: "WIKI/PRICES", from: nil, to: nil, update: false,
                format: .json, existing: QuoteTable(), decodeDepth: 2,
                decodeEvents: { event in
                    if case .started(1) = event, !gate.wait() { log.add("gave up") }
                    if case .finished(1) = event { log.add("page 2 decoded") }
                })
            await #expect {
                try await plan.run(client: Self.client(server), progress: Self.silentProgress(3))
            } throws: { error in
                guard case ResponseError.decoding(.badDate(let position, _))? = error as? ResponseError else { return false }
                return position.source == "WIKI/PRICES page 2"
            }
            let events = log.all
            #expect(!events.contains("gave up"), "\(events)")
            let third = try #require(log.index(of: "request 3"), "\(events)")
            let decoded = try #require(log.index(of: "page 2 decoded"), "\(events)")
            #expect(third < decoded, "\(events)")

            // The command: the same error, the snapshot untouched.
            let run = await runOffPool(
                fetchArguments(server, scratch, ["--table", "WIKI/PRICES"] + pages.symbols), in: scratch,
                environment: scratch.environment(["NASDAQ_DATA_LINK_API_KEY": fetchTestKey]))
            #expect(run.status == 1)
            #expect(run.errorLines.count == 1, "\(run.standardError)")
            #expect(run.errorLines.first?.hasPrefix("error: WIKI/PRICES page 2:") == true, "\(run.standardError)")
            #expect(run.errorLines.first?.contains("expected a date YYYY-MM-DD") == true, "\(run.standardError)")
        }
        #expect(scratch.bytes("quotes.snapshot") == before)
    }

    /// Page 2 is cut short, so not even its cursor can be read: it is decoded in place for the
    /// decoder's own error, and no page after it is asked for.
    @Test func aPageWhoseCursorCannotBeReadIsDecodedInPlaceForItsError() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch, tickers: 3, days: 50)
        let pages = TablePages(QuoteBodies(tickers: 3, days: 60).table, perPage: 50)
        let handler: LoopbackHTTPServer.Handler = { request in
            guard request.query("qopts.cursor_id") == "p2" else { return pages.serve(request) }
            return .json(pages.bodies[1].prefix(300))
        }
        try await LoopbackHTTPServer.run(handler) { server in
            let run = await runOffPool(
                fetchArguments(server, scratch, ["--table", "WIKI/PRICES"] + pages.symbols), in: scratch,
                environment: scratch.environment(["NASDAQ_DATA_LINK_API_KEY": fetchTestKey]))
            #expect(run.status == 1)
            #expect(run.errorLines.count == 1, "\(run.standardError)")
            #expect(run.errorLines.first?.hasPrefix("error: WIKI/PRICES page 2:1:") == true, "\(run.standardError)")
            #expect(run.errorLines.first?.contains("input ends early") == true, "\(run.standardError)")
            #expect(server.requests.map { $0.query("qopts.cursor_id") } == [nil, "p2"])
        }
        #expect(scratch.bytes("quotes.snapshot") == before)
    }

    // MARK: Cancellation

    /// Ctrl-C after the first response arrived (so it is decoded or decoding) while the second
    /// hangs: the built process ends promptly by itself, and the snapshot is untouched.
    @Test func interruptWithAResponseDecodedAndTheNextHangingEndsCleanly() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        let bodies = QuoteBodies(tickers: 3, days: 2_000)
        let handler: LoopbackHTTPServer.Handler = { request in
            request.sequenceNumber == 0 ? bodies.serve(request) : .hang
        }
        try await LoopbackHTTPServer.run(handler) { server in
            let process = try RunningExecutable(
                fetchArguments(server, scratch, bodies.symbols),
                environment: ["HOME": scratch.path, "NASDAQ_DATA_LINK_API_KEY": fetchTestKey],
                in: URL(fileURLWithPath: scratch.path))
            #expect(await server.waitForRequests(2))
            kill(process.pid, SIGINT)
            let result = try process.finish(timeout: .seconds(30))
            #expect(!result.terminatedBySignal, "handled SIGINT rather than died of it")
            #expect(result.status == 1)
            #expect(result.standardError.contains("error: cancelled"), "\(result.standardError)")
            #expect(!result.standardError.contains(fetchTestKey))
            #expect(await server.waitUntilIdle(timeout: .seconds(30)))
        }
        #expect(scratch.bytes("quotes.snapshot") == before)
    }
}

/// A seeded table served as WIKI/PRICES-like datatable pages (`ticker,date,open,close`) of
/// `perPage` rows; page k > 1 is asked for with cursor `pk`. Optionally one page holds a date
/// that does not exist (2001-02-30) in its first row.
struct TablePages: Sendable {
    let bodies: [Data]
    let symbols: [String]

    init(_ table: QuoteTable, perPage: Int, badDateOnPage bad: Int? = nil) {
        func values(_ name: String) -> Column<Double> {
            guard case .float64(let column)? = table.column(named: name) else { preconditionFailure("no column \(name)") }
            return column
        }
        let open = values("Open"), close = values("Close")
        var rows: [(ticker: String, date: String, open: Double, close: Double)] = []
        for entry in table.tickers {
            for row in entry.rows {
                rows.append(
                    (
                        DataLinkSymbols.code(fromSymbol: entry.symbol), Day(daysSinceEpoch: table.dates[row]).description,
                        open.value(at: row) ?? 0, close.value(at: row) ?? 0
                    ))
            }
        }
        let pageCount = (rows.count + perPage - 1) / perPage
        bodies = (0 ..< pageCount).map { k in
            var page = Array(rows[k * perPage ..< min(rows.count, (k + 1) * perPage)])
            if k + 1 == bad { page[0].date = "2001-02-30" }
            return Data(datatablePage(page, next: k + 1 < pageCount ? "p\(k + 2)" : nil).utf8)
        }
        symbols = table.tickers.map(\.symbol)
    }

    func serve(_ request: LoopbackHTTPRequest) -> LoopbackHTTPAction {
        guard request.path == "/api/v3/datatables/WIKI/PRICES.json" else { return notFound }
        let cursor = request.query("qopts.cursor_id")
        guard let page = cursor.map({ Int($0.dropFirst()) }) ?? 1, page >= 1, page <= bodies.count else {
            return .json(quandlErrorBody("QESx06", "Invalid cursor id"), status: 400)
        }
        return .json(bodies[page - 1])
    }
}
