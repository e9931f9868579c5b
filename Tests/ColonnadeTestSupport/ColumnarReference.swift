import Colonnade

/// `Reference` with the columns read once: the same row-at-a-time three-valued logic, fast enough
/// for tables of tens of thousands of rows in debug builds.
public struct ColumnarReference {
    let table: QuoteTable
    let values: [String: [Double?]]
    let tickerOfRow: [Int32]
    let dates: [Int32]

    public init(_ table: QuoteTable) {
        self.table = table
        var values = [String: [Double?]]()
        for (i, d) in table.schema.enumerated() {
            let column = table.columns[i]
            let all = (0 ..< table.rowCount).map { column.doubleValue(at: $0) }
            values[d.identifier] = all
            values[d.name] = all
        }
        self.values = values
        tickerOfRow = (0 ..< table.rowCount).map { table.tickerNumber(ofRow: $0) }
        dates = (0 ..< table.rowCount).map { table.dates[$0] }
    }

    /// A predicate with its names resolved.
    indirect enum Node {
        case range([Double?], RangeBounds<Double>)
        /// Evaluated by `Reference` row by row (exact integer bounds need the column's own values).
        case other(RowPredicate)
        case unknownColumn
        case dates(RangeBounds<Int32>)
        case tickers(Set<Int32>)
        case not(Node), and([Node]), or([Node]), constant(Bool)
    }

    func resolve(_ p: RowPredicate) -> Node {
        switch p {
        case .constant(let b): return .constant(b)
        case let .range(name, bounds): return values[name].map { .range($0, bounds) } ?? .unknownColumn
        case .integerRange: return .other(p)
        case let .compare(e, bounds):
            var oracle = ExpressionOracle(table: table)
            return .range(oracle.values(e), bounds)
        case let .compareExpressions(l, r, bounds):
            var oracle = ExpressionOracle(table: table)
            return .range(oracle.order(l, r), bounds)
        case .dates(let b): return .dates(b)
        case .tickers(let symbols): return .tickers(Set(symbols.compactMap { table.tickerNumber(of: $0) }))
        case .not(let q): return .not(resolve(q))
        case .and(let qs): return .and(qs.map(resolve))
        case .or(let qs): return .or(qs.map(resolve))
        }
    }

    /// true, false, or nil for unknown (SQL's three-valued logic; NaN and null are unknown).
    func evaluate(_ n: Node, row: Int) -> Bool? {
        switch n {
        case .constant(let b): return b
        case .unknownColumn: return nil
        case .other(let p): return Reference.evaluate(p, table: table, row: row)
        case let .range(column, bounds):
            guard let x = column[row] else { return nil }
            return Reference.within(x, bounds)
        case .dates(let bounds): return bounds.matches(dates[row])
        case .tickers(let codes): return codes.contains(tickerOfRow[row])
        case .not(let q): return evaluate(q, row: row).map { !$0 }
        case .and(let qs):
            var unknown = false
            for q in qs {
                switch evaluate(q, row: row) {
                case false?: return false
                case nil: unknown = true
                case true?: continue
                }
            }
            return unknown ? nil : true
        case .or(let qs):
            var unknown = false
            for q in qs {
                switch evaluate(q, row: row) {
                case true?: return true
                case nil: unknown = true
                case false?: continue
                }
            }
            return unknown ? nil : false
        }
    }

    /// The rows where `p` is true, ascending.
    public func rows(_ p: RowPredicate) -> [Int] {
        let node = resolve(p)
        return (0 ..< table.rowCount).filter { evaluate(node, row: $0) == true }
    }
}
