@testable import Colonnade
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Delta Lake output and input without any other engine: our reader reading our log at every
/// version, the files of each version, stats, atomic commits against a rival writer, and the
/// tables we refuse to write or read. (delta-rs and Polars reading the same tables:
/// `DeltaInteropTests` in ColonnadeCLITests, when the Python environment is there.)
@Suite struct DeltaTests {
    static func scratch(_ label: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("delta-\(label)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }

    /// 5 tickers over 800 trading days from 2000-01-03: the years 2000 to 2003.
    static let full = QuoteGenerator(tickers: 5, days: 800, seed: 7).makeTable()

    static func rows(_ table: QuoteTable, _ expression: String) throws -> QuoteTable {
        table.subtable(try table.select(where: expression))
    }

    static func writer(_ table: QuoteTable, _ partitioning: ParquetWriter.Partitioning? = .year) -> DeltaWriter {
        var w = DeltaWriter(table: table)
        w.partitioning = partitioning
        w.durable = false
        w.rowGroupRows = 300
        return w
    }

    /// Create, append, overwrite one year, append: every version reads back as the rows it
    /// should hold, and no file of an earlier version is touched.
    @Test(arguments: [ParquetWriter.Partitioning.year, .month])
    func createAppendOverwriteAppendReadsBackEveryVersion(partitioning: ParquetWriter.Partitioning) throws {
        let dir = try Self.scratch("versions")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try Self.rows(Self.full, "date <= 2001-12-31")
        let second = try Self.rows(Self.full, "2002-01-01 <= date <= 2002-12-31")
        // The overwrite restates 2001 with three of the five tickers (every month of the year, fewer rows).
        let three = Self.full.tickers.prefix(3).map(\.symbol).joined(separator: ", ")
        let restated = try Self.rows(Self.full, "2001-01-01 <= date <= 2001-12-31 and ticker in (\(three))")
        let fourth = try Self.rows(Self.full, "date >= 2003-01-01")
        #expect(try Self.writer(first, partitioning).write(to: dir, mode: nil).version == 0)
        #expect(try Self.writer(second, partitioning).write(to: dir, mode: .append).version == 1)
        let overwrite = try Self.writer(restated, partitioning).write(to: dir, mode: .overwrite)
        #expect(overwrite.version == 2)
        #expect(overwrite.removed == (partitioning == .year ? 1 : 12))
        #expect(try Self.writer(fourth, partitioning).write(to: dir, mode: .append).version == 3)

        var expected = first
        var versions = [expected]
        expected.upsert(contentsOf: [second])
        versions.append(expected)
        var v2 = try Self.rows(expected, "date <= 2000-12-31 or date >= 2002-01-01")
        v2.upsert(contentsOf: [restated])
        versions.append(v2)
        var v3 = v2
        v3.upsert(contentsOf: [fourth])
        versions.append(v3)
        for (version, table) in versions.enumerated() {
            var skipped: [InteropSkippedColumn] = []
            let read = try DeltaTable.read(at: dir, version: version, strict: true, skipped: &skipped)
            #expect(read.rowCount == table.rowCount, "version \(version)")
            #expect(read.dates == table.dates && read.columns == table.columns, "version \(version)")
            let snapshot = try DeltaTable.snapshot(at: dir, version: version)
            #expect(snapshot.files.reduce(0) { $0 + ($1.records ?? -1) } == table.rowCount)
            // Every file of every version is still there.
            for f in snapshot.files { #expect(FileManager.default.fileExists(atPath: dir + "/" + f.path), "\(f.path)") }
        }
        #expect(try DeltaTable.versions(at: dir) == [0, 1, 2, 3])
        let latest = try DeltaTable.snapshot(at: dir)
        #expect(latest.partitionColumns == (partitioning == .year ? ["year"] : ["year", "month"]))
        #expect(latest.files.allSatisfy { $0.path.hasPrefix("year=") && $0.path.hasSuffix(".zstd.parquet") })
    }

    @Test func theFirstCommitHoldsProtocolMetadataAndStatsWithoutNaN() throws {
        let dir = try Self.scratch("stats")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // One close is NaN, one high is infinite: those columns get no min/max in their file.
        var table = try Self.rows(Self.full, "date <= 2000-03-31")
        let close = try #require(table.columnIndex(named: "close")), high = try #require(table.columnIndex(named: "high"))
        guard case .float64(let c) = table.columns[close], case .float64(let h) = table.columns[high] else {
            Issue.record("close and high are float64")
            return
        }
        var closes: [Double?] = (0 ..< c.count).map { c.isNull($0) ? nil : c[$0] }
        var highs: [Double?] = (0 ..< h.count).map { h.isNull($0) ? nil : h[$0] }
        closes[3] = .nan
        highs[5] = .infinity
        table.columns[close] = .float64(Column(closes))
        table.columns[high] = .float64(Column(highs))
        _ = try Self.writer(table, nil).write(to: dir, mode: nil)
        let text = try String(contentsOfFile: dir + "/_delta_log/00000000000000000000.json", encoding: .utf8)
        let actions = text.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(actions.allSatisfy { $0 != nil })
        let parsed: [[String: Any]] = actions.compactMap { $0 }
        let protocols = parsed.compactMap { $0["protocol"] as? [String: Any] }
        let proto = try #require(protocols.first)
        #expect(proto["minReaderVersion"] as? Int == 1 && proto["minWriterVersion"] as? Int == 2)
        #expect(proto["readerFeatures"] == nil && proto["writerFeatures"] == nil)
        let adds = parsed.compactMap { $0["add"] as? [String: Any] }
        let add = try #require(adds.first)
        let stats = try #require(JSONSerialization.jsonObject(with: Data((add["stats"] as? String ?? "").utf8)) as? [String: Any])
        #expect(stats["numRecords"] as? Int == table.rowCount)
        let minimums = try #require(stats["minValues"] as? [String: Any]), maximums = try #require(stats["maxValues"] as? [String: Any])
        #expect(minimums["close"] == nil && maximums["close"] == nil && minimums["high"] == nil)
        #expect(minimums["low"] != nil && minimums["date"] as? String == "2000-01-03")
        #expect((stats["nullCount"] as? [String: Any])?["close"] as? Int == 0)
        #expect(
            add["size"] as? Int
                == (try FileManager.default.attributesOfItem(atPath: dir + "/" + (add["path"] as? String ?? ""))[.size] as? Int))
    }

    @Test func anExistingTableNeedsAModeAndTheSamePartitionsAndColumns() throws {
        let dir = try Self.scratch("refuse")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let table = try Self.rows(Self.full, "date <= 2000-06-30")
        _ = try Self.writer(table).write(to: dir, mode: nil)
        #expect(throws: DeltaError.self) { _ = try Self.writer(table).write(to: dir, mode: nil) }
        #expect(throws: DeltaError.self) { _ = try Self.writer(table, .month).write(to: dir, mode: .append) }
        let narrower = try QuoteTable(
            schema: [table.schema[0]], columns: [table.columns[0]], dates: table.dates, tickers: table.tickers,
            dateColumnName: table.dateColumnName, metadata: [:], checkDates: false)
        #expect(throws: DeltaError.self) { _ = try Self.writer(narrower).write(to: dir, mode: .append) }
        #expect(try DeltaTable.versions(at: dir) == [0])
    }

    /// Appends a commit by hand (as another engine would) to the table at `dir`.
    static func commitByHand(_ dir: String, version: Int, _ lines: [String]) throws {
        try (lines.joined(separator: "\n") + "\n").write(
            toFile: dir + "/_delta_log/" + DeltaTable.commitName(version), atomically: false, encoding: .utf8)
    }

    @Test func tablesWithFeaturesAppendOnlyOrInvariantsAreRefused() throws {
        let table = try Self.rows(Self.full, "date <= 2000-03-31")
        let cases: [(String, DeltaWriter.Mode)] = [
            (#"{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["appendOnly"]}}"#, .append),
            (
                #"{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors"]}}"#,
                .append
            ),
            (
                #"{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{}","partitionColumns":["year"],"configuration":{"delta.appendOnly":"true"}}}"#,
                .overwrite
            ),
            (
                #"{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"close\",\"type\":\"double\",\"nullable\":true,\"metadata\":{\"delta.invariants\":\"{\\\"expression\\\":{\\\"expression\\\":\\\"close > 0\\\"}}\"}}]}","partitionColumns":["year"],"configuration":{}}}"#,
                .append
            ),
        ]
        for (action, mode) in cases {
            let dir = try Self.scratch("features")
            defer { try? FileManager.default.removeItem(atPath: dir) }
            _ = try Self.writer(table).write(to: dir, mode: nil)
            try Self.commitByHand(dir, version: 1, [action])
            do {
                _ = try Self.writer(table).write(to: dir, mode: mode)
                Issue.record("wrote into a table with \(action)")
            } catch {
                switch error {
                case .unsupportedProtocol, .refused: break
                default: Issue.record("\(error)")
                }
            }
            #expect(try DeltaTable.versions(at: dir) == [0, 1])
        }
    }

    @Test func aTableNeedingReaderVersion3IsRefusedWhenRead() throws {
        let dir = try Self.scratch("reader3")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = try Self.writer(try Self.rows(Self.full, "date <= 2000-03-31")).write(to: dir, mode: nil)
        try Self.commitByHand(
            dir, version: 1,
            [
                #"{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors"]}}"#
            ])
        var skipped: [InteropSkippedColumn] = []
        #expect(throws: DeltaError.self) { _ = try DeltaTable.read(at: dir, strict: false, skipped: &skipped) }
        // Version 0 was readable and still is.
        #expect(try DeltaTable.read(at: dir, version: 0, strict: false, skipped: &skipped).rowCount > 0)
        #expect(throws: DeltaError.self) { _ = try DeltaTable.read(at: dir, version: 2, strict: false, skipped: &skipped) }
    }

    /// Another writer (not Colonnade, so not under our lock) takes the version between our data
    /// files and our commit: the link fails with EEXIST, we read its commit and take the next version.
    @Test func aCommitThatLosesTheRaceRetriesAtTheNextVersion() throws {
        let dir = try Self.scratch("race")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = try Self.writer(try Self.rows(Self.full, "date <= 2000-12-31")).write(to: dir, mode: nil)
        var w = Self.writer(try Self.rows(Self.full, "2001-01-01 <= date <= 2001-12-31"))
        var raced = 0
        w.step = { step in
            if step == "data" && raced == 0 {
                raced += 1
                try? Self.commitByHand(dir, version: 1, [#"{"commitInfo":{"operation":"OPTIMIZE"}}"#])
            }
        }
        let outcome = try w.write(to: dir, mode: .append)
        #expect(outcome.version == 2)
        #expect(try DeltaTable.versions(at: dir) == [0, 1, 2])
        let text = try String(contentsOfFile: dir + "/_delta_log/00000000000000000001.json", encoding: .utf8)
        #expect(text.contains("OPTIMIZE"))  // never overwritten
        // No temporaries are left in the log.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/_delta_log").allSatisfy { !$0.hasPrefix(".") })
    }

    /// Two Colonnade writers at once, each many times: every version is committed exactly once and
    /// every commit's files are in the table.
    @Test func concurrentWritersNeverCommitOneVersionTwice() throws {
        let dir = try Self.scratch("concurrent")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let base = try Self.rows(Self.full, "date <= 2000-01-31")
        _ = try Self.writer(base).write(to: dir, mode: nil)
        let pieces = try (0 ..< 6).map { i in
            try Self.rows(Self.full, "date = \(Day(daysSinceEpoch: Self.full.dates[0] + Int32(60 + i)).description)")
        }
        let versions = UnsafeMutablePointer<Int>.allocate(capacity: pieces.count)
        defer { versions.deallocate() }
        let shared = SharedPointer(base: versions)
        DispatchQueue.concurrentPerform(iterations: pieces.count) { i in
            shared.base[i] = (try? Self.writer(pieces[i]).write(to: dir, mode: .append).version) ?? -1
        }
        let committed = (0 ..< pieces.count).map { versions[$0] }.sorted()
        #expect(committed == Array(1 ... pieces.count))
        var skipped: [InteropSkippedColumn] = []
        let read = try DeltaTable.read(at: dir, strict: false, skipped: &skipped)
        #expect(read.rowCount == base.rowCount + pieces.reduce(0) { $0 + $1.rowCount })
    }

    /// The put-if-absent step alone: of two commits of one version, exactly one links.
    @Test func twoCommitsOfOneVersionLinkOnce() throws {
        let dir = try Self.scratch("link")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let w = Self.writer(try Self.rows(Self.full, "date <= 2000-01-31"))
        _ = try w.write(to: dir, mode: nil)
        #expect(try w.commit("{\"commitInfo\":{}}\n", version: 1, directory: dir) == true)
        #expect(try w.commit("{\"commitInfo\":{\"second\":1}}\n", version: 1, directory: dir) == false)
        let text = try String(contentsOfFile: dir + "/_delta_log/00000000000000000001.json", encoding: .utf8)
        #expect(!text.contains("second"))
    }

    @Test func theLogIsReadNeverTheListing() throws {
        let dir = try Self.scratch("listing")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let table = try Self.rows(Self.full, "date <= 2000-12-31")
        _ = try Self.writer(table).write(to: dir, mode: nil)
        _ = try Self.writer(table).write(to: dir, mode: .overwrite)
        // The removed file is still on disk (time travel), but not in the current version.
        let onDisk = try FileManager.default.contentsOfDirectory(atPath: dir + "/year=2000").filter { $0.hasSuffix(".parquet") }
        #expect(onDisk.count == 2)
        #expect(try DeltaTable.files(at: dir).count == 1)
        var skipped: [InteropSkippedColumn] = []
        #expect(try DeltaTable.read(at: dir, strict: false, skipped: &skipped).rowCount == table.rowCount)
    }

    @Test func malformedCommitsAreRefusedWithTheirLine() throws {
        let dir = try Self.scratch("malformed")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = try Self.writer(try Self.rows(Self.full, "date <= 2000-01-31")).write(to: dir, mode: nil)
        try Self.commitByHand(dir, version: 1, [#"{"commitInfo":{}}"#, "{not json"])
        do {
            _ = try DeltaTable.snapshot(at: dir)
            Issue.record("read a malformed commit")
        } catch let DeltaError.malformed(file, line, _) {
            #expect(file.hasSuffix("00000000000000000001.json") && line == 2)
        }
        #expect(throws: DeltaError.self) { _ = try DeltaTable.snapshot(at: dir + "/nothing") }
    }
}
