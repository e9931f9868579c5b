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
        }
    }
}
