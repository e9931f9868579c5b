import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// What an append reads of the files already in a store (ARCHITECTURE.md, *Versions and
/// appends*): each footer's index (`SnapshotFooter.Extent.index`) and dates, not whole tables.
/// Checked against the whole decode, against a model of the merged table, and on damage.
@Suite struct SnapshotAppendTests {
    /// A random table with ticker and table metadata (non-ASCII too), nulls and edge values.
    static func tableWithMetadata(rows: Int, tickers: Int, seed: UInt64) -> QuoteTable {
        var t = TestTables.random(rows: rows, tickers: tickers, seed: seed)
        for i in t.tickers.indices where i % 2 == 0 {
            t.tickers[i].metadata = ["name": "Société \(i) ✓", "exchange": "X\(seed)", "": "empty key"]
        }
        t.metadata = ["source": "test \(seed)"]
        return t
    }

    /// The footer's index decodes to exactly what the whole decode gives for the sections it
    /// reads, and the dates are the table's, for tables of 0, 1, 63, 64, 65 and 4,097 rows.
    @Test(arguments: [0, 1, 63, 64, 65, 4_097])
    func indexReadAgreesWithTheWholeDecode(rows: Int) throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        for seed in UInt64(1) ... 3 {
            let path = dir.file("t\(seed).snapshot")
            let table = Self.tableWithMetadata(rows: rows, tickers: Int(seed) * 5, seed: seed &+ UInt64(rows))
            try table.save(to: path, durable: false)
            let whole = try SnapshotReader(path: path)
            let index = try SnapshotReader(path: path, extent: .index)
            #expect(index.footer.extent == .index && whole.footer.extent == .whole)
            #expect(index.footer.schema == whole.footer.schema)
            #expect(index.footer.dateColumnName == whole.footer.dateColumnName)
            #expect(index.footer.rowCount == whole.footer.rowCount)
            #expect(index.footer.columns == whole.footer.columns)
            #expect(index.footer.tickers.map(\.symbol) == whole.footer.tickers.map(\.symbol))
            #expect(index.footer.tickers.map(\.rows) == whole.footer.tickers.map(\.rows))
            #expect(index.footer.tickers.allSatisfy { $0.metadata.isEmpty })
            #expect(index.footer.summaries == nil && index.footer.metadata.isEmpty)
            #expect(whole.footer.tickers.contains { !$0.metadata.isEmpty }, "there was metadata to step over")
            let dates = try index.checkedDates()
            #expect(dates.column == table.dates)
            // Each ticker's first and last dates, read apart (0 for a ticker without rows).
            #expect(dates.first == table.tickers.map { $0.rowCount > 0 ? table.dates[$0.firstRow] : 0 })
            #expect(dates.last == table.tickers.map { $0.rowCount > 0 ? table.dates[$0.firstRow + $0.rowCount - 1] : 0 })
        }
    }

    /// Each ticker's first and last dates are the table's, whether read apart with `pread`
    /// (tickers of more than 4,096 rows on average) or through the mapping, with tickers
    /// without rows between others and at the ends.
    @Test(arguments: [(1, 4_097), (2, 9_000), (3, 13_001), (4, 100), (3, 8_193)])
    func tickerDatesAreTheTables(tickers: Int, rows: Int) throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("d.snapshot")
        // Tickers 0, 2, 4, … hold the rows; 1, 3, … and one more at the end hold none.
        let symbols = (0 ..< 2 * tickers + 1).map { "S\($0)" }
        let rowTickers = (0 ..< rows).map { Int32(2 * ($0 % tickers)) }
        let days = Column((0 ..< rows).map { Int32(10_000 + $0 / tickers) })
        let values = Column((0 ..< rows).map { Double($0) })
        let table = try QuoteTable(
            sortingRows: symbols.map { TickerEntry(symbol: $0) }, rowTickers: rowTickers, dates: days,
            schema: [ColumnDescriptor(name: "v", type: .float64)], columns: [AnyColumn(values)])
        try table.save(to: path, durable: false)
        let dates = try SnapshotReader(path: path, extent: .index).checkedDates()
        #expect(dates.first == table.tickers.map { $0.rowCount > 0 ? table.dates[$0.firstRow] : 0 })
        #expect(dates.last == table.tickers.map { $0.rowCount > 0 ? table.dates[$0.firstRow + $0.rowCount - 1] : 0 })
        #expect(dates.column == table.dates)
    }

    /// The dates read with `pread` come from the file that was mapped: a file renamed over the
    /// path after it was opened (another writer's replacement; an append reads the base's dates
    /// by path) is refused, not read as the old one's, and a file that is still the same is read.
    @Test func datesOfAFileReplacedAfterItWasOpenedAreRefused() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("base.snapshot"), other = dir.file("other.snapshot")
        // One ticker of 9,000 rows: more than 4,096 a ticker, so the dates are read with pread.
        let table = Self.tableWithMetadata(rows: 9_000, tickers: 1, seed: 5)
        try table.save(to: path, durable: false)
        try table.save(to: other, durable: false)
        let unchanged = try SnapshotReader(path: path, extent: .index)
        #expect(try unchanged.checkedDates().last == [table.dates[8_999]])

        let reader = try SnapshotReader(path: path, extent: .index)
        #expect(rename(other, path) == 0)
        do {
            _ = try reader.checkedDates()
            Issue.record("the dates of a replaced file were read")
        } catch {
            guard case .inconsistentData(let file, "payload", let detail) = error else {
                Issue.record("expected inconsistentData, got \(error)")
                return
            }
            #expect(file == path)
            #expect(detail == "the file was replaced while it was read")
        }
    }

    /// Damaged footer bytes (no checksum in the way): the index decode never traps, and whatever
    /// the whole decode accepts it accepts with the same index.
    @Test func indexDecodeOfDamagedFootersAcceptsWhatTheWholeDecodeAccepts() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("f.snapshot")
        try Self.tableWithMetadata(rows: 300, tickers: 6, seed: 5).save(to: path, durable: false)
        let file = readBytes(path)
        let footerOffset = Int(file[32 ..< 40].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        let footer = Array(file[footerOffset ..< file.count - SnapshotFormat.trailerSize])
        var rng = SplitMix64(seed: 11)
        var refusedByBoth = 0, acceptedByBoth = 0
        for trial in 0 ..< 600 {
            var damaged = footer
            if trial % 10 == 0 {
                damaged.removeLast(Int(rng.next() % UInt64(damaged.count)))
            } else {
                for _ in 0 ..< 1 + trial % 3 { damaged[Int(rng.next() % UInt64(damaged.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            }
            let (whole, index) = damaged.withUnsafeBytes { b in
                (
                    try? SnapshotFooter.decode(b, file: "f", rowLimit: file.count),
                    try? SnapshotFooter.decode(b, file: "f", rowLimit: file.count, extent: .index)
                )
            }
            if let whole {
                let index = try #require(index, "trial \(trial): the whole decode accepts, the index decode refuses")
                #expect(index.schema == whole.schema && index.columns == whole.columns && index.rowCount == whole.rowCount)
                #expect(index.tickers.map(\.symbol) == whole.tickers.map(\.symbol))
                #expect(index.tickers.map(\.rows) == whole.tickers.map(\.rows))
                acceptedByBoth += 1
            } else if index == nil {
                refusedByBoth += 1
            }
        }
        // Both outcomes occur, so the comparison above is not vacuous.
        #expect(refusedByBoth > 100 && acceptedByBoth > 10, "\(refusedByBoth) refused, \(acceptedByBoth) accepted")
    }

    /// A ticker dictionary (and index) of the same bytes as one decoded before for the same
    /// extent is taken as decoded: the same tickers (and, for a whole footer, metadata) as its
    /// own decode gives. Other bytes are decoded and checked, so a repeated symbol is refused
    /// whatever tickers the decode was given; tickers of the other extent are not taken.
    @Test(arguments: [SnapshotFooter.Extent.index, .whole])
    func reusedTickersDecodeAsTheirOwnBytes(extent: SnapshotFooter.Extent) throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        func footer(_ table: QuoteTable, _ name: String) throws -> [UInt8] {
            try table.save(to: dir.file(name), durable: false)
            let file = readBytes(dir.file(name))
            let footerOffset = Int(file[32 ..< 40].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            return Array(file[footerOffset ..< file.count - SnapshotFormat.trailerSize])
        }
        func decode(
            _ bytes: [UInt8], reusing: SnapshotFooter.DecodedTickers?, extent: SnapshotFooter.Extent = extent
        ) throws -> SnapshotFooter {
            try bytes.withUnsafeBytes { b in
                try SnapshotFooter.decode(b, file: "r", rowLimit: 1 << 30, extent: extent, reusing: reusing)
            }
        }
        // Same tickers, other rows and values (the same TDIC bytes, another TIDX); the same table
        // again (both the same); other tickers.
        let a = Self.tableWithMetadata(rows: 300, tickers: 6, seed: 5)
        let b = Self.tableWithMetadata(rows: 500, tickers: 6, seed: 5)
        let other = Self.tableWithMetadata(rows: 300, tickers: 7, seed: 6)
        let decodedA = try decode(try footer(a, "a.snapshot"), reusing: nil)
        let dictionaryA = try #require(decodedA.decodedTickers)
        #expect(dictionaryA.tickers == decodedA.tickers)
        for (table, name) in [(b, "b.snapshot"), (other, "o.snapshot"), (a, "a2.snapshot")] {
            let bytes = try footer(table, name)
            let own = try decode(bytes, reusing: nil)
            let reused = try decode(bytes, reusing: dictionaryA)
            #expect(reused == own, "\(name)")
            #expect(reused.tickers.map(\.symbol) == table.tickers.map(\.symbol) && reused.tickers.map(\.rows) == table.tickers.map(\.rows))
        }
        // The reuse is taken exactly for the same bytes: tickers marked after their decode show
        // where they were taken (symbols for the same TDIC, rows for the same TIDX too).
        var marked = dictionaryA
        marked.tickers[0].symbol = "marked"
        marked.tickers[0].rowCount = 12_345
        let fromB = try decode(try footer(b, "b2.snapshot"), reusing: marked).tickers[0]
        #expect(fromB.symbol == "marked" && fromB.rowCount == b.tickers[0].rowCount)
        let fromA = try decode(try footer(a, "a4.snapshot"), reusing: marked).tickers[0]
        #expect(fromA.symbol == "marked" && fromA.rowCount == 12_345)
        #expect(try decode(try footer(other, "o2.snapshot"), reusing: marked).tickers[0].symbol == "T0")
        // Tickers decoded for the other extent are decoded again, not taken.
        let otherExtent: SnapshotFooter.Extent = extent == .index ? .whole : .index
        let fromOtherExtent = try decode(try footer(a, "a5.snapshot"), reusing: marked, extent: otherExtent)
        #expect(fromOtherExtent.tickers[0].symbol == "T0" && fromOtherExtent.tickers[0].rowCount == a.tickers[0].rowCount)
        if otherExtent == .whole { #expect(fromOtherExtent.tickers.map(\.metadata) == a.tickers.map(\.metadata)) }
        if extent == .whole {
            #expect(try decode(try footer(a, "a6.snapshot"), reusing: marked).tickers[2].metadata == a.tickers[2].metadata)
        }
        // T4 renamed T1, then T1 renamed T0 (the length prefix and the bytes in TDIC): refused,
        // whether given A's dictionary or none.
        let bytesA = try footer(a, "a3.snapshot")
        for (from, to) in [("T4", "T1"), ("T1", "T0")] {
            let pattern: [UInt8] = [2, 0, 0, 0] + Array(from.utf8)
            let at = try #require((0 ... bytesA.count - pattern.count).first { Array(bytesA[$0 ..< $0 + pattern.count]) == pattern })
            var damaged = bytesA
            damaged.replaceSubrange(at + 4 ..< at + 6, with: Array(to.utf8))
            for reusing in [nil, dictionaryA] {
                #expect(throws: SnapshotError.malformedFooter(file: "r", section: "TDIC", detail: "ticker \(to) appears twice")) {
                    _ = try decode(damaged, reusing: reusing)
                }
            }
        }
    }

    /// A segment around `model`: for a random part of its tickers, rows on new days after the
    /// ticker's last date, on stored dates (replacements), in gaps or before its first date
    /// (backfills), or a mix; plus new tickers; a random subset of columns, one sometimes new.
    static func segment(around model: QuoteTable, seed: UInt64) -> QuoteTable {
        var rng = SplitMix64(seed: seed)
        var symbols = [String](), rowTickers = [Int32](), days = Column<Int32>()
        func add(_ symbol: String, _ picked: Set<Int32>) {
            guard !picked.isEmpty else { return }
            symbols.append(symbol)
            for d in picked.sorted() {
                rowTickers.append(Int32(symbols.count - 1))
                days.append(d)
            }
        }
        for t in model.tickers where t.rowCount > 0 && rng.next() % 3 != 0 {
            let first = model.dates[t.firstRow], last = model.dates[t.firstRow + t.rowCount - 1]
            var picked = Set<Int32>()
            for _ in 0 ..< 1 + rng.next() % 3 {
                switch rng.next() % 4 {
                case 0: picked.insert(last + 1 + Int32(rng.next() % 3))  // a new day
                case 1: picked.insert(model.dates[t.firstRow + Int(rng.next() % UInt64(t.rowCount))])  // a stored day
                case 2: picked.insert(first - 1 - Int32(rng.next() % 3))  // before the first
                default: picked.insert(first + Int32(rng.next() % UInt64(last - first + 1)))  // anywhere between
                }
            }
            add(t.symbol, picked)
        }
        for k in 0 ..< Int(rng.next() % 3) { add("N\(seed)_\(k)", [Int32(10_000 + rng.next() % 50)]) }
        var schema = [ColumnDescriptor(name: "f64", type: .float64)]
        var values = Column<Double>(), extra = Column<Int32>()
        for _ in 0 ..< days.count {
            if rng.next() % 10 == 0 { values.appendNull() } else { values.append(Double(rng.next() % 10_000) / 100) }
            extra.append(Int32(truncatingIfNeeded: rng.next()))
        }
        var columns = [AnyColumn(values)]
        if seed % 2 == 0 {
            schema.append(ColumnDescriptor(name: "extra_\(seed % 3)", type: .int32))
            columns.append(AnyColumn(extra))
        }
        do {
            return try QuoteTable(
                sortingRows: symbols.map { TickerEntry(symbol: $0) }, rowTickers: rowTickers, dates: days,
                schema: schema, columns: columns)
        } catch {
            preconditionFailure("segment: \(error)")
        }
    }

    /// The rows of `segment` whose ticker and date `model` holds: the obvious count.
    static func referenceReplaced(by segment: QuoteTable, in model: QuoteTable) -> Int {
        var stored = Set<String>()
        for t in model.tickers { for r in t.rows { stored.insert("\(t.symbol)|\(model.dates[r])") } }
        var n = 0
        for t in segment.tickers { for r in t.rows where stored.contains("\(t.symbol)|\(segment.dates[r])") { n += 1 } }
        return n
    }

    /// Over random histories of appends (new days, replacements, backfills, new tickers and new
    /// columns), the replaced-row count from the files' indexes is the model's, so is every
    /// version's row count, and the store reads as the model.
    @Test(arguments: [UInt64(21), 22, 23, 24])
    func replacedRowsMatchTheModel(seed: UInt64) throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("a.snapshot")
        let store = SnapshotStore(at: path)
        var model = TestTables.random(rows: 2_000, tickers: 12, seed: seed)
        try store.write(model, command: "write", durable: false)
        var sawReplacements = false
        for step in 0 ..< 12 {
            let segment = Self.segment(around: model, seed: seed &* 100 &+ UInt64(step))
            guard segment.rowCount > 0 else { continue }
            let expected = Self.referenceReplaced(by: segment, in: model)
            // The count from the current version's files, as the append computes it (the first
            // append finds a single-file snapshot: its one file is the path itself).
            let (log, resolved) = try store.readLog(path)
            let directory = store.dataDirectory(resolved, log)
            var replaced = SnapshotStore.ReplacedRows(by: segment)
            for i in log.current.files {
                let reader = try SnapshotStore.checkedReader(log.files[i], directory: directory, extent: .index)
                replaced.find(in: reader.footer.tickers, dates: try reader.checkedDates())
            }
            #expect(replaced.count == expected, "step \(step)")
            let commit = try store.append(segment, command: "append \(step)", durable: false)
            model.upsert(segment)
            #expect(commit.version.rowCount == model.rowCount, "step \(step)")
            if expected > 0 { sawReplacements = true }
        }
        #expect(try store.table() == model)
        #expect(sawReplacements)
        // A day after every stored date (the usual append) replaces nothing.
        let last = model.tickers.map { model.dates[$0.firstRow + $0.rowCount - 1] }.max() ?? 0
        let n = model.tickers.count
        let day = try QuoteTable(
            sortingRows: model.tickers.map { TickerEntry(symbol: $0.symbol) }, rowTickers: (0 ..< Int32(n)).map { $0 },
            dates: Column([Int32](repeating: last + 1, count: n)), schema: [ColumnDescriptor(name: "f64", type: .float64)],
            columns: [AnyColumn(Column((0 ..< n).map { Double($0) }))])
        let before = try store.log().current.rowCount
        let commit = try store.append(day, durable: false)
        model.upsert(day)
        #expect(commit.version.rowCount == before + n && commit.version.rowCount == model.rowCount)
        #expect(try store.table() == model)
    }

    /// Damage to any file the current version names, in its footer, its trailer or its length,
    /// stops an append with an error naming the file, before anything is written.
    @Test func damagedEarlierFileStopsTheAppendWithAClearError() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("d.snapshot")
        let store = SnapshotStore(at: path)
        try store.write(Self.tableWithMetadata(rows: 3_000, tickers: 5, seed: 9), durable: false)
        try store.append(SnapshotStoreTests.segment(seed: 61), durable: false)
        try store.append(SnapshotStoreTests.segment(seed: 62), durable: false)
        let log = try store.log()
        let logBytes = readBytes(path)
        let directory = dir.file("d.snapshot.data")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        var rng = SplitMix64(seed: 5)
        for i in log.current.files {
            let name = log.files[i].name
            let p = directory + "/" + name
            let bytes = readBytes(p)
            let footerOffset = Int(bytes[32 ..< 40].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            let trailer = bytes.count - SnapshotFormat.trailerSize
            let damages: [(String, [UInt8])] = [
                ("footer", flipping(bytes, at: footerOffset + Int(rng.next() % UInt64(trailer - footerOffset)))),
                ("footer", flipping(bytes, at: trailer + Int(rng.next() % 8))),  // the stored footer checksum
                ("cut", Array(bytes.dropLast(1 + Int(rng.next() % 100)))),
            ]
            for (what, damaged) in damages {
                writeBytes(damaged, to: p)
                do {
                    try store.append(SnapshotStoreTests.segment(seed: 63), durable: false)
                    Issue.record("\(name) \(what): the append went through")
                } catch {
                    #expect(error.description.contains(name), "\(error)")
                    if what == "footer", case .checksumMismatch(_, let section, _, _, _) = error {
                        #expect(section == "footer")
                    } else if what == "footer" {
                        Issue.record("\(name): \(error)")
                    }
                }
                // Nothing was written: the log is as it was, no data file was added.
                #expect(readBytes(path) == logBytes)
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == names)
                writeBytes(bytes, to: p)
            }
        }
        // A payload is not covered by the footer checksum: a date out of the storable range at
        // a ticker's last row is found as a non-verifying load finds it.
        let baseName = log.files[log.current.files[0]].name
        let baseBytes = readBytes(directory + "/" + baseName)
        let lastRow = try SnapshotReader(path: directory + "/" + baseName).footer.tickers[0].rowCount - 1
        var badDate = baseBytes
        badDate.replaceSubrange(
            SnapshotFormat.payloadStart + 4 * lastRow ..< SnapshotFormat.payloadStart + 4 * lastRow + 4, with: [0xFF, 0xFF, 0xFF, 0x7F])
        writeBytes(badDate, to: directory + "/" + baseName)
        do {
            try store.append(SnapshotStoreTests.segment(seed: 63), durable: false)
            Issue.record("a date out of range went through")
        } catch {
            guard case .inconsistentData(let file, "payload", _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(file.hasSuffix(baseName))
        }
        #expect(readBytes(path) == logBytes)
        writeBytes(baseBytes, to: directory + "/" + baseName)
        // Another whole, valid snapshot in a file's place (not the one the log recorded) is refused too.
        let segmentName = log.files[log.current.files[1]].name
        let original = readBytes(directory + "/" + segmentName)
        writeBytes(readBytes(directory + "/" + log.files[log.current.files[2]].name), to: directory + "/" + segmentName)
        #expect(throws: SnapshotError.self) { try store.append(SnapshotStoreTests.segment(seed: 63), durable: false) }
        #expect(readBytes(path) == logBytes)
        writeBytes(original, to: directory + "/" + segmentName)
        // Undamaged again, the append goes through.
        try store.append(SnapshotStoreTests.segment(seed: 63), durable: false)
        #expect(QuoteTable.verifySnapshot(at: path).isValid)
    }

    private func flipping(_ bytes: [UInt8], at i: Int) -> [UInt8] {
        var b = bytes
        b[i] ^= 0x10
        return b
    }
}
