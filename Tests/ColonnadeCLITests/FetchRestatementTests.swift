import Colonnade
@testable import ColonnadeCLI
import ColonnadeTestSupport
import Foundation
import Synchronization
import Testing

/// `fetch --update` against a vendor that restates adjusted history (issue #33): the loopback
/// server answers as of a day it is told, with adjusted columns computed by WIKI's rule over what
/// it knows on that day. A full fetch as of 2014-06-06, then an update as of 2014-06-30 (AAPL splits
/// 7:1 on 2014-06-09, KO pays a dividend on 2014-06-12, MSFT has nothing new) must leave the
/// snapshot equal to a fresh full fetch as of 2014-06-30, with no full history asked for again.
@Suite struct FetchRestatementTests {
    /// One ticker's raw history and events, as the vendor has it.
    struct History: Sendable {
        var days: [Int32] = []
        var ohlcv: [[Double]] = []  // open, high, low, close, volume
        var dividend: [Double] = []
        var split: [Double] = []
    }

    /// The vendor: raw histories for AAPL, KO and MSFT on every weekday of 2014-01-02 … 2014-06-30,
    /// and the day it answers as of.
    final class Vendor: Sendable {
        let histories: [String: History]
        let asOf = Mutex<Int32>(0)
        /// Multiplies every adjusted price served (a vendor's correction, when changed between fetches).
        let adjustedScale = Mutex<Double>(1)

        init() {
            var histories = [String: History]()
            let first = Day("2014-01-02")?.daysSinceEpoch ?? 0, last = Day("2014-06-30")?.daysSinceEpoch ?? 0
            let events: [String: [String: (dividend: Double, split: Double)]] = [
                "AAPL": ["2014-02-06": (3.05, 1), "2014-05-08": (3.29, 1), "2014-06-09": (0, 7)],
                "KO": ["2014-03-12": (0.305, 1), "2014-06-12": (0.305, 1)],
                "MSFT": ["2014-02-18": (0.28, 1)],
            ]
            for (symbol, start) in [("AAPL", 550.0), ("KO", 38.0), ("MSFT", 37.0)] {
                var rng = SplitMix64(seed: UInt64(symbol.utf8.reduce(0) { $0 * 31 + Int($1) }))
                var h = History(), price = start
                for d in first ... last where (Int(d) + 3).floorMod(7) < 5 {  // Monday to Friday (1970-01-01 was a Thursday)
                    let day = Day(daysSinceEpoch: d).description
                    let event = events[symbol]?[day] ?? (0, 1)
                    price = price / event.split * (1 + (rng.nextUnit() - 0.5) * 0.04)
                    let cents = { (x: Double) in (x * 100).rounded() / 100 }
                    let close = cents(price), open = cents(price * (1 + (rng.nextUnit() - 0.5) * 0.01))
                    let high = max(open, close) + cents(rng.nextUnit()), low = max(0.01, min(open, close) - cents(rng.nextUnit()))
                    h.days.append(d)
                    h.ohlcv.append([open, high, low, close, (1e6 * (1 + rng.nextUnit())).rounded()])
                    h.dividend.append(event.dividend)
                    h.split.append(event.split)
                }
                histories[symbol] = h
            }
            self.histories = histories
        }

        /// The rows the vendor serves for `symbol` as of its day within `from ... to`, with adjusted
        /// values by the rule written out here (anchored at 1 on its as-of day): each earlier row is
        /// scaled by close / ((close + dividend) · split) of every later event day, volumes by the splits.
        func rows(_ symbol: String, from: Int32?, to: Int32?) -> [(day: Int32, values: [Double])] {
            guard let h = histories[symbol] else { return [] }
            let asOf = self.asOf.withLock { $0 }, scale = adjustedScale.withLock { $0 }
            let known = h.days.indices.filter { h.days[$0] <= asOf }
            var adjusted = [[Double]](repeating: [], count: h.days.count)
            var price = scale, volume = 1.0
            for i in known.reversed() {
                let r = h.ohlcv[i]
                adjusted[i] = [r[0] * price, r[1] * price, r[2] * price, r[3] * price, r[4] * volume]
                if h.dividend[i] != 0 || h.split[i] != 1 {
                    price *= r[3] / ((r[3] + h.dividend[i]) * h.split[i])
                    volume *= h.split[i]
                }
            }
            return known.filter { h.days[$0] >= (from ?? .min) && h.days[$0] <= (to ?? .max) }
                .map { (h.days[$0], h.ohlcv[$0] + [h.dividend[$0], h.split[$0]] + adjusted[$0]) }
        }

        static func text(_ x: Double) -> String { x == x.rounded() && abs(x) < 1e15 ? String(Int64(x)) : "\(x)" }

        /// The time-series API (CSV) and the Tables API (JSON, one page).
        func serve(_ request: LoopbackHTTPRequest) -> LoopbackHTTPAction {
            let day = { (name: String) in request.query(name).flatMap { Day($0)?.daysSinceEpoch } }
            if request.path == "/api/v3/datatables/WIKI/PRICES.json" {
                let symbols = (request.query("ticker") ?? "").split(separator: ",").map(String.init)
                var data = [String]()
                for symbol in symbols {
                    for row in rows(symbol, from: day("date.gte"), to: day("date.lte")) {
                        data.append(
                            "[\"\(symbol)\",\"\(Day(daysSinceEpoch: row.day))\"," + row.values.map(Self.text).joined(separator: ",") + "]")
                    }
                }
                let columns = [
                    "ticker", "date", "open", "high", "low", "close", "volume", "ex-dividend", "split_ratio",
                    "adj_open", "adj_high", "adj_low", "adj_close", "adj_volume",
                ]
                .map { #"{"name":"\#($0)","type":"\#($0 == "ticker" ? "String" : $0 == "date" ? "Date" : "double")"}"# }
                return .json(
                    #"{"datatable":{"data":[\#(data.joined(separator: ","))],"columns":[\#(columns.joined(separator: ","))]},"meta":{"next_cursor_id":null}}"#
                )
            }
            let parts = request.path.split(separator: "/")
            guard parts.count == 6, parts[2] == "datasets", parts[3] == "WIKI", parts[5] == "data.csv", histories[String(parts[4])] != nil
            else {
                return notFound
            }
            var lines = ["Date,Open,High,Low,Close,Volume,Ex-Dividend,Split Ratio,Adj. Open,Adj. High,Adj. Low,Adj. Close,Adj. Volume"]
            for row in rows(String(parts[4]), from: day("start_date"), to: day("end_date")).reversed() {  // newest first, as WIKI
                lines.append("\(Day(daysSinceEpoch: row.day))," + row.values.map(Self.text).joined(separator: ","))
            }
            return .csv(Data((lines.joined(separator: "\n") + "\n").utf8))
        }
    }

    /// Every column of `a` equals `b`'s (same tickers, dates and column identifiers) within
    /// `tolerance` relative; returns the worst relative difference.
    static func worstDifference(_ a: QuoteTable, _ b: QuoteTable) throws -> Double {
        #expect(a.tickers.map(\.symbol) == b.tickers.map(\.symbol))
        #expect(a.rowCount == b.rowCount)
        #expect((0 ..< a.rowCount).allSatisfy { a.dates[$0] == b.dates[$0] })
        #expect(Set(a.schema.map(\.identifier)) == Set(b.schema.map(\.identifier)))
        var worst = 0.0
        for d in a.schema {
            let x = try #require(a.column(named: d.identifier)), y = try #require(b.column(named: d.identifier))
            for r in 0 ..< a.rowCount {
                let u = x.doubleValue(at: r), v = y.doubleValue(at: r)
                #expect((u == nil) == (v == nil), "\(d.identifier) row \(r)")
                guard let u, let v else { continue }
                worst = max(worst, u == v ? 0 : abs(u - v) / max(abs(u), abs(v)))
            }
        }
        return worst
    }

    enum API: String, CaseIterable, Sendable { case datasets, tables }

    @Test(arguments: API.allCases)
    func anUpdateAcrossASplitAndADividendEqualsAFreshFullFetch(api: API) async throws {
        let vendor = Vendor()
        let (updated, fresh) = (try Scratch(), try Scratch())
        let apiArguments = api == .tables ? ["--table", "WIKI/PRICES"] : ["--format", "csv"]
        let symbols = ["AAPL", "KO", "MSFT"]
        try await LoopbackHTTPServer.run(vendor.serve) { server in
            vendor.asOf.withLock { $0 = Day("2014-06-06")?.daysSinceEpoch ?? 0 }
            let full = await runOffPool(fetchArguments(server, updated, symbols + apiArguments), in: updated)
            #expect(full.status == 0, "\(full.standardError)")
            let before = try QuoteTable.load(from: updated.snapshot)
            #expect(before.ticker("AAPL")?.rowCount == 112, "2014-01-02 … 2014-06-06, weekdays")
            let firstRequests = server.requests.count

            vendor.asOf.withLock { $0 = Day("2014-06-30")?.daysSinceEpoch ?? 0 }
            let update = await runOffPool(fetchArguments(server, updated, symbols + apiArguments + ["--update"]), in: updated)
            #expect(update.status == 0, "\(update.standardError)")
            // The request log: one overlapping day per ticker (the newest stored, 2014-06-06), never the whole history.
            let updateRequests = Array(server.requests.dropFirst(firstRequests))
            switch api {
            case .datasets:
                #expect(updateRequests.count == 3)
                #expect(updateRequests.allSatisfy { $0.query("start_date") == "2014-06-06" }, "\(updateRequests.map(\.target))")
            case .tables:
                #expect(updateRequests.count == 1, "one request from the oldest newest stored day")
                #expect(updateRequests.first?.query("date.gte") == "2014-06-06")
                #expect(updateRequests.first?.query("ticker") == "AAPL,KO,MSFT")
            }
            let notes = update.standardError.split(separator: "\n").filter { $0.hasPrefix("note: ") && $0.contains("restated") }
            #expect(
                notes == [
                    "note: AAPL split 7:1 on 2014-06-09: adjusted history restated (2014-01-02 … 2014-06-06), recomputed from the stored raw prices",
                    "note: KO dividend 0.305 on 2014-06-12: adjusted history restated (2014-01-02 … 2014-06-06), recomputed from the stored raw prices",
                ], "\(update.standardError)")

            let again = await runOffPool(fetchArguments(server, fresh, symbols + apiArguments), in: fresh)
            #expect(again.status == 0, "\(again.standardError)")
        }
        let after = try QuoteTable.load(from: updated.snapshot), reference = try QuoteTable.load(from: fresh.snapshot)
        #expect(after.ticker("AAPL")?.rowCount == 128)
        let worst = try Self.worstDifference(after, reference)
        #expect(worst <= 1e-9, "updated vs fresh full fetch: \(worst)")
        #expect(try after.adjustmentProblems().isEmpty)
    }

    /// Nothing new happened: the update asks from the overlapping day, restates nothing, and the
    /// stored history is untouched bit for bit (only the new rows are added).
    @Test func anUpdateWithoutEventsRestatesNothing() async throws {
        let vendor = Vendor()
        let scratch = try Scratch()
        try await LoopbackHTTPServer.run(vendor.serve) { server in
            vendor.asOf.withLock { $0 = Day("2014-06-10")?.daysSinceEpoch ?? 0 }
            #expect(await runOffPool(fetchArguments(server, scratch, ["MSFT", "--format", "csv"]), in: scratch).status == 0)
            let before = try QuoteTable.load(from: scratch.snapshot)
            vendor.asOf.withLock { $0 = Day("2014-06-30")?.daysSinceEpoch ?? 0 }
            let update = await runOffPool(fetchArguments(server, scratch, ["MSFT", "--format", "csv", "--update"]), in: scratch)
            #expect(update.status == 0, "\(update.standardError)")
            #expect(!update.standardError.contains("restated"), "\(update.standardError)")
            let after = try QuoteTable.load(from: scratch.snapshot)
            let adjusted = try #require(after.column(named: "adj_close")), old = try #require(before.column(named: "adj_close"))
            #expect((0 ..< before.rowCount).allSatisfy { adjusted.doubleValue(at: $0) == old.doubleValue(at: $0) })
            #expect(after.rowCount == before.rowCount + 14)
        }
    }

    /// The vendor restated without an event in the fetched rows (here: it corrected every adjusted
    /// price of MSFT by 1 %): the overlapping day's adjusted close differs, the history is
    /// recomputed, and the note says why.
    @Test func aChangedAdjustedCloseOnTheOverlappingDayRestatesToo() async throws {
        let vendor = Vendor()
        let scratch = try Scratch(), reference = try Scratch()
        try await LoopbackHTTPServer.run(vendor.serve) { server in
            vendor.asOf.withLock { $0 = Day("2014-06-06")?.daysSinceEpoch ?? 0 }
            vendor.adjustedScale.withLock { $0 = 1.01 }
            #expect(await runOffPool(fetchArguments(server, scratch, ["MSFT", "--format", "csv"]), in: scratch).status == 0)
            vendor.asOf.withLock { $0 = Day("2014-06-30")?.daysSinceEpoch ?? 0 }
            vendor.adjustedScale.withLock { $0 = 1 }
            let update = await runOffPool(fetchArguments(server, scratch, ["MSFT", "--format", "csv", "--update"]), in: scratch)
            #expect(update.status == 0, "\(update.standardError)")
            #expect(
                update.standardError.contains("note: MSFT: the vendor's adj_close of 2014-06-06 changed from "), "\(update.standardError)")
            #expect(await runOffPool(fetchArguments(server, reference, ["MSFT", "--format", "csv"]), in: reference).status == 0)
        }
        let worst = try Self.worstDifference(try QuoteTable.load(from: scratch.snapshot), try QuoteTable.load(from: reference.snapshot))
        #expect(worst <= 1e-9, "\(worst)")
    }

    /// `fetch --table WIKI/PRICES --bulk --update` across the same split and dividend: the export
    /// (a zip of the vendor's CSV as of its day, for the days from the overlapping one) restates
    /// AAPL and KO, and the snapshot equals a fresh full fetch as of 2014-06-30.
    @Test func aBulkUpdateAcrossASplitAndADividendEqualsAFreshFullFetch() async throws {
        let vendor = Vendor()
        let (updated, fresh) = (try Scratch(), try Scratch())
        let symbols = ["AAPL", "KO", "MSFT"]
        let base = Mutex<String>("")
        let exportQuery = Mutex<(tickers: [String], from: Int32?)>(([], nil))
        let serve: @Sendable (LoopbackHTTPRequest) -> LoopbackHTTPAction = { request in
            if request.path == "/api/v3/datatables/WIKI/PRICES.json", request.query("qopts.export") == "true" {
                let tickers = (request.query("ticker") ?? "").split(separator: ",").map(String.init)
                exportQuery.withLock { $0 = (tickers, request.query("date.gte").flatMap { Day($0)?.daysSinceEpoch }) }
                let link = base.withLock { $0 } + "/export/WIKI_PRICES.zip"
                return .json(
                    #"{"datatable_bulk_download":{"file":{"link":"\#(link)","status":"fresh","data_snapshot_time":null}}}"#)
            }
            if request.path == "/export/WIKI_PRICES.zip" {
                let (tickers, from) = exportQuery.withLock { $0 }
                var lines = [
                    "ticker,date,open,high,low,close,volume,ex-dividend,split_ratio,adj_open,adj_high,adj_low,adj_close,adj_volume"
                ]
                for symbol in tickers.isEmpty ? symbols : tickers {
                    for row in vendor.rows(symbol, from: from, to: nil) {
                        lines.append("\(symbol),\(Day(daysSinceEpoch: row.day))," + row.values.map(Vendor.text).joined(separator: ","))
                    }
                }
                let zip = ZipBuilder([.stored("WIKI_PRICES.csv", Array((lines.joined(separator: "\n") + "\n").utf8))]).bytes()
                return .respond(status: 200, headers: ["Content-Type": "application/zip"], body: Data(zip))
            }
            return vendor.serve(request)
        }
        try await LoopbackHTTPServer.run(serve) { server in
            base.withLock { $0 = server.baseURL.absoluteString }
            vendor.asOf.withLock { $0 = Day("2014-06-06")?.daysSinceEpoch ?? 0 }
            let full = await runOffPool(fetchArguments(server, updated, symbols + ["--table", "WIKI/PRICES"]), in: updated)
            #expect(full.status == 0, "\(full.standardError)")
            let stored = try QuoteTable.load(from: updated.snapshot)
            #expect(stored.ticker("AAPL")?.rowCount == 112)

            vendor.asOf.withLock { $0 = Day("2014-06-30")?.daysSinceEpoch ?? 0 }
            let update = await runOffPool(
                fetchArguments(server, updated, symbols + ["--table", "WIKI/PRICES", "--bulk", "--update"]), in: updated)
            #expect(update.status == 0, "\(update.standardError)")
            // The export was asked from the overlapping day, for the three tickers, not the whole history.
            #expect(exportQuery.withLock { $0.from } == Day("2014-06-06")?.daysSinceEpoch)
            #expect(exportQuery.withLock { $0.tickers } == symbols)
            let notes = update.standardError.split(separator: "\n").filter { $0.hasPrefix("note: ") && $0.contains("restated") }
            #expect(notes.count == 2, "\(update.standardError)")
            #expect(notes.contains { $0.contains("AAPL split 7:1 on 2014-06-09") }, "\(update.standardError)")
            #expect(notes.contains { $0.contains("KO dividend 0.305 on 2014-06-12") }, "\(update.standardError)")

            let again = await runOffPool(fetchArguments(server, fresh, symbols + ["--table", "WIKI/PRICES"]), in: fresh)
            #expect(again.status == 0, "\(again.standardError)")
        }
        let after = try QuoteTable.load(from: updated.snapshot), reference = try QuoteTable.load(from: fresh.snapshot)
        #expect(after.ticker("AAPL")?.rowCount == 128)
        let worst = try Self.worstDifference(after, reference)
        #expect(worst <= 1e-9, "bulk update vs fresh full fetch: \(worst)")
        #expect(try after.adjustmentProblems().isEmpty)
    }

    /// A restating update is a write like any other: killed (SIGKILL, the real binary) at moments
    /// spread over its run — while it asks, decodes, recomputes or saves — it leaves the snapshot
    /// whole and verified, holding either the history before the update or the one after it,
    /// never a mix, and no stray file beside it. (Where each kill lands is up to the machine; the
    /// assertion holds wherever it lands.)
    @Test func aRestatingUpdateKilledAtAnyMomentLeavesTheOldOrTheNewHistory() async throws {
        let vendor = Vendor()
        let (scratch, reference) = (try Scratch(), try Scratch())
        let symbols = ["AAPL", "KO", "MSFT"]
        try await LoopbackHTTPServer.run(vendor.serve) { server in
            vendor.asOf.withLock { $0 = Day("2014-06-06")?.daysSinceEpoch ?? 0 }
            let full = await runOffPool(fetchArguments(server, reference, symbols + ["--format", "csv"]), in: reference)
            #expect(full.status == 0, "\(full.standardError)")
            let beforeBytes = try #require(reference.bytes("quotes.snapshot"))
            let before = try QuoteTable.load(from: reference.snapshot)

            vendor.asOf.withLock { $0 = Day("2014-06-30")?.daysSinceEpoch ?? 0 }
            let updateArguments = fetchArguments(server, reference, symbols + ["--format", "csv", "--update"])
            let clock = ContinuousClock()
            let started = clock.now
            let update = try BuiltExecutable.run(updateArguments, environment: reference.environment())
            let duration = clock.now - started
            #expect(update.status == 0, "\(update.standardError)")
            let after = try QuoteTable.load(from: reference.snapshot)
            #expect(after.ticker("AAPL")?.rowCount == 128)
            #expect(!Self.sameTable(before, after))

            var outcomes = (before: 0, after: 0)
            for attempt in 0 ..< 12 {
                try beforeBytes.write(to: URL(fileURLWithPath: scratch.snapshot))
                let killed = try RunningExecutable(
                    fetchArguments(server, scratch, symbols + ["--format", "csv", "--update"]),
                    environment: scratch.environment(), in: URL(fileURLWithPath: scratch.path))
                // From at once to past the end of an unkilled run (measured above).
                try await Task.sleep(for: duration * (Double(attempt) / 10))
                kill(killed.pid, SIGKILL)
                _ = try killed.finish(timeout: .seconds(120))
                let left = try QuoteTable.load(from: scratch.snapshot, verify: true)
                if Self.sameTable(left, before) {
                    outcomes.before += 1
                } else if Self.sameTable(left, after) {
                    outcomes.after += 1
                } else {
                    Issue.record("attempt \(attempt): the snapshot holds neither the old nor the new history")
                }
                // Beside the snapshot, its lock and its data directory (a store's versions, once a
                // write has committed one: ARCHITECTURE.md, *Versions and appends*) only what
                // Foundation keeps in $HOME (this directory) and, from a save killed half-way, its
                // hidden temporary.
                let stray = try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter {
                    !["quotes.snapshot", "quotes.snapshot.lock", "quotes.snapshot.data", ".cache", ".local"].contains($0)
                        && !$0.hasPrefix(".quotes.snapshot.tmp-")
                }
                #expect(stray.isEmpty, "attempt \(attempt): \(stray)")
            }
            #expect(outcomes.before + outcomes.after == 12)
            // The next write completes the update and removes any temporary a killed save left.
            let finished = try BuiltExecutable.run(
                fetchArguments(server, scratch, symbols + ["--format", "csv", "--update"]), environment: scratch.environment())
            #expect(finished.status == 0, "\(finished.standardError)")
            #expect(Self.sameTable(try QuoteTable.load(from: scratch.snapshot), after))
            let left = try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasPrefix(".quotes.snapshot.tmp-") }
            #expect(left.isEmpty, "\(left)")
        }
    }

    /// Whether `a` and `b` hold the same tickers, dates and columns, value for value (bit for bit).
    static func sameTable(_ a: QuoteTable, _ b: QuoteTable) -> Bool {
        guard a.tickers.map(\.symbol) == b.tickers.map(\.symbol), a.rowCount == b.rowCount,
            a.schema.map(\.identifier) == b.schema.map(\.identifier),
            (0 ..< a.rowCount).allSatisfy({ a.dates[$0] == b.dates[$0] })
        else { return false }
        for d in a.schema {
            guard let x = a.column(named: d.identifier), let y = b.column(named: d.identifier) else { return false }
            for r in 0 ..< a.rowCount where x.doubleValue(at: r)?.bitPattern != y.doubleValue(at: r)?.bitPattern { return false }
        }
        return true
    }
}
