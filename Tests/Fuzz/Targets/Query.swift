// fuzz-modules: Colonnade ColonnadeTestSupport
//
// The query parser, then the engine on what parses: the input is an expression (UTF-8, invalid
// bytes replaced); an optional second part after a line `--` is an aggregate list (`count, sum(close)`).
// Every parsed predicate is evaluated over a small seeded table (two blocks of 4096 rows, nulls,
// NaN, ±∞, extreme Int64s) with and without block summaries, and must select exactly the rows
// the row-at-a-time reference (ColonnadeTestSupport's `Reference`) selects.
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
            if u < 0.04 { volume.appendNull() } else if u < 0.07 { volume.append(extremes[Int(rng.next() % 6)]) } else {
                volume.append(Int64(rng.next() % 10_000_000))
            }
            if let v = value(base * 0.97) { adjClose.append(Float(v)) } else { adjClose.appendNull() }
            if rng.nextUnit() < 0.5 { split.appendNull() } else { split.append(rng.nextUnit() < 0.01 ? Int32.max : 1) }
        }
    }
    let schema = [ColumnDescriptor(name: "Open", type: .float64), ColumnDescriptor(name: "High", type: .float64),
                  ColumnDescriptor(name: "Low", type: .float64), ColumnDescriptor(name: "Close", type: .float64),
                  ColumnDescriptor(name: "Volume", type: .int64), ColumnDescriptor(name: "Adj. Close", type: .float32),
                  ColumnDescriptor(name: "Split Ratio", type: .int32)]
    do {
        var table = try QuoteTable(
            sortingRows: symbols.map { TickerEntry(symbol: $0) }, rowTickers: rowTickers, dates: dates, schema: schema,
            columns: [AnyColumn(open), AnyColumn(high), AnyColumn(low), AnyColumn(close), AnyColumn(volume),
                      AnyColumn(adjClose), AnyColumn(split)])
        table.computeSummaries()
        return table
    } catch {
        fatalError("fuzz table: \(error)")
    }
}()

// LeakSanitizer: see Support/Harness.swift (`buildOnce`).
@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    lsanDisable()
    _ = table.rowCount
    lsanEnable()
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let parts = text.components(separatedBy: "\n--\n")
    let expression = parts[0]
    let predicate: RowPredicate
    do {
        predicate = try QueryParser(table: table).parse(expression)
    } catch {
        _ = error.description
        return 0
    }
    let expected = Reference.rows(predicate, table: table)
    for useSummaries in [true, false] {
        let selection: Selection
        do {
            selection = try table.select(predicate, options: QueryOptions(threads: 1, useBlockSummaries: useSummaries))
        } catch {
            // The parser accepted it, so the planner may only refuse what the parser cannot check.
            _ = error.description
            return 0
        }
        let rows = selection.rows()
        if rows != expected {
            let firstDifference = zip(rows, expected).first { $0 != $1 }.map { "\($0)" } ?? "lengths"
            fatalError("\(expression): \(rows.count) rows selected, reference \(expected.count) (summaries \(useSummaries), first difference \(firstDifference))")
        }
        if parts.count > 1, let aggregates = try? Aggregate.parseList(parts[1]) {
            _ = try? selection.aggregate(aggregates, byTicker: useSummaries)
        }
    }
    return 0
}
