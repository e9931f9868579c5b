import Colonnade
import Foundation

/// The columns a result shows: `ticker`, `date`, value columns (identifier or source name) or
/// computed columns (`pct_change(close) as ret`, `mavg(close,50)`).
struct ColumnSelection {
    /// Where one output column comes from.
    enum Source {
        case ticker
        case date
        case value(Int)
        /// Index into `expressions`.
        case expression(Int)
    }

    let sources: [Source]
    var columns: [ResultColumn]
    /// The computed columns' expressions.
    let expressions: [ValueExpression]

    /// Resolves `names` against `table`; a usage error (with a suggestion) for an unknown name, an
    /// expression error (with a caret) for a computed column that does not parse, a usage error
    /// for output names that clash (``OutputNames``: `close,close`, `open as ticker`).
    init(_ names: [String], in table: QuoteTable) throws {
        var sources = [Source](), columns = [ResultColumn](), expressions = [ValueExpression]()
        let indices = table.columnIndices(named: names)  // one dictionary: wide tables stay linear
        let dateName = table.dateColumnName.lowercased()
        for (name, index) in zip(names, indices) {
            switch name.lowercased() {
            case "ticker":
                sources.append(.ticker)
                columns.append(ResultColumn(name: "ticker"))
            case "date", dateName:
                sources.append(.date)
                columns.append(ResultColumn(name: "date"))
            default:
                if let i = index {
                    sources.append(.value(i))
                    columns.append(ResultColumn(name: table.schema[i].identifier))
                    continue
                }
                guard let (text, alias) = ColumnSelection.computed(name) else {
                    let candidates = ["ticker", "date"] + table.schema.map(\.identifier)
                    let close = Suggestions.closest(to: name, among: candidates)
                    throw UsageError.invalidValue(
                        option: "--columns", value: name, reason: "no such column",
                        suggestion: close.first, command: CommandSpec.filter.name)
                }
                do {
                    expressions.append(try QueryParser(table: table).parseValue(text))
                    // Compile once now, so an unknown column fails before any query runs.
                    _ = try table.values(of: expressions[expressions.count - 1], atRows: [])
                } catch {
                    throw ExpressionError(error: error, expression: text, option: "--columns")
                }
                sources.append(.expression(expressions.count - 1))
                columns.append(ResultColumn(name: alias ?? text, maximumDecimals: ResultColumn.computedDecimals))
            }
        }
        let contents = sources.map { source -> OutputNames.Content in
            switch source {
            case .ticker: .ticker
            case .date: .date
            case .value, .expression: .other
            }
        }
        try OutputNames.check(
            zip(zip(columns, contents), names).map { OutputNames.Column($0.0.name, holds: $0.1, item: $1) },
            option: "--columns", command: CommandSpec.filter.name)
        self.sources = sources
        self.columns = columns
        self.expressions = expressions
    }

    /// An item that is not a plain column name: the expression text and the name after ` as `, or
    /// nil for a bare word (a misspelt column, reported as such).
    static func computed(_ item: String) -> (text: String, alias: String?)? {
        let trimmed = item.trimmingCharacters(in: .whitespaces)
        if trimmed.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) { return nil }
        // ` as NAME` at the end, outside parentheses.
        let words = trimmed.split(separator: " ", omittingEmptySubsequences: true)
        if words.count >= 3, words[words.count - 2].lowercased() == "as",
            let alias = words.last, alias.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }),
            let range = trimmed.range(of: " " + words[words.count - 2] + " ", options: .backwards)
        {
            let text = trimmed[..<range.lowerBound].trimmingCharacters(in: .whitespaces)
            if !text.isEmpty && text.filter({ $0 == "(" }).count == text.filter({ $0 == ")" }).count {
                return (text, String(alias))
            }
        }
        return (trimmed, nil)
    }
}

/// Rows of a table — given row numbers, chosen columns — as cells for the formatters.
/// Reads values straight from the columns, one row at a time (constant memory).
/// Computed columns are evaluated a batch of rows at a time (with the windows' history), so
/// memory stays bounded by the batch.
struct TableRows<Rows: IteratorProtocol<Int>>: RowSource {
    let table: QuoteTable
    let sources: [ColumnSelection.Source]
    let columns: [ResultColumn]
    let expressions: [ValueExpression]
    var rows: Rows
    /// The current batch of rows and, per computed column, their values.
    private var batch = [Int](), batchValues = [[Double?]](), position = 0

    /// Rows per batch of computed values.
    static var batchRows: Int { 4096 }

    init(table: QuoteTable, selection: ColumnSelection, rows: Rows) {
        self.table = table
        self.sources = selection.sources
        self.columns = selection.columns
        self.expressions = selection.expressions
        self.rows = rows
    }

    /// The next row number, refilling the batch (and its computed values) when it runs out.
    private mutating func nextRowNumber() throws -> Int? {
        if expressions.isEmpty { return rows.next() }
        if position >= batch.count {
            batch.removeAll(keepingCapacity: true)
            while batch.count < Self.batchRows, let r = rows.next() { batch.append(r) }
            if batch.isEmpty { return nil }
            batchValues = try expressions.map { try table.values(of: $0, atRows: batch) }
            position = 0
        }
        position += 1
        return batch[position - 1]
    }

    /// `names` are `ticker`, `date` or value columns (identifier or source name).
    init(table: QuoteTable, columnNames names: [String], rows: Rows) throws {
        self.init(table: table, selection: try ColumnSelection(names, in: table), rows: rows)
    }

    /// Skips without reading any value: the rest of the current batch, then row numbers only.
    mutating func skipRows(_ count: Int) throws {
        var remaining = count
        if !expressions.isEmpty {
            let inBatch = min(remaining, batch.count - position)
            position += inBatch
            remaining -= inBatch
        }
        while remaining > 0, rows.next() != nil { remaining -= 1 }
    }

    mutating func nextRow(into row: inout [Cell]) throws -> Bool {
        guard let r = try nextRowNumber() else { return false }
        row.removeAll(keepingCapacity: true)
        for source in sources {
            switch source {
            case .ticker: row.append(.text(table.tickers[Int(table.tickerNumber(ofRow: r))].symbol))
            case .date: row.append(.day(table.dates[r]))
            case .expression(let k): row.append(batchValues[k][position - 1].map(Cell.number) ?? .null)
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
            case .range(let c, _), .integerRange(let c, _): if !out.contains(c) { out.append(c) }
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
