import Colonnade
import DataLinkFormat
@testable import ColonnadeCLI
import ColonnadeTestSupport
import DataLinkURLSession
import Foundation
import Synchronization
import Testing

/// Shared pieces of the `colonnade fetch` / `colonnade import` tests: a scratch directory, an
/// in-process runner that keeps the cooperative pool free, response bodies, and scripted server
/// state.

/// A distinctive fake key: any appearance of it in captured output is a leak.
let fetchTestKey = "sk-TEST-4c2b1a"

/// A temporary directory, removed when released. It doubles as `$HOME` for the runs (so a real
/// `~/.nasdaq/data_link_apikey` on the machine is never read) and holds the snapshot.
final class Scratch: Sendable {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("colonnade-fetch-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }

    var snapshot: String { file("quotes.snapshot") }

    /// The bytes of `name` (nil when it does not exist).
    func bytes(_ name: String) -> Data? { FileManager.default.contents(atPath: file(name)) }

    func write(_ text: String, to name: String) throws {
        let url = URL(fileURLWithPath: file(name))
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    /// The environment for a run: `HOME` is this directory, and requests go through the built
    /// `colonnade-transfer` child process, as the real `colonnade` sends them (in process, by
    /// URLSession, when it is not found); nothing else unless given.
    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = ["HOME": path]
        environment[FetchCommand.transferExecutableVariable] = (try? BuiltExecutable.transfer()) ?? ""
        return environment.merging(extra) { _, new in new }
    }
}

/// Runs `colonnade arguments` in-process on a thread of its own and returns what it printed.
///
/// `fetch` blocks its calling thread until the download ends (as `main` does in the real
/// process), and the download runs on the cooperative pool. Calling it from a test function
/// would block one of the pool's few threads (two on a 2-core machine) and, with two such tests
/// at once, deadlock; a dedicated thread keeps the pool free.
///
/// Every run is checked for the fake API key on both streams: it must never be printed.
func runOffPool(
    _ arguments: [String], in scratch: Scratch, environment: [String: String]? = nil, tuning: TestTuning = TestTuning(),
    sourceLocation: SourceLocation = #_sourceLocation
) async -> Invocation {
    let environment = environment ?? scratch.environment()
    let directory = scratch.path
    let run: Invocation = await withCheckedContinuation { continuation in
        let thread = Thread {
            let output = MemoryOutputWriter()
            let errors = MemoryOutputWriter()
            var context = CommandContext(
                standardOutput: output, standardError: errors,
                environment: environment, currentDirectory: directory)
            context.tuning = tuning
            if context.tuning.inProcessTransport == nil { context.tuning.inProcessTransport = .urlSession }
            let status = runColonnade(arguments, context: context)
            continuation.resume(returning: Invocation(status: status, standardOutput: output.text, standardError: errors.text))
        }
        thread.name = "FetchTests.colonnade"
        thread.start()
    }
    #expect(!run.standardOutput.contains(fetchTestKey), "the API key leaked to stdout", sourceLocation: sourceLocation)
    #expect(!run.standardError.contains(fetchTestKey), "the API key leaked to stderr", sourceLocation: sourceLocation)
    return run
}

extension Invocation {
    /// Standard error's lines that start with `error:`.
    var errorLines: [String] {
        standardError.split(separator: "\n").filter { $0.hasPrefix("error:") }.map(String.init)
    }
}

/// `fetch` arguments aimed at `server`, writing `scratch`'s snapshot.
func fetchArguments(_ server: LoopbackHTTPServer, _ scratch: Scratch, _ rest: [String]) -> [String] {
    ["fetch"] + rest + ["--base-url", server.baseURL.absoluteString, "--snapshot", scratch.snapshot]
}

/// Seeded quotes the fake server serves, built with the engine's own writers.
struct QuoteBodies: Sendable {
    let table: QuoteTable

    init(tickers: Int = 6, days: Int = 30, seed: UInt64 = 11) {
        table = QuoteGenerator(tickers: tickers, days: days, seed: seed).makeTable()
    }

    /// The generated symbols: AAPL, MSFT, AMZN, GOOG, FB, FDX, …
    var symbols: [String] { table.tickers.map(\.symbol) }

    /// `{"dataset_data":…}` for `symbol`, newest first.
    func datasetJSON(_ symbol: String) -> Data {
        Data(QuoteGenerator.datasetJSON(table, ticker: tickerNumber(symbol)))
    }

    /// The time-series CSV for `symbol`, newest first.
    func datasetCSV(_ symbol: String) -> Data {
        Data(QuoteGenerator.timeSeriesCSV(table, ticker: tickerNumber(symbol)))
    }

    func rowCount(_ symbol: String) -> Int { table.tickers[tickerNumber(symbol)].rowCount }

    private func tickerNumber(_ symbol: String) -> Int {
        guard let number = table.tickerNumber(of: symbol) else { preconditionFailure("no generated ticker \(symbol)") }
        return Int(number)
    }

    /// The symbol of the dataset path `/api/v3/datasets/WIKI/<CODE>/data.<ext>`, if generated.
    func symbol(forPath path: String) -> String? {
        let parts = path.split(separator: "/")
        guard parts.count == 6, parts[0] == "api", parts[2] == "datasets" else { return nil }
        let symbol = DataLinkSymbols.symbol(fromCode: String(parts[4]))
        return table.tickerNumber(of: symbol) == nil ? nil : symbol
    }

    /// Serves every generated dataset as JSON or CSV (by the path's extension); 404 otherwise.
    func serve(_ request: LoopbackHTTPRequest) -> LoopbackHTTPAction {
        guard let symbol = symbol(forPath: request.path) else { return notFound }
        return request.path.hasSuffix(".csv") ? .csv(datasetCSV(symbol)) : .json(datasetJSON(symbol))
    }
}

/// A `quandl_error` JSON body.
func quandlErrorBody(_ code: String, _ message: String) -> String {
    #"{"quandl_error":{"code":"\#(code)","message":"\#(message)"}}"#
}

/// The API's answer to an unknown dataset code.
let notFound = LoopbackHTTPAction.json(
    quandlErrorBody("QECx02", "You have submitted an incorrect Quandl code. Please check your Quandl codes and try again."),
    status: 404)

/// One page of a WIKI/PRICES-like datatable: `ticker,date,open,close` rows and the next cursor.
func datatablePage(_ rows: [(ticker: String, date: String, open: Double, close: Double)], next: String?) -> String {
    let data = rows.map { #"["\#($0.ticker)","\#($0.date)",\#($0.open),\#($0.close)]"# }.joined(separator: ",")
    let cursor = next.map { #""\#($0)""# } ?? "null"
    return #"{"datatable":{"data":[\#(data)],"columns":[{"name":"ticker","type":"String"},{"name":"date","type":"Date"},"#
        + #"{"name":"open","type":"BigDecimal(34,12)"},{"name":"close","type":"BigDecimal(34,12)"}]},"meta":{"next_cursor_id":\#(cursor)}}"#
}

/// How many requests each path has had, counted by the handler (for "fail, then succeed").
final class AttemptCounter: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    /// Counts `request` and returns its 1-based attempt number for its path.
    func attempt(_ request: LoopbackHTTPRequest) -> Int {
        counts.withLock { counts in
            counts[request.path, default: 0] += 1
            return counts[request.path]!
        }
    }
}

/// Creates the "before" snapshot with `colonnade generate` (AAPL, MSFT, AMZN × 50 days) and
/// returns its bytes.
@discardableResult
func makeSnapshot(in scratch: Scratch, tickers: Int = 3, days: Int = 50) async throws -> Data {
    let run = await runOffPool(
        ["generate", "--tickers", "\(tickers)", "--days", "\(days)", "--snapshot", scratch.snapshot],
        in: scratch)
    #expect(run.status == 0, "\(run.standardError)")
    return try #require(FileManager.default.contents(atPath: scratch.snapshot))
}
