// fuzz-modules: Colonnade ColonnadeTestSupport
//
// The query parser, then the engine on what parses: the input is an expression (UTF-8, invalid
// bytes replaced); an optional second part after a line `--` is an aggregate list (`count, sum(close)`).
// Every parsed predicate is evaluated over a small seeded table (two blocks of 4096 rows, nulls,
// NaN, ±∞, extreme Int64s) with and without block summaries, and must select exactly the rows
// the row-at-a-time reference (ColonnadeTestSupport's `Reference`) selects.
//
// Deep and long inputs (issue 28): an input starting with byte 0x01 is a recipe, not text —
// bytes 1-2 (little-endian) a count n (at most `maxRepeats`), then `open`, `core` and `close`
// separated by 0x00 bytes — expanded to `open` n times, `core`, `close` n times. `(` … `)` makes
// nesting, `not ` a prefix run, `` … ` + close` a flat chain; mutations of the three parts
// explore every shape at every depth and length. Such an input must parse, or fail with a
// QueryError (one naming the nesting cap past 1,000 levels), and never exhaust the stack.
@testable import Colonnade
import ColonnadeTestSupport

/// A table whose columns carry the names the README and the tests use.
let table: QuoteTable = {
    var rng = SplitMix64(seed: 11)
    let symbols = ["AAPL", "BRK.A", "FDX", "ZEN"]
    let specials: [Double] = [.nan, 0, -0.0, .infinity, -.infinity, 80, 83, .greatestFiniteMagnitude, -1]
    let extremes: [Int64] = [.max, .min, 1 << 53, (1 << 53) + 1, -(1 << 53) - 1, 0]
    var rowTickers = [Int32](), dates = Column<Int32>()
    var open = Column<Double>(), high = Column<Double>(), low = Column<Double>(), close = Column<Double>()
    var volume = Column<Int64>(), adjClose = Column<Float>(), split = Column<Int32>()
    for t in 0 ..< symbols.count {
        var day = Int32(16_000 + Int(rng.next() % 50))
        for _ in 0 ..< 2_100 {
            rowTickers.append(Int32(t))
            dates.append(day)
            day += Int32(1 + rng.next() % 3)
            let base = 60 + 40 * rng.nextUnit()
            func value(_ x: Double) -> Double? {
                let u = rng.nextUnit()
                if u < 0.04 { return nil }
                if u < 0.06 { return specials[Int(rng.next() % UInt64(specials.count))] }
                return (x * 100).rounded() / 100
            }
            if let v = value(base) { open.append(v) } else { open.appendNull() }
            if let v = value(base + 2) { high.append(v) } else { high.appendNull() }
            if let v = value(base - 2) { low.append(v) } else { low.appendNull() }
            if let v = value(base + 1) { close.append(v) } else { close.appendNull() }
            let u = rng.nextUnit()
            if u < 0.04 {
                volume.appendNull()
            } else if u < 0.07 {
                volume.append(extremes[Int(rng.next() % 6)])
            } else {
                volume.append(Int64(rng.next() % 10_000_000))
            }
            if let v = value(base * 0.97) { adjClose.append(Float(v)) } else { adjClose.appendNull() }
            if rng.nextUnit() < 0.5 { split.appendNull() } else { split.append(rng.nextUnit() < 0.01 ? Int32.max : 1) }
        }
    }
    let schema = [
        ColumnDescriptor(name: "Open", type: .float64), ColumnDescriptor(name: "High", type: .float64),
        ColumnDescriptor(name: "Low", type: .float64), ColumnDescriptor(name: "Close", type: .float64),
        ColumnDescriptor(name: "Volume", type: .int64), ColumnDescriptor(name: "Adj. Close", type: .float32),
        ColumnDescriptor(name: "Split Ratio", type: .int32),
    ]
    do {
        var table = try QuoteTable(
            sortingRows: symbols.map { TickerEntry(symbol: $0) }, rowTickers: rowTickers, dates: dates, schema: schema,
            columns: [
                AnyColumn(open), AnyColumn(high), AnyColumn(low), AnyColumn(close), AnyColumn(volume),
                AnyColumn(adjClose), AnyColumn(split),
            ])
        table.computeSummaries()
        return table
    } catch {
        fatalError("fuzz table: \(error)")
    }
}()

// LeakSanitizer: see Support/Harness.swift (`buildOnce`).
@_cdecl("LLVMFuzzerInitialize")
public func initialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    lsanDisable()
    _ = table.rowCount
    lsanEnable()
    return 0
}

/// Repetitions a recipe may ask for: 100,000 units of a few tokens each, a few hundred thousand
/// tokens (and up to a few MB of text) at most.
let maxRepeats = 100_000

/// Expressions longer than this (in bytes) are not checked against `Reference` (see `fuzz`).
let referenceLimit = 4_096

/// Expressions longer than this (in bytes) are parsed and planned, not evaluated: evaluating a
/// 100,000-term chain over the table twice takes seconds under the sanitizers, which would
/// starve the rest of the run (the unit tests evaluate such chains against plain loops).
let evaluationLimit = 65_536

/// The text of an input: a recipe (see the top of the file) expanded, or the bytes as UTF-8.
func expressionText(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
    guard bytes.count >= 3, bytes[0] == 0x01 else { return String(decoding: bytes, as: UTF8.self) }
    let n = min(Int(bytes[1]) | Int(bytes[2]) << 8, maxRepeats)
    let parts = bytes[3...].split(separator: 0x00, maxSplits: 2, omittingEmptySubsequences: false)
        .map { String(decoding: $0, as: UTF8.self) }
    let open = parts[0], core = parts.count > 1 ? parts[1] : "", close = parts.count > 2 ? parts[2] : ""
    var text = ""
    text.reserveCapacity((open.utf8.count + close.utf8.count) * n + core.utf8.count)
    for _ in 0 ..< n { text += open }
    text += core
    for _ in 0 ..< n { text += close }
    return text
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    // Split off the aggregate list before expanding (splitting a few MB of expanded text with
    // Foundation took a third of the run's time).
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let separator = Array("\n--\n".utf8)
    var cut = bytes.count
    if bytes.count >= separator.count {
        for i in 0 ... bytes.count - separator.count
        where bytes[i] == separator[0] && bytes[i ..< i + separator.count].elementsEqual(separator) {
            cut = i
            break
        }
    }
    let expression = expressionText(UnsafeBufferPointer(rebasing: bytes[..<cut]))
    let aggregateList: String? = cut < bytes.count ? String(decoding: bytes[(cut + separator.count)...], as: UTF8.self) : nil
    let predicate: RowPredicate
    do {
        predicate = try QueryParser(table: table).parse(expression)
    } catch {
        _ = error.description
        // Past the cap the error names the construct that goes one level too deep.
        if error.message.contains("levels deep"), error.offset == nil {
            fatalError("\(expression.prefix(80)): a nesting error without a position")
        }
        return 0
    }
    if expression.utf8.count > evaluationLimit {
        do {
            _ = try table.plan(predicate)
        } catch {
            if error.message.contains("levels deep") { fatalError("\(expression.prefix(80)): parsed, then refused as \(error)") }
        }
        return 0
    }
    // The reference costs rows × terms of slow, obviously-correct steps (minutes for a 20,000-term
    // chain); past `referenceLimit` bytes the two engine paths are held to each other instead.
    var expected: [Int]? = expression.utf8.count <= referenceLimit ? Reference.rows(predicate, table: table) : nil
    for useSummaries in [true, false] {
        let selection: Selection
        do {
            selection = try table.select(predicate, options: QueryOptions(threads: 1, useBlockSummaries: useSummaries))
        } catch {
            // The parser accepted it, so the planner may only refuse what the parser cannot check,
            // and never its nesting: whatever parses is within the planner's depth.
            if error.message.contains("levels deep") { fatalError("\(expression.prefix(80)): parsed, then refused as \(error)") }
            _ = error.description
            return 0
        }
        let rows = selection.rows()
        guard let expected else {
            expected = rows
            continue
        }
        if rows != expected {
            let firstDifference = zip(rows, expected).first { $0 != $1 }.map { "\($0)" } ?? "lengths"
            fatalError(
                "\(expression): \(rows.count) rows selected, reference \(expected.count) (summaries \(useSummaries), first difference \(firstDifference))"
            )
        }
        if let aggregateList, let aggregates = try? Aggregate.parseList(aggregateList) {
            _ = try? selection.aggregate(aggregates, byTicker: useSummaries)
        }
    }
    return 0
}
