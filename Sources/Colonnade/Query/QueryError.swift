/// Why a query could not be parsed or planned: what was wrong, where, and what might fix it.
///
///     unknown column 'hihg' at 1:6, did you mean 'high'?
public struct QueryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of mistake it is, for callers that react to one kind (a tool's hint, say)
    /// without reading the message.
    public enum Kind: Sendable, Hashable {
        /// The text does not follow the grammar: an unexpected token, a malformed number or date,
        /// an unclosed parenthesis or quote.
        case syntax
        /// A name that is not a column of the table (`suggestions` holds close matches).
        case unknownColumn
        /// A name that is not an aggregate function.
        case unknownAggregate
        /// A column compared with the wrong kind of value (a date with a number, tickers with `<`),
        /// or a comparison the engine does not support (two columns).
        case typeMismatch
    }

    /// What kind of mistake it is.
    public var kind: Kind
    /// What is wrong, without the position.
    public var message: String
    /// 1-based line and column in the expression text, nil for Swift-built predicates.
    public var line: Int?
    /// 1-based column (in characters) within `line`.
    public var column: Int?
    /// The UTF-8 offset of the problem in the expression text.
    public var offset: Int?
    /// Close matches for a misspelt name.
    public var suggestions: [String]

    /// An error with an optional position.
    public init(
        _ message: String, kind: Kind = .syntax, line: Int? = nil, column: Int? = nil, offset: Int? = nil,
        suggestions: [String] = []
    ) {
        self.kind = kind
        self.message = message
        self.line = line
        self.column = column
        self.offset = offset
        self.suggestions = suggestions
    }

    /// The message, the position and the suggestions in one line.
    public var description: String {
        var s = message
        if let line, let column { s += " at \(line):\(column)" }
        if !suggestions.isEmpty {
            s += ", did you mean " + suggestions.prefix(3).map { "'\($0)'" }.joined(separator: " or ") + "?"
        }
        return s
    }
}
