// fuzz-modules: Colonnade ColonnadeTestSupport
//
// The snapshot reader: structure (header, trailer, footer sections, payload layout), then a query
// over what loads, for the verifying and the non-verifying load, `snapshotInfo` and `verifySnapshot`.
//
// A hostile file carries correct checksums (they detect damage, not tampering), so before loading
// the harness *reseals* the input: it recomputes every payload checksum the COLS section points
// at, the footer checksum, the file length and the header checksum. Mutations then reach the
// parsers and the engine instead of dying at the first checksum.
//
// Input = a snapshot without its header page's zero padding: bytes 0..<64 of the header, then the
// file from byte 4096 on (offsets inside stay file offsets). `FUZZ_DUMP_SNAPSHOT=path` writes the
// expanded, resealed file (to turn a finding into a test fixture); `FUZZ_MAKE_SEEDS=dir` writes
// the seed corpus (small snapshots of seeded tables, compacted) and exits.
//
// Oracle: when `verifySnapshot` finds nothing wrong and the verifying load succeeds, every query
// must select exactly the rows the row-at-a-time reference selects (so lying zone maps, validity
// bits or dates a verified load lets through show up as wrong answers). Non-verifying loads trust
// their payloads (docs/SNAPSHOT_FORMAT.md), so there only crashes count.
@testable import Colonnade
import ColonnadeTestSupport
import Foundation

let headerPage = 4096
let headerBytes = 64
let path = (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") + "/colonnade-fuzz-\(getpid()).snapshot"

// LeakSanitizer: see Support/Harness.swift (`buildOnce`).
@_cdecl("LLVMFuzzerInitialize")
public func initialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    if let dir = ProcessInfo.processInfo.environment["FUZZ_MAKE_SEEDS"] {
        makeSeeds(into: dir)
        exit(0)
    }
    atexit { unlink(path) }
    lsanDisable()
    _ = path
    lsanEnable()
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= headerBytes else { return -1 }
    var file = [UInt8](repeating: 0, count: size - headerBytes + headerPage)
    file.replaceSubrange(0 ..< headerBytes, with: UnsafeBufferPointer(start: data, count: headerBytes))
    file.replaceSubrange(headerPage..., with: UnsafeBufferPointer(start: data + headerBytes, count: size - headerBytes))
    reseal(&file)
    if let dump = ProcessInfo.processInfo.environment["FUZZ_DUMP_SNAPSHOT"] { write(file, to: dump) }
    write(file, to: path)

    if let info = try? QuoteTable.snapshotInfo(at: path) { _ = "\(info)" }
    let verification = QuoteTable.verifySnapshot(at: path)
    for problem in verification.problems { _ = problem.description }
    if let table = try? QuoteTable.load(from: path, verify: false) {
        query(table, checked: false)
    }
    if let table = try? QuoteTable.load(from: path, verify: true), verification.isValid {
        query(table, checked: true)
    }
    return 0
}

/// Runs a few predicates per column (with and without block summaries) and aggregates; with
/// `checked`, compares every selection with the reference.
func query(_ table: QuoteTable, checked: Bool) {
    var predicates: [RowPredicate] = [.constant(true), .tickers(table.tickers.prefix(2).map(\.symbol))]
    if table.rowCount > 0 {
        // A date is any Int32 to the format (an unverified load trusts it): the week around it is
        // clamped, not computed with trapping arithmetic (finding 11, a harness bug).
        let day = table.dates[table.rowCount / 2]
        let week = Int32(clamping: Int(day) - 3) ... Int32(clamping: Int(day) + 3)
        predicates += [.dates(.atLeast(day)), .dates(.closed(week.lowerBound, week.upperBound)), .not(.dates(.less(than: day)))]
    }
    for descriptor in table.schema.prefix(8) {
        let name = descriptor.identifier
        predicates += [
            .range(column: name, bounds: .greater(than: 0)), .range(column: name, bounds: .less(than: 1000)),
            .range(column: name, bounds: .open(60, 90)), .not(.range(column: name, bounds: .atMost(75))),
            .range(column: name, bounds: .any),
        ]
    }
    for predicate in predicates {
        // The row-at-a-time reference is most of this target's time: computed once per predicate.
        var expected: [Int]?
        for useSummaries in [true, false] {
            guard let selection = try? table.select(predicate, options: QueryOptions(threads: 1, useBlockSummaries: useSummaries)) else {
                continue
            }
            if checked {
                if expected == nil { expected = Reference.rows(predicate, table: table) }
                guard let expected else { continue }
                let rows = selection.rows()
                if rows != expected {
                    fatalError(
                        "verified snapshot, \(predicate) (summaries \(useSummaries)): \(rows.count) rows, reference \(expected.count)")
                }
            }
            if let column = table.schema.first?.identifier {
                _ = try? selection.aggregate(
                    [.count, .sum(column), .min(column), .max(column), .mean(column)], byTicker: true,
                    options: QueryOptions(threads: 1))
            }
        }
    }
}

// MARK: Resealing

func u64(_ b: [UInt8], _ o: Int) -> UInt64 {
    var v: UInt64 = 0
    for i in (0 ..< 8).reversed() { v = v << 8 | UInt64(b[o + i]) }
    return v
}

func u32(_ b: [UInt8], _ o: Int) -> UInt32 {
    UInt32(b[o]) | UInt32(b[o + 1]) << 8 | UInt32(b[o + 2]) << 16 | UInt32(b[o + 3]) << 24
}

func put(_ v: UInt64, _ b: inout [UInt8], _ o: Int) {
    for i in 0 ..< 8 { b[o + i] = UInt8(truncatingIfNeeded: v >> (8 * UInt64(i))) }
}

func checksum(_ b: [UInt8], _ range: Range<Int>, seed: UInt64) -> UInt64 {
    b.withUnsafeBytes { SnapshotChecksum.hash(UnsafeRawBufferPointer(rebasing: $0[range]), seed: seed) }
}

/// Makes every checksum the reader checks agree with the bytes, and the recorded length with the size.
func reseal(_ b: inout [UInt8]) {
    let size = b.count
    put(UInt64(size), &b, 16)
    let footerEnd = size - 24
    let f = u64(b, 32)
    if size >= headerPage + 24, f >= UInt64(headerPage), f <= UInt64(footerEnd) {
        let footer = Int(f)
        // Walk the sections; in COLS, recompute the checksum of every payload that lies in the file.
        var s = footer
        while s + 16 <= footerEnd {
            let tag = String(decoding: b[s ..< s + 4], as: UTF8.self)
            let length = u64(b, s + 8)
            guard length <= UInt64(footerEnd - s - 16) else { break }
            let body = s + 16
            if tag == "COLS", length >= 12 {
                let entries = Int(u32(b, body + 8))
                for e in 0 ..< entries {
                    let entry = body + 12 + 52 * e
                    guard entry + 52 <= body + Int(length) else { break }
                    for (offsetField, lengthField, sumField) in [(4, 12, 20), (28, 36, 44)] {
                        let offset = u64(b, entry + offsetField), count = u64(b, entry + lengthField)
                        guard offset <= UInt64(size), count <= UInt64(size) else { continue }
                        let padded = (Int(count) + 63) & ~63
                        guard Int(offset) + padded <= size else { continue }
                        put(checksum(b, Int(offset) ..< Int(offset) + padded, seed: offset), &b, entry + sumField)
                    }
                }
            }
            s = body + (Int(length) + 7) & ~7
        }
        put(checksum(b, footer ..< footerEnd, seed: f), &b, size - 24)
    }
    if size >= headerPage {
        for i in 56 ..< 64 { b[i] = 0 }
        put(checksum(b, 0 ..< headerPage, seed: 0), &b, 56)
    }
}

func write(_ bytes: [UInt8], to path: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else { fatalError("cannot write \(path): errno \(errno)") }
    let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    guard written == bytes.count else { fatalError("short write to \(path)") }
    close(fd)
}

// MARK: Seeds

func makeSeeds(into dir: String) {
    let tables: [(String, QuoteTable)] = [
        ("empty", QuoteTable(schema: [ColumnDescriptor(name: "Close", type: .float64)])),
        ("small", TestTables.random(rows: 40, tickers: 2, seed: 1, nullRate: 0.1, specialRate: 0.1)),
        ("nulls", TestTables.random(rows: 100, tickers: 3, seed: 2, nullRate: 0.5, specialRate: 0.2)),
        (
            "two-blocks",
            { () -> QuoteTable in
                let wide = TestTables.random(rows: 4_200, tickers: 2, seed: 3)
                do {
                    var t = try QuoteTable(
                        schema: [wide.schema[3]], columns: [wide.columns[3]], dates: wide.dates,
                        tickers: wide.tickers, dateColumnName: "Date", metadata: ["source": "fuzz seed"])
                    t.computeSummaries()
                    return t
                } catch {
                    fatalError("seed table: \(error)")
                }
            }()
        ),
    ]
    for (name, table) in tables {
        let full = dir + "/" + name + ".full"
        do {
            try table.save(to: full, durable: false)
        } catch {
            fatalError("seed \(name): \(error)")
        }
        guard let bytes = FileManager.default.contents(atPath: full).map(Array.init) else { fatalError("seed \(name) unreadable") }
        unlink(full)
        precondition(bytes[headerBytes ..< headerPage].allSatisfy { $0 == 0 })
        write(Array(bytes[0 ..< headerBytes] + bytes[headerPage...]), to: dir + "/" + name + ".snapshot")
    }
}
