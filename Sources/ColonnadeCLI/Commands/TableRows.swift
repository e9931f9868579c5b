import Colonnade

/// The columns a result shows: `ticker`, `date` or value columns (identifier or source name).
struct ColumnSelection {
    /// Where one output column comes from.
    enum Source {
        case ticker
        case date
        case value(Int)
    }

    let sources: [Source]
    let columns: [ResultColumn]

    /// Resolves `names` against `table`; a usage error (with a suggestion) for an unknown name.
    init(_ names: [String], in table: QuoteTable) throws {
        var sources = [Source](), columns = [ResultColumn]()
        let indices = table.columnIndices(named: names)  // one dictionary: wide tables stay linear
        let dateName = table.dateColumnName.lowercased()
        for (name, index) in zip(names, indices) {
            switch name.lowercased() {
            case "ticker": sources.append(.ticker); columns.append(ResultColumn(name: "ticker"))
            case "date", dateName: sources.append(.date); columns.append(ResultColumn(name: "date"))
            default:
                guard let i = index else {
                    let candidates = ["ticker", "date"] + table.schema.map(\.identifier)
                    let close = Suggestions.closest(to: name, among: candidates)
                    throw UsageError.invalidValue(option: "--columns", value: name, reason: "no such column",
                                                  suggestion: close.first, command: "filter")
                }
                sources.append(.value(i))
                columns.append(ResultColumn(name: table.schema[i].identifier))
            }
        }
        self.sources = sources
        self.columns = columns
    }
}

/// Rows of a table — given row numbers, chosen columns — as cells for the formatters.
/// Reads values straight from the columns, one row at a time (constant memory).
struct TableRows<Rows: IteratorProtocol<Int>>: RowSource {
    let table: QuoteTable
    let sources: [ColumnSelection.Source]
    let columns: [ResultColumn]
    var rows: Rows

    init(table: QuoteTable, selection: ColumnSelection, rows: Rows) {
        self.table = table
        self.sources = selection.sources
        self.columns = selection.columns
        self.rows = rows
    }

    /// `names` are `ticker`, `date` or value columns (identifier or source name).
    init(table: QuoteTable, columnNames names: [String], rows: Rows) throws {
        self.init(table: table, selection: try ColumnSelection(names, in: table), rows: rows)
    }

    mutating func nextRow(into row: inout [Cell]) throws -> Bool {
        guard let r = rows.next() else { return false }
        row.removeAll(keepingCapacity: true)
        for source in sources {
            switch source {
            case .ticker: row.append(.text(table.tickers[Int(table.tickerCode(ofRow: r))].symbol))
            case .date: row.append(.day(table.dates[r]))
            case .value(let i):
                switch table.columns[i] {
                case .float64(let c): row.append(c.value(at: r).map(Cell.number) ?? .null)
                case .float32(let c): row.append(c.value(at: r).map { .number(Double($0)) } ?? .null)
                case .int64(let c): row.append(c.value(at: r).map(Cell.integer) ?? .null)
                case .int32(let c): row.append(c.value(at: r).map { .integer(Int64($0)) } ?? .null)
                }
            }
        }
        return true
    }
}

/// Iterates the set rows of a mask, at most `limit`.
struct MaskRowIterator: IteratorProtocol {
    var rows: Bitmask.SetRows.Iterator
    var remaining: Int

    init(_ mask: Bitmask, limit: Int?) {
        rows = mask.setRows.makeIterator()
        remaining = limit ?? Int.max
    }

    mutating func next() -> Int? {
        guard remaining > 0, let r = rows.next() else { return nil }
        remaining -= 1
        return r
    }
}

extension RowPredicate {
    /// The value columns the predicate mentions, in first-mention order.
    var mentionedColumns: [String] {
        var out = [String]()
        func walk(_ p: RowPredicate) {
            switch p {
            case .range(let c, _): if !out.contains(c) { out.append(c) }
            case .compare(let e, _): for c in e.columns where !out.contains(c) { out.append(c) }
            case let .compareExpressions(l, r, _): for c in l.columns + r.columns where !out.contains(c) { out.append(c) }
            case .and(let ps), .or(let ps): ps.forEach(walk)
            case .not(let q): walk(q)
            case .dates, .tickers, .constant: break
            }
        }
        walk(self)
        return out
    }
}
