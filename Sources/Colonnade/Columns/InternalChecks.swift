/// Invariant checks that are too expensive for release builds.
///
/// Cheap checks (padding bits of a bitmask) run in debug builds through `assert`. The expensive
/// ones (dates sorted and unique per ticker after every upsert, every query mask's padding, ticker
/// index tiling the rows) compile in only with `-DCOLONNADE_INTERNAL_CHECKS`:
///
///     swift test -Xswiftc -DCOLONNADE_INTERNAL_CHECKS
///
/// `colonnade-bench` refuses to report numbers from such a build.
enum InternalChecks {
    /// Whether the expensive checks are compiled in.
    static var enabled: Bool {
        #if COLONNADE_INTERNAL_CHECKS
        return true
        #else
        return false
        #endif
    }

    /// Traps if the table breaks its physical-layout invariants.
    static func check(_ table: QuoteTable, _ context: @autoclosure () -> String) {
        guard enabled else { return }
        var next = 0
        for t in table.tickers {
            precondition(t.firstRow == next, "\(context()): ticker index does not tile the rows at \(t.symbol)")
            next += t.rowCount
        }
        precondition(next == table.rowCount, "\(context()): ticker index covers \(next) of \(table.rowCount) rows")
        for c in table.columns { precondition(c.count == table.rowCount, "\(context()): column length differs") }
        if let problem = QuoteTable.dateOrderProblem(table.dates, table.tickers) {
            preconditionFailure("\(context()): \(problem)")
        }
    }

    /// Traps if a mask has bits set past its row count.
    static func check(_ mask: Bitmask, _ context: @autoclosure () -> String) {
        guard enabled else { return }
        precondition(mask.paddingIsClear, "\(context()): bitmask padding bits are set")
    }
}

extension Bitmask {
    /// Whether the bits past `count` in the last word are zero (they always must be).
    var paddingIsClear: Bool {
        let tail = count & 63
        guard tail != 0 else { return true }
        return withUnsafeWords { $0[$0.count - 1] >> UInt64(tail) == 0 }
    }
}
