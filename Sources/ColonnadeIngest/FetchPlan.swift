import Colonnade
import DataLink
import DataLinkFormat
import Foundation

/// What to fetch and how.
package struct FetchPlan: Sendable {
    package let symbols: [String]
    package let database: String
    package let table: String?
    package let from: Int32?
    package let to: Int32?
    package let update: Bool
    package let format: ResponseFormat
    package let existing: QuoteTable
    /// `qopts.columns` for the Tables API; nil for all.
    package var columns: [String]? = nil
    /// How many responses may be decoding (or waiting to) while the next downloads.
    package var decodeDepth = QueryOptions.availableCores
    /// Told as each response's decode starts and ends, numbered in request order (tests).
    package var decodeEvents: (@Sendable (DecodeAhead.Event) -> Void)? = nil

    package init(
        symbols: [String], database: String, table: String?, from: Int32?, to: Int32?, update: Bool,
        format: ResponseFormat, existing: QuoteTable, columns: [String]? = nil,
        decodeDepth: Int = QueryOptions.availableCores, decodeEvents: (@Sendable (DecodeAhead.Event) -> Void)? = nil
    ) {
        self.decodeDepth = decodeDepth
        self.decodeEvents = decodeEvents
        self.symbols = symbols
        self.database = database
        self.table = table
        self.from = from
        self.to = to
        self.update = update
        self.format = format
        self.existing = existing
        self.columns = columns
    }

    package struct Outcome: Sendable {
        package var tables: [QuoteTable] = []
        package var failures: [(symbol: String, error: any Error)] = []
    }

    /// The symbol `symbol`'s rows are stored under: the decoder's spelling of its API code
    /// (`brk_b` and `BRK.B` are both sent as `BRK_B`, and rows come back as `BRK.B`).
    package static func storedSymbol(_ symbol: String) -> String {
        DataLinkSymbols.symbol(fromCode: DataLinkSymbols.code(fromSymbol: symbol))
    }

    /// The newest stored day of `symbol` when --update applies to it.
    private func newestStored(_ symbol: String) -> Int32? {
        guard update, let entry = existing.ticker(Self.storedSymbol(symbol)), entry.rowCount > 0 else { return nil }
        return existing.dates[entry.firstRow + entry.rowCount - 1]
    }

    /// The first day to ask for: with --update, the newest stored day itself. That one day is
    /// fetched again so the vendor's adjusted values for it can be compared with the stored ones:
    /// a vendor that restated the history after a split or dividend answers differently there
    /// (docs/ADJUSTMENTS.md, "Updates"; `QuoteStore.restatements`).
    package func start(for symbol: String) -> Int32? {
        guard let newest = newestStored(symbol) else { return from }
        return max(newest, from ?? newest)
    }

    /// Whether there is anything to ask for: not when the newest stored day already reaches
    /// `--to`, nor when it is the last day a table can hold (no day after it could be new).
    package func needsRequest(for symbol: String) -> Bool {
        if let newest = newestStored(symbol) {
            if newest >= Day.storableDayNumbers.upperBound { return false }
            if let to, newest + 1 > to { return false }
            return true
        }
        guard let start = start(for: symbol), let to else { return true }
        return start <= to
    }

    package static func date(_ day: Int32?) -> Day? {
        day.map(Day.init(daysSinceEpoch:))
    }

    package func run(client: DataLinkClient, progress: @escaping @Sendable (FetchProgress) -> Void) async throws -> Outcome {
        if let table { return try await runTable(table, client: client, progress: progress) }
        // Each operation downloads, hands the body to a decoding thread and returns, so the next
        // request goes out while this response decodes (ARCHITECTURE.md, Fetching).
        // The rows stay in the decoders' buffers and go, in request order, straight into the
        // final columns (`IncomingRows`).
        let ahead = DecodeAhead(depth: decodeDepth, events: decodeEvents)
        let results = try await client.fetchMany(symbols) { symbol -> DecodeAhead.Pending<DecodedRows?> in
            guard needsRequest(for: symbol) else {
                progress(FetchProgress(rows: 0, bytes: 0, tickers: 1))
                return DecodeAhead.Pending(.success(nil))
            }
            let response = try await client.datasetData(
                database: database, ticker: symbol, from: Self.date(start(for: symbol)),
                to: Self.date(to), format: format)
            let stored = Self.storedSymbol(symbol), source = "\(database)/\(symbol)"
            return await ahead.decode {
                let rows = try response.body.withUnsafeBytes { bytes in
                    try QuoteDecoder.decodeRows(bytes, ticker: stored, source: source)
                }
                progress(FetchProgress(rows: rows.rowCount, bytes: response.body.count, tickers: 1))
                return rows
            }
        }
        var outcome = Outcome()
        let incoming = IncomingRows()
        for (symbol, result) in zip(symbols, results) {
            switch result {
            case .success(let pending):
                switch await pending.value {
                case .success(let rows): if let rows { incoming.add(rows, source: "\(database)/\(symbol)") }
                case .failure(let e): outcome.failures.append((symbol, e))
                }
            case .failure(let e): outcome.failures.append((symbol, e))
            }
        }
        outcome.tables = incoming.tables()
        return outcome
    }

    /// Thrown from the page callback to stop following cursors once an earlier page failed to
    /// decode; that page's error is then reported instead.
    private struct EarlierPageFailed: Error {}

    /// The Tables API: many tickers per request, following cursors; unknown tickers return no rows.
    ///
    /// Each page's cursor is read by a structural scan (`DataLinkCursor`), the next page is asked
    /// for at once, and the page decodes on another thread meanwhile. The result and the errors
    /// are those of decoding page after page: the first page (in request order) that failed to
    /// decode wins over anything later, a download error included.
    private func runTable(
        _ table: String, client: DataLinkClient, progress: @escaping @Sendable (FetchProgress) -> Void
    ) async throws -> Outcome {
        let pending = symbols.filter(needsRequest(for:))
        guard !pending.isEmpty else {
            progress(FetchProgress(rows: 0, bytes: 0, tickers: symbols.count))
            return Outcome()
        }
        let earliest = pending.map { start(for: $0) }
        let from = earliest.contains(where: { $0 == nil }) ? nil : earliest.compactMap { $0 }.min()
        let ahead = DecodeAhead(depth: decodeDepth, events: decodeEvents)
        let target = DataLinkTarget.table(table, tickers: pending.map(DataLinkSymbols.code(fromSymbol:)))
        @Sendable func decodePage(_ response: DataLinkResponse, source: String, number: Int) throws -> DecodedResponse {
            let decoded = try response.body.withUnsafeBytes { bytes in try QuoteDecoder.decodeKeepingRows(bytes, source: source) }
            progress(FetchProgress(rows: decoded.rows?.rowCount ?? 0, bytes: response.body.count, tickers: 0))
            // A page with no rows has nothing after it: a cursor on it would be followed forever
            // by a server that keeps handing out empty pages.
            if (decoded.rows?.rowCount ?? 0) == 0, decoded.nextCursorID != nil {
                throw DataLinkError.emptyPageWithCursor(target, page: number)
            }
            return decoded
        }
        var pages: [DecodeAhead.Pending<DecodedResponse>] = []
        var walkError: (any Error)?
        do {
            try await client.tablePages(table, tickers: pending, from: Self.date(from), to: Self.date(to), columns: columns) { response in
                if pages.contains(where: { if case .failure = $0.finished { true } else { false } }) { throw EarlierPageFailed() }
                let number = pages.count + 1
                let source = "\(table) page \(number)"
                if let cursor = try? DataLinkCursor.nextCursorID(inJSON: response.body, source: source) {
                    pages.append(await ahead.decode { try decodePage(response, source: source, number: number) })
                    return cursor
                }
                // Not a page the cursor scan reads: decode it here, for the decoder's own answer.
                let result = Result { try decodePage(response, source: source, number: number) }
                pages.append(DecodeAhead.Pending(result))
                guard case .success(let decoded) = result else { throw EarlierPageFailed() }
                return decoded.nextCursorID
            }
        } catch {
            walkError = error
        }
        let incoming = IncomingRows()
        for (k, page) in pages.enumerated() {
            if let rows = try await page.value.get().rows { incoming.add(rows, source: "\(table) page \(k + 1)") }
        }
        if let walkError {
            guard !(walkError is EarlierPageFailed) else { throw IngestFailure("a page failed to decode") }
            throw walkError
        }
        let tables = incoming.tables()
        var outcome = Outcome(tables: tables)
        let returned = Set(tables.flatMap { $0.tickers.filter { $0.rowCount > 0 }.map(\.symbol) })
        for symbol in pending {
            let stored = Self.storedSymbol(symbol)
            guard !returned.contains(stored), !(update && existing.ticker(stored) != nil) else { continue }
            outcome.failures.append(
                (symbol, IngestFailure("\(table) returned no rows for \(symbol) (unknown ticker, or no data in the range)")))
        }
        progress(FetchProgress(rows: 0, bytes: 0, tickers: symbols.count))
        return outcome
    }
}
