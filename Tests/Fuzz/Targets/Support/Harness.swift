// Shared by every fuzz target (Tests/Fuzz/build.sh compiles Targets/Support/*.swift into each).
@testable import Colonnade

// Long-lived objects built once are made before fuzzing starts, with LeakSanitizer told to ignore
// them: it cannot see references that Swift stores inside multi-payload enums (`AnyColumn`),
// where the case tag shares the pointer's spare bits, and would report them as leaks.
@_silgen_name("__lsan_disable") func lsanDisable()
@_silgen_name("__lsan_enable") func lsanEnable()

/// Builds `make()` with LeakSanitizer off (see above); call from `LLVMFuzzerInitialize`.
func buildOnce<T>(_ make: () -> T) -> T {
    lsanDisable()
    defer { lsanEnable() }
    return make()
}

/// A table that decoded rows are merged into, as `import` merges into a snapshot: ticker FUZZ,
/// 2014-01-02 and 2014-01-03, Float64 columns Open, Close, Volume. Built directly (not decoded),
/// so targets need not link the response decoders.
let importBase: QuoteTable = {
    let schema = ["Open", "Close", "Volume"].map { ColumnDescriptor(name: $0, type: .float64) }
    do {
        return try QuoteTable(
            schema: schema,
            columns: [
                AnyColumn(Column<Double>([4, 1])), AnyColumn(Column<Double>([5, 2])),
                AnyColumn(Column<Double>([6, 3])),
            ],
            dates: Column<Int32>([16_072, 16_073]), tickers: [TickerEntry(symbol: "FUZZ", firstRow: 0, rowCount: 2)])
    } catch {
        fatalError("fuzz base table: \(error)")
    }
}()

/// Puts a table a reader produced through what `import` does with it next: the invariants
/// (COLONNADE_INTERNAL_CHECKS: rows tiled by ticker, dates strictly ascending per ticker), an
/// upsert into an existing table (twice: the same rows again replace themselves), block
/// summaries, a query per column, an aggregate, a subtable.
func exerciseImported(_ decoded: QuoteTable) {
    var table = decoded
    InternalChecks.check(table, "decoded")
    precondition(table.columns.allSatisfy { $0.count == table.rowCount }, "a column's length differs from the row count")
    precondition(table.dates.count == table.rowCount, "the date column's length differs from the row count")
    var merged = importBase
    merged.upsert(table)
    InternalChecks.check(merged, "upserted")
    let once = merged.rowCount
    merged.upsert(table)
    InternalChecks.check(merged, "upserted twice")
    precondition(merged.rowCount == once, "upserting the same rows again changed the row count")
    table.computeSummaries()
    for descriptor in table.schema.prefix(6) {
        let name = descriptor.identifier
        if let selection = try? table.select(.range(column: name, bounds: .greater(than: 0)), options: QueryOptions(threads: 1)) {
            _ = try? selection.aggregate(
                [.count, .sum(name), .min(name), .max(name), .mean(name)], byTicker: true,
                options: QueryOptions(threads: 1))
        }
    }
}
