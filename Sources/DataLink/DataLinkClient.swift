import Colonnade
import DataLinkFormat
import Foundation

/// A Nasdaq Data Link (Quandl) client: builds requests, sends them with retries, and hands
/// back whole response bodies or typed errors. It does not decode quote data.
///
/// ```swift
/// let client = DataLinkClient(configuration: DataLinkConfiguration(transport: .urlSession, apiKey: key))  // DataLinkURLSession
/// let csv = try await client.datasetData(database: "WIKI", ticker: "AAPL",
///                                        from: Day(2014, 1, 1), to: Day(2014, 12, 31),
///                                        format: .csv)
/// try await client.tablePages("WIKI/PRICES", tickers: ["AAPL", "BRK.B"]) { page in
///     try decode(page.body)                         // caller's decoder
///     return try DataLinkCursor.nextCursorID(inJSON: page.body)   // DataLinkFormat
/// }
/// ```
///
/// The key travels only in the `X-Api-Token` header, and only over HTTPS — or plain HTTP to a
/// loopback address (`localhost`, `127.0.0.0/8`, `::1`; for tests): a key with an `http://` base
/// URL elsewhere fails with ``DataLinkError/insecureTransport(_:host:)`` before anything is sent.
/// Response bodies and headers come back with the key overwritten (servers echo it), and
/// `user:password@` of a base URL is never shown. Every request also sends `Accept` and
/// `User-Agent: colonnade/<version>`. A client is a value: copies share nothing but their
/// configuration, and there is no global instance.
public struct DataLinkClient: Sendable {
    /// `colonnade/<version>`, from `Colonnade.version`.
    public static let userAgent = "colonnade/\(Colonnade.version)"
    /// The header that carries the key.
    public static let keyHeader = "X-Api-Token"
    /// Longest URL the table batching aims for (the API's own clients switch to POST above 6 300).
    public static let defaultMaxURLLength = 4_000

    /// How the client connects, authenticates, retries and limits.
    public let configuration: DataLinkConfiguration
    let redactor: Redactor

    /// A client with its configuration (no shared state: make as many as you like).
    public init(configuration: DataLinkConfiguration) {
        self.configuration = configuration
        redactor = Redactor(key: configuration.apiKey, baseURL: configuration.baseURL)
    }

    // MARK: Time series

    /// `GET {base}/api/v3/datasets/{database}/{code}/data.{json|csv}` for one ticker.
    ///
    /// - Parameters:
    ///   - database: e.g. `WIKI`.
    ///   - ticker: an exchange ticker; sent as its API code (`BRK.B` → `BRK_B`, see `DataLinkSymbols.code(fromSymbol:)`).
    ///   - from: `start_date`, inclusive; nil for the dataset's first day.
    ///   - to: `end_date`, inclusive; nil for its last day.
    ///   - format: `.json` (a `dataset_data` object) or `.csv`.
    ///   - options: `order` (ascending by default), `column_index`, `collapse`, `transform`, `limit`.
    /// - Returns: the response; its body is JSON or CSV as asked (checked by content type).
    /// - Throws: ``DataLinkError``, after retries where the policy allows them.
    public func datasetData(
        database: String,
        ticker: String,
        from: Day? = nil,
        to: Day? = nil,
        format: ResponseFormat = .json,
        options: DatasetOptions = DatasetOptions()
    ) async throws(DataLinkError) -> DataLinkResponse {
        try await perform(datasetRequest(database: database, ticker: ticker, from: from, to: to, format: format, options: options))
    }

    func datasetRequest(
        database: String, ticker: String, from: Day?, to: Day?, format: ResponseFormat, options: DatasetOptions
    ) throws(DataLinkError) -> PreparedRequest {
        let code = DataLinkSymbols.code(fromSymbol: ticker)
        try RequestBuilder.validate(database, as: "database code")
        try RequestBuilder.validate(code, as: "dataset code")
        let query = try RequestBuilder.datasetQuery(from: from, to: to, options: options)
        let url = try RequestBuilder.url(
            base: configuration.baseURL, segments: ["datasets", database, code, "data"],
            suffix: ".\(format.rawValue)", query: query)
        return PreparedRequest(target: .dataset(database: database, code: code), url: url, format: format)
    }

    // MARK: Tables

    /// One page of `GET {base}/api/v3/datatables/{publisher}/{table}.json`.
    ///
    /// - Parameters:
    ///   - table: `PUBLISHER/TABLE`, e.g. `WIKI/PRICES`.
    ///   - tickers: exchange tickers, sent as `ticker=A,B,…` (API codes). Empty: no ticker filter.
    ///   - from: `date.gte`.
    ///   - to: `date.lte`.
    ///   - columns: `qopts.columns`, e.g. `["ticker", "date", "adj_close"]`.
    ///   - perPage: `qopts.per_page` (the API caps pages at 10 000 rows).
    ///   - cursorID: `qopts.cursor_id`, from the previous page's `meta.next_cursor_id`.
    /// - Throws: ``DataLinkError``.
    public func tablePage(
        _ table: String,
        tickers: [String],
        from: Day? = nil,
        to: Day? = nil,
        columns: [String]? = nil,
        perPage: Int? = nil,
        cursorID: String? = nil
    ) async throws(DataLinkError) -> DataLinkResponse {
        try await perform(
            tableRequest(
                table, codes: tickers.map(DataLinkSymbols.code(fromSymbol:)), from: from, to: to,
                columns: columns, perPage: perPage, cursorID: cursorID))
    }

    /// Every page of a table query, for any number of tickers.
    ///
    /// The tickers are split into batches whose URLs stay under `maxURLLength` (see
    /// ``tickerBatches(_:maxEncodedLength:)``); each batch is requested and its pages followed:
    /// `onPage` gets each page and returns its `meta.next_cursor_id` (nil when it is the last),
    /// which is sent back as `qopts.cursor_id`. Batches and pages run one after another.
    ///
    /// A server cannot keep the walk going forever: a cursor seen before stops it, and so does
    /// a batch that needs more pages than ``pageLimit(tickers:from:to:perPage:)`` allows
    /// (``DataLinkError/tooManyPages(_:limit:)``).
    ///
    /// - Parameters:
    ///   - table, tickers, from, to, columns, perPage: as for ``tablePage(_:tickers:from:to:columns:perPage:cursorID:)``.
    ///   - maxURLLength: the longest URL a batch may produce.
    ///   - onPage: decodes a page (typically with the caller's own decoder, or
    ///     `DataLinkCursor.nextCursorID(inJSON:)` of DataLinkFormat) and returns the next cursor id; errors it throws stop the walk.
    /// - Throws: ``DataLinkError`` from the requests, or whatever `onPage` throws.
    public func tablePages(
        _ table: String,
        tickers: [String],
        from: Day? = nil,
        to: Day? = nil,
        columns: [String]? = nil,
        perPage: Int? = nil,
        maxURLLength: Int = DataLinkClient.defaultMaxURLLength,
        onPage: (DataLinkResponse) async throws -> String?
    ) async throws {
        let codes = tickers.map(DataLinkSymbols.code(fromSymbol:))
        // The fixed part of the URL, measured once with no tickers and a long cursor id.
        let fixed = try tableRequest(
            table, codes: [], from: from, to: to, columns: columns, perPage: perPage,
            cursorID: String(repeating: "x", count: 64)
        ).url.absoluteString.utf8.count
        let batches: [[String]] =
            codes.isEmpty
            ? [[]]
            : Self.tickerBatches(codes, maxEncodedLength: max(maxURLLength - fixed - 8, 64))
        for batch in batches {
            var cursor: String? = nil
            var seen: Set<String> = []
            let limit = Self.pageLimit(tickers: batch.count, from: from, to: to, perPage: perPage)
            var pages = 0
            repeat {
                let request = try tableRequest(
                    table, codes: batch, from: from, to: to, columns: columns,
                    perPage: perPage, cursorID: cursor)
                guard pages < limit else { throw DataLinkError.tooManyPages(request.target, limit: limit) }
                pages += 1
                let page = try await perform(request)
                cursor = try await onPage(page)
                if let next = cursor, !seen.insert(next).inserted {
                    throw DataLinkError.unexpectedResponse(
                        request.target, status: page.status, contentType: page.contentType,
                        bodyPrefix: "cursor id \(redactor.oneLine(next, limit: 80)) repeated; pagination stopped")
                }
            } while cursor != nil
        }
    }

    /// Rows per page when `qopts.per_page` is not given: the Tables API's default (and most).
    public static let defaultRowsPerPage = 10_000
    /// The most pages ``tablePages(_:tickers:from:to:columns:perPage:maxURLLength:onPage:)``
    /// follows for one batch when its size cannot be bounded (no tickers, or an open date range):
    /// 10,000 pages of 10,000 rows, seven times all of WIKI/PRICES (about 1,500 pages).
    public static let maximumPages = 10_000

    /// The most pages a table query can need: `ceil(tickers × weekdays in from…to / rows per
    /// page) + 2` when tickers and both dates are known (a daily table has at most one row per
    /// ticker and weekday; two pages of slack for a last, empty page), else ``maximumPages``.
    /// - Complexity: O(1).
    public static func pageLimit(tickers: Int, from: Day?, to: Day?, perPage: Int?) -> Int {
        guard tickers > 0, let from, let to else { return maximumPages }
        let rowsPerPage = max(1, perPage ?? defaultRowsPerPage)
        let rows = tickers.multipliedReportingOverflow(by: weekdays(from: from, to: to))
        guard !rows.overflow else { return maximumPages }
        return min(maximumPages, (rows.partialValue + rowsPerPage - 1) / rowsPerPage + 2)
    }

    /// Monday-to-Friday days from `from` through `to` (0 when `to` is before `from`).
    /// - Complexity: O(1).
    static func weekdays(from: Day, to: Day) -> Int {
        let first = Int(from.daysSinceEpoch), last = Int(to.daysSinceEpoch)
        guard last >= first else { return 0 }
        // Weekdays in [0, n) counted from 1970-01-01, a Thursday (Monday-based index 3).
        func before(_ n: Int) -> Int {
            let weeks = n >= 0 ? n / 7 : (n - 6) / 7
            var count = weeks * 5
            for d in weeks * 7 ..< n where ((d % 7) + 7 + 3) % 7 < 5 { count += 1 }
            return count
        }
        return before(last + 1) - before(first)
    }

    /// Splits ticker codes into groups whose comma-joined, percent-encoded form stays within
    /// `maxEncodedLength` characters (a single code longer than that gets a batch of its own).
    /// - Complexity: O(n) in the total length of the codes.
    public static func tickerBatches(_ codes: [String], maxEncodedLength: Int) -> [[String]] {
        var batches: [[String]] = []
        var current: [String] = []
        var length = 0
        for code in codes {
            let cost = RequestBuilder.percentEncode(code).utf8.count + (current.isEmpty ? 0 : 3)  // "%2C"
            if !current.isEmpty, length + cost > maxEncodedLength {
                batches.append(current)
                current = []
                length = 0
            }
            length += current.isEmpty ? RequestBuilder.percentEncode(code).utf8.count : cost
            current.append(code)
        }
        if !current.isEmpty { batches.append(current) }
        return batches
    }

    func tableRequest(
        _ table: String, codes: [String], from: Day?, to: Day?, columns: [String]?, perPage: Int?, cursorID: String?,
        export: Bool = false
    ) throws(DataLinkError) -> PreparedRequest {
        let (publisher, name) = try RequestBuilder.tableParts(table)
        for code in codes { try RequestBuilder.validate(code, as: "ticker") }
        if let from, let to, to < from { throw .invalidRequest("end date \(to) is before start date \(from)") }
        var query: [(String, String)] = []
        if !codes.isEmpty { query.append(("ticker", codes.joined(separator: ","))) }
        if let from { query.append(("date.gte", try RequestBuilder.dateValue(from))) }
        if let to { query.append(("date.lte", try RequestBuilder.dateValue(to))) }
        if let columns, !columns.isEmpty {
            for column in columns { try RequestBuilder.validate(column, as: "column name") }
            query.append(("qopts.columns", columns.joined(separator: ",")))
        }
        if let perPage {
            guard perPage > 0 else { throw .invalidRequest("qopts.per_page \(perPage) is not positive") }
            query.append(("qopts.per_page", String(perPage)))
        }
        if let cursorID { query.append(("qopts.cursor_id", cursorID)) }
        if export { query.append(("qopts.export", "true")) }
        let url = try RequestBuilder.url(
            base: configuration.baseURL, segments: ["datatables", publisher, name], suffix: ".json", query: query)
        return PreparedRequest(target: .table("\(publisher)/\(name)", tickers: codes), url: url, format: .json, export: export)
    }

    // MARK: Many requests

    /// Runs `operation` for every item with at most `maxConcurrentRequests` in flight
    /// (default: the configuration's ``DataLinkConfiguration/effectiveMaxConcurrentRequests``).
    ///
    /// The bound is per call: two `fetchMany` calls running at once on the same client may
    /// together exceed it. A task group holds at most that many child tasks, so no request
    /// waits on a queue while holding a connection.
    ///
    /// One item's failure does not stop the others; results come back in the order of `items`.
    /// Cancelling the calling task cancels every running operation (and their HTTP requests)
    /// and starts no new ones.
    ///
    /// ```swift
    /// let results = try await client.fetchMany(["AAPL", "MSFT"]) { ticker in
    ///     try await client.datasetData(database: "WIKI", ticker: ticker, format: .csv)
    /// }
    /// ```
    /// - Throws: ``DataLinkError/cancelled(_:)`` when the calling task was cancelled.
    public func fetchMany<Item: Sendable, Output: Sendable>(
        _ items: [Item],
        maxConcurrentRequests: Int? = nil,
        _ operation: @escaping @Sendable (Item) async throws -> Output
    ) async throws(DataLinkError) -> [Result<Output, any Error>] {
        let limit = max(1, maxConcurrentRequests ?? configuration.effectiveMaxConcurrentRequests)
        var results = [Result<Output, any Error>?](repeating: nil, count: items.count)
        await withTaskGroup(of: (Int, Result<Output, any Error>).self) { group in
            var next = 0
            while next < items.count, next < limit {
                let index = next
                group.addTask { (index, await Self.capture { try await operation(items[index]) }) }
                next += 1
            }
            while let (index, result) = await group.next() {
                results[index] = result
                if next < items.count, !Task.isCancelled {
                    let index = next
                    group.addTask { (index, await Self.capture { try await operation(items[index]) }) }
                    next += 1
                }
            }
        }
        if Task.isCancelled { throw .cancelled(nil) }
        return results.map { $0 ?? .failure(DataLinkError.cancelled(nil)) }
    }

    private static func capture<Output>(_ body: () async throws -> Output) async -> Result<Output, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }
}
