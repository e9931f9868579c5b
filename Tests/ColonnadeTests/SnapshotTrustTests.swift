import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// What a loader trusts (docs/SNAPSHOT_FORMAT.md, "What a load trusts"): a hostile file that is
/// structurally sound and has matching checksums must still never give a wrong answer from a
/// verifying load, and never a null row from a "whole block matches" fill.
@Suite struct SnapshotTrustTests {
    /// 3,000 rows of one ticker, `open` = row % 500 (so `open < 1000` holds everywhere), every
    /// 7th row null.
    static func table() throws -> QuoteTable {
        let n = 3_000
        var open = Column<Double>()
        for r in 0 ..< n { if r % 7 == 3 { open.appendNull() } else { open.append(Double(r % 500)) } }
        var t = try QuoteTable(
            schema: [ColumnDescriptor(name: "Open", type: .float64)], columns: [AnyColumn(open)],
            dates: Column<Int32>((0 ..< n).map { Int32($0) }), tickers: [TickerEntry(symbol: "A", firstRow: 0, rowCount: n)])
        t.computeSummaries()
        return t
    }

    /// Saves the table, then rewrites its `open` summaries with `edit` (footer checksum fixed).
    static func lyingSnapshot(_ dir: ScratchDirectory, _ edit: (inout BlockSummaries<Double>) -> Void) throws -> String {
        let path = dir.file("lying.snapshot")
        try table().save(to: path, durable: false)
        var image = SnapshotImage(path)
        image.editFooter { f in
            guard case .float64(var s)? = f.summaries?[1] else { preconditionFailure("no summaries") }
            edit(&s)
            f.summaries![1] = .float64(s)
        }
        image.write(to: path)
        return path
    }

    @Test func verifyingLoadRefusesSummariesThatExcludeTheData() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        // Every block claims its values are 5,000 … 6,000: `open < 1000` would prune them all.
        let path = try Self.lyingSnapshot(dir) { s in
            for b in 0 ..< s.count {
                s.minimums[b] = 5_000
                s.maximums[b] = 6_000
            }
        }
        let error = loadError(path)
        #expect(caseName(error) == "inconsistentData", "\(String(describing: error))")
        #expect(String(describing: error).contains("block summary 0 of open"))
        #expect(!QuoteTable.verifySnapshot(at: path).isValid)
        // The truthful file answers 3000 - nulls.
        let good = dir.file("good.snapshot")
        try Self.table().save(to: good, durable: false)
        let expected = (0 ..< 3_000).filter { $0 % 7 != 3 }.count
        #expect(try QuoteTable.load(from: good).select(where: "open < 1000").count == expected)
    }

    @Test func verifyingLoadRefusesAWrongNullCount() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = try Self.lyingSnapshot(dir) { s in s.unknownCounts[2] = 0 }
        let error = loadError(path)
        #expect(caseName(error) == "inconsistentData", "\(String(describing: error))")
        #expect(String(describing: error).contains("block summary 2 of open"))
    }

    @Test func verifyingLoadAcceptsLooseButTrueSummaries() throws {
        // Wider than the data is still true: no query can answer wrong from it.
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = try Self.lyingSnapshot(dir) { s in
            for b in 0 ..< s.count {
                s.minimums[b] = -1
                s.maximums[b] = 10_000
            }
        }
        #expect(loadError(path) == nil)
        #expect(try QuoteTable.load(from: path).select(where: "open >= 0").count == (0 ..< 3_000).filter { $0 % 7 != 3 }.count)
    }

    @Test func wholeBlockMatchNeverSelectsNullRows() throws {
        // A summary that claims no nulls: loaded without verification (trusted), `open > -1` makes
        // every block an "all" block; the null rows must still not match.
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = try Self.lyingSnapshot(dir) { s in for b in 0 ..< s.count { s.unknownCounts[b] = 0 } }
        let table = try QuoteTable.load(from: path, verify: false)
        let nulls = Set((0 ..< 3_000).filter { $0 % 7 == 3 })
        for expression in [
            "open > -1", "open >= 0 and open <= 499", "open > -1 or open > 1e9", "not open < 0",
            "ticker = A and open > -1",
        ] {
            for threads in [1, 2] {
                let rows = try table.select(where: expression, options: QueryOptions(threads: threads)).rows()
                #expect(rows.count == 3_000 - nulls.count, "\(expression)")
                #expect(rows.allSatisfy { !nulls.contains($0) }, "\(expression)")
            }
        }
    }

    @Test func wholeBlockFillAndsValidityOnRandomTables() throws {
        // Differential: summaries with unknown counts forced to 0 (as a hostile file could) give
        // the same answer as the reference, which never matches a null.
        for rows in [63, 64, 65, 511, 512, 513, 4_097] {
            var table = TestTables.random(rows: rows, tickers: 3, seed: UInt64(rows), nullRate: 0.2, specialRate: 0)
            for i in table.columns.indices {
                if case .float64(var c) = table.columns[i], var s = c.summaries {
                    for b in 0 ..< s.count { s.unknownCounts[b] = 0 }
                    c.summaries = s
                    table.columns[i] = .float64(c)
                }
            }
            for expression in ["f64 > -1e300", "adj_f64 > -1e300", "f64 > -1e300 or adj_f64 > -1e300", "i32 > 0 and f64 > -1e300"] {
                let got = try table.select(where: expression).rows()
                let expected = Reference.rows(try QueryParser(table: table).parse(expression), table: table)
                #expect(got == expected, "rows \(rows) \(expression)")
            }
        }
    }

    @Test func reservedHeaderBytesMustBeZero() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("s.snapshot")
        try Self.table().save(to: path, durable: false)
        for offset in [40, 47, 55, 64, 1_000, 4_095] {
            var image = SnapshotImage(path)
            image.bytes[offset] = 1
            image.fixHeaderChecksum()
            let bad = dir.file("bad-\(offset).snapshot")
            image.write(to: bad)
            let error = loadError(bad, verify: false)
            #expect(caseName(error) == "malformedHeader", "offset \(offset): \(String(describing: error))")
            #expect(String(describing: error).contains("header byte \(offset)"))
            #expect(!QuoteTable.verifySnapshot(at: bad).isValid)
        }
    }

    @Test func aGapBeforeTheFooterIsRefused() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("s.snapshot")
        try Self.table().save(to: path, durable: false)
        for gap in [64, 4_096, 1 << 31] {
            // Move the footer `gap` bytes further (a hole of zeros, sparse for the large one).
            var image = SnapshotImage(path)
            let footerBytes = Array(image.bytes[image.footerOffset ..< image.bytes.count - 24])
            let oldOffset = image.footerOffset
            image.bytes.removeSubrange(oldOffset...)
            let newOffset = oldOffset + gap
            let bad = dir.file("gap-\(gap).snapshot")
            image.setUInt64LE(UInt64(newOffset), at: 32)
            var trailer = SnapshotByteWriter()
            trailer.writeUInt64LE(SnapshotChecksum.hash(footerBytes, seed: UInt64(newOffset)))
            trailer.writeUInt64LE(UInt64(footerBytes.count))
            trailer.bytes += SnapshotFormat.magic
            image.setUInt64LE(UInt64(newOffset + footerBytes.count + 24), at: 16)
            image.fixHeaderChecksum()
            // Write the head, then the footer and trailer at their offset: the gap stays a hole.
            writeBytes(image.bytes, to: bad)
            let handle = try #require(FileHandle(forWritingAtPath: bad))
            try handle.seek(toOffset: UInt64(newOffset))
            try handle.write(contentsOf: Data(footerBytes + trailer.bytes))
            try handle.close()
            for verify in [true, false] {
                let error = loadError(bad, verify: verify)
                #expect(caseName(error) == "offsetOutOfRange", "gap \(gap): \(String(describing: error))")
                #expect(String(describing: error).contains("no gap"))
            }
            let report = QuoteTable.verifySnapshot(at: bad)
            #expect(!report.isValid)
            try? FileManager.default.removeItem(atPath: bad)
        }
    }

    @Test func aGapBetweenPayloadsIsRefused() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("s.snapshot")
        try Self.table().save(to: path, durable: false)
        // Insert 64 zero bytes before the `open` values and shift its offset (checksums fixed).
        var image = SnapshotImage(path)
        let f = image.footer
        let at = f.columns[1].values.offset
        image.bytes.insert(contentsOf: [UInt8](repeating: 0, count: 64), at: at)
        image.setUInt64LE(UInt64(image.footerOffset + 64), at: 32)
        var moved = f
        for i in moved.columns.indices {
            if moved.columns[i].values.offset >= at { moved.columns[i].values.offset += 64 }
            if let v = moved.columns[i].validity, v.offset >= at { moved.columns[i].validity!.offset += 64 }
        }
        image.replaceFooter(moved)
        image.fixPayloadChecksums()
        let bad = dir.file("bad.snapshot")
        image.write(to: bad)
        let error = loadError(bad, verify: false)
        #expect(caseName(error) == "offsetOutOfRange", "\(String(describing: error))")
        #expect(String(describing: error).contains("must be packed"))
    }
}
