import Foundation
import Synchronization
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// A deferred merge (`upsert(contentsOf:threads:deferringColumns:)`, how a store's version with
/// segments is read: ARCHITECTURE.md, *Versions and appends*) against the eager one, the obviously
/// correct reference: the same table bit for bit — values, nulls, summaries, schema, tickers,
/// dates — on random tables with replaced rows, new tickers, new columns, widened types and nulls;
/// copies, mutations and concurrent first reads; a store's reader through compaction and gc.
@Suite struct DeferredMergeTests {
    /// Base and segments as `SnapshotStoreTests` builds them.
    static func sources(seed: UInt64, segments: Int) -> (QuoteTable, [QuoteTable]) {
        let base = TestTables.random(rows: 4_000, tickers: 7, seed: seed)
        let segs = (0 ..< segments).map { SnapshotStoreTests.segment(seed: seed &* 31 &+ UInt64($0), rows: 500, tickers: 10) }
        return (base, segs)
    }

    static func isPending(_ c: AnyColumn) -> Bool {
        switch c {
        case .int32(let x): x.isPending
        case .int64(let x): x.isPending
        case .float32(let x): x.isPending
        case .float64(let x): x.isPending
        }
    }

    /// The block summaries, printed (NaN prints alike, where `==` on them would not hold).
    static func summaries(_ c: AnyColumn) -> String {
        switch c {
        case .int32(let x): String(describing: x.summaries)
        case .int64(let x): String(describing: x.summaries)
        case .float32(let x): String(describing: x.summaries)
        case .float64(let x): String(describing: x.summaries)
        }
    }

    /// Every column of `a` and `b`, bit for bit, with the same validity presence and summaries.
    static func expectSame(_ a: QuoteTable, _ b: QuoteTable, _ context: String) {
        #expect(a.schema == b.schema, "\(context)")
        #expect(a.tickers == b.tickers, "\(context)")
        #expect(a.dates == b.dates, "\(context)")
        #expect(a.metadata == b.metadata, "\(context)")
        for (i, (x, y)) in zip(a.columns, b.columns).enumerated() {
            #expect(x == y, "\(context): column \(a.schema[i].name)")
            #expect((x.validity == nil) == (y.validity == nil), "\(context): validity of \(a.schema[i].name)")
            #expect(Self.summaries(x) == Self.summaries(y), "\(context): summaries of \(a.schema[i].name)")
        }
        #expect(a.hasSummaries == b.hasSummaries, "\(context)")
    }

    @Test(arguments: [UInt64(1), 2, 3, 4, 5])
    func deferredMergeIsTheEagerMergeBitForBit(seed: UInt64) throws {
        for segments in [1, 3, 12] {
            let (base, segs) = Self.sources(seed: seed, segments: segments)
            var eager = base
            eager.upsert(contentsOf: segs, threads: 2)
            var deferred = base
            deferred.upsert(contentsOf: segs, threads: 2, deferringColumns: true)
            // Nothing read yet: every value column is still to be merged.
            #expect(deferred.columns.allSatisfy(Self.isPending), "seed \(seed), \(segments) segments")
            #expect(deferred.dates.isPending && deferred.hasSummaries, "seed \(seed), \(segments) segments")
            #expect(deferred.rowCount == eager.rowCount)
            Self.expectSame(deferred, eager, "seed \(seed), \(segments) segments")
            #expect(!deferred.columns.contains(where: Self.isPending))
            // The same answers to queries over the columns.
            for q in ["80 < f64 < 83", "i32 > 70 and f32 < 90", "not (i64 >= 75000)", "f64 > mavg(f64, 5)"] {
                guard eager.schema.contains(where: { q.contains($0.identifier) }) else { continue }
                let e = try? eager.select(where: q).rows(), d = try? deferred.select(where: q).rows()
                #expect(e == d, "\(q)")
            }
        }
    }

    /// The summarized gather (pieces on threads, each summarized while in cache: how a pending
    /// column and a version's dates are merged) against the plain gather then `computeSummaries`,
    /// the reference: the same values and summaries bit for bit, over several chunks and pieces,
    /// runs crossing chunks, pieces and blocks, NaN, ±0, a block of only NaN, integer extremes; 1
    /// and 2 threads.
    @Test(arguments: [UInt64(1), 2, 3])
    func summarizedGatherIsTheGatherThenSummaries(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let sizes = [70_001, 3_000, 40_000]
        let doubles: [Column<Double>] = sizes.enumerated().map { s, n in
            Column(
                (0 ..< n).map { r -> Double in
                    if s == 1 && (512 ..< 1_536).contains(r) { return .nan }  // whole blocks of NaN
                    switch rng.below(20) {
                    case 0: return .nan
                    case 1: return 0.0
                    case 2: return -0.0
                    default: return Double(rng.below(1_000)) / 8 - 60
                    }
                })
        }
        let ints: [Column<Int32>] = sizes.map { n in
            Column((0 ..< n).map { _ in rng.chance(10) ? (rng.chance(2) ? .min : .max) : Int32(truncatingIfNeeded: rng.next()) })
        }
        var runs: [UpsertPlan.Run] = []
        var total = 0
        while total < 4 * 8 * QuoteTable.gatherPieceRows + 12_345 {  // four chunks of pieces and a part
            let s = rng.below(sizes.count), start = rng.below(sizes[s])
            let count = 1 + rng.below(Swift.min(sizes[s] - start, rng.chance(4) ? 40_000 : 700))
            runs.append(UpsertPlan.Run(source: s, start: start, count: count))
            total += count
        }
        var expectedDoubles = QuoteTable.gather(runs, total: total) { doubles[$0] }
        expectedDoubles.shrinkToFit()
        expectedDoubles.computeSummaries()
        var expectedInts = QuoteTable.gather(runs, total: total) { ints[$0] }
        expectedInts.shrinkToFit()
        expectedInts.computeSummaries()
        for threads in [1, 2] {
            let d = try #require(QuoteTable.gatherSummarized(runs, total: total, threads: threads) { doubles[$0] })
            #expect(d.count == total && d.validity == nil)
            #expect(d.withUnsafeBufferPointer { $0.map(\.bitPattern) } == expectedDoubles.withUnsafeBufferPointer { $0.map(\.bitPattern) })
            let (s, e) = (try #require(d.summaries), try #require(expectedDoubles.summaries))
            #expect(s.minimums.map(\.bitPattern) == e.minimums.map(\.bitPattern), "threads \(threads)")
            #expect(s.maximums.map(\.bitPattern) == e.maximums.map(\.bitPattern), "threads \(threads)")
            #expect(s.unknownCounts == e.unknownCounts, "threads \(threads)")
            let i = try #require(QuoteTable.gatherSummarized(runs, total: total, threads: threads) { ints[$0] })
            #expect(i == expectedInts, "threads \(threads)")
            #expect(i.summaries == expectedInts.summaries, "threads \(threads)")
        }
        // A source with nulls, a missing source or a type without fast summaries: the plain gather's.
        var withNull = doubles[0]
        withNull.appendNull()
        #expect(QuoteTable.gatherSummarized(runs, total: total, threads: 2) { $0 == 0 ? withNull : doubles[$0] } == nil)
        #expect(QuoteTable.gatherSummarized(runs, total: total, threads: 2) { $0 == 2 ? nil : doubles[$0] } == nil)
        let int64s = sizes.map { Column<Int64>([Int64](repeating: 7, count: $0)) }
        #expect(QuoteTable.gatherSummarized(runs, total: total, threads: 2) { int64s[$0] } == nil)
    }

    /// Copies share the one merge; a mutation of one copy (an append, a write through the buffer)
    /// leaves the other as merged; the first reads, from several threads at once, agree.
    @Test func copiesMutationsAndConcurrentFirstReads() throws {
        let (base, segs) = Self.sources(seed: 9, segments: 5)
        var eager = base
        eager.upsert(contentsOf: segs, threads: 1)
        var deferred = base
        deferred.upsert(contentsOf: segs, threads: 1, deferringColumns: true)
        let copy = deferred
        let index = try #require(deferred.schema.firstIndex { $0.type == .float64 })
        // Eight threads read the pending column first, at once.
        let sums = Mutex<[Double]>([])
        let column = deferred.columns[index]
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let s = Double.unwrap(column)!.withUnsafeBufferPointer { $0.reduce(0, +) }
            sums.withLock { $0.append(s) }
        }
        let expectedSum = Double.unwrap(eager.columns[index])!.withUnsafeBufferPointer { $0.reduce(0, +) }
        #expect(sums.withLock { $0 }.allSatisfy { $0.bitPattern == expectedSum.bitPattern })
        // Mutate one copy's pending columns; the other copy still reads the merge.
        var mutated = Double.unwrap(deferred.columns[index])!
        mutated.withUnsafeMutableBufferPointer { $0[0] = -1 }
        #expect(mutated[0] == -1 && Double.unwrap(copy.columns[index])![0] == Double.unwrap(eager.columns[index])![0])
        for (i, c) in copy.columns.enumerated() where i != index {
            guard case .int32(var x) = c else { continue }
            x.append(7)
            #expect(x.count == eager.rowCount + 1 && x[x.count - 1] == 7)
        }
        Self.expectSame(copy, eager, "copy")
    }

    /// A reader of a store's version with segments, whose columns are read only after a
    /// compaction and a gc removed the files it was merged from, reads the version it opened.
    @Test func pendingColumnsOfAStoreReadAfterCompactionAndGC() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("d.snapshot")
        let store = SnapshotStore(at: path)
        let (base, segs) = Self.sources(seed: 11, segments: 4)
        try store.write(base, durable: false)
        for s in segs { try store.append(s, durable: false) }
        let expected = SnapshotStoreTests.model(base, segs)
        let reader = try store.table()
        #expect(reader.columns.allSatisfy(Self.isPending))
        try store.append(SnapshotStoreTests.segment(seed: 99), durable: false)
        #expect(try store.compact(durable: false) != nil)
        _ = try store.collectGarbage(keepLast: 1, keepDays: nil, durable: false)
        for f in try store.log().files { #expect(FileManager.default.fileExists(atPath: dir.file("d.snapshot.data/" + f.name))) }
        Self.expectSame(reader, expected, "read after gc")
        #expect(try QuoteTable.load(from: path) == SnapshotStoreTests.model(base, segs + [SnapshotStoreTests.segment(seed: 99)]))
    }

    /// A query merges only the columns it reads (the evaluator must not read every column's
    /// values up front): after each query the other columns are still to be merged.
    @Test func aQueryMergesOnlyTheColumnsItReads() throws {
        let (base, segs) = Self.sources(seed: 13, segments: 3)
        var eager = base
        eager.upsert(contentsOf: segs, threads: 1)
        let names = eager.schema.filter { $0.type == .float64 }.map(\.identifier)
        let name = try #require(names.first)
        for q in ["\(name) > 80", "\(name) > mavg(\(name), 5) and \(name) > 1.01 * prev(\(name))", "\(name) > ema(\(name), 3)"] {
            var deferred = base
            deferred.upsert(contentsOf: segs, threads: 2, deferringColumns: true)
            #expect(try deferred.select(where: q).rows() == eager.select(where: q).rows(), "\(q)")
            for (d, c) in zip(deferred.schema, deferred.columns) {
                #expect(Self.isPending(c) == (d.identifier != name), "\(q): \(d.name)")
            }
            #expect(deferred.dates.isPending, "\(q): the dates")  // no query here reads a day
        }
    }
}
