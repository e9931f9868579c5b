/// A command line that parsed and validated against a ``CommandSpec``.
///
/// Every value has already been checked against its option's ``ValueKind``, so the typed
/// accessors never fail on input; asking for an option the spec does not declare, or with the
/// wrong accessor (`int` of a date option), is a programmer error and traps.
///
///     let parsed = try ArgumentParser.parse(["--limit=5", "--tickers", "AAPL,MSFT"], for: .filter)
///     parsed.int("limit")        // 5
///     parsed.list("tickers")     // ["AAPL", "MSFT"]
///     parsed.flag("count")       // false
///     parsed.string("format")    // "table" (the default)
struct ParsedArguments: Sendable {
    /// The command the arguments were parsed for.
    let spec: CommandSpec
    /// Positional arguments in order (`FILE...`, `TICKER...`).
    let positionals: [String]
    /// Values as typed, per option name, in order: one entry per occurrence for a flag or a
    /// single-valued option, one per item for a list.
    private let given: [String: [String]]

    init(spec: CommandSpec, given: [String: [String]], positionals: [String]) {
        self.spec = spec
        self.given = given
        self.positionals = positionals
    }

    /// Whether the user typed the option (defaults do not count).
    func isGiven(_ name: String) -> Bool {
        _ = declared(name)
        return given[name] != nil
    }

    /// Whether the flag `--name` was given.
    func flag(_ name: String) -> Bool {
        precondition(declared(name).isFlag, "'--\(name)' of '\(spec.name)' is not a flag")
        return given[name] != nil
    }

    /// The value of `--name`: the last one typed, else the default, else `nil`.
    func string(_ name: String) -> String? {
        let option = declared(name)
        precondition(!option.isFlag && !option.isList, "'--\(name)' of '\(spec.name)' is not a single-valued option")
        return given[name]?.last ?? option.defaultValue
    }

    /// The value of an integer option (``ValueKind/integer(minimum:)``), typed or default.
    func int(_ name: String) -> Int? {
        guard case .integer = declared(name).kind else {
            preconditionFailure("'--\(name)' of '\(spec.name)' is not an integer option")
        }
        // The parser accepted only values `Int(_:)` parses; defaults are checked by a test.
        return string(name).flatMap { Int($0) }
    }

    /// The value of a date option as days since 1970-01-01, typed or default.
    func day(_ name: String) -> Int32? {
        precondition(declared(name).kind == .date, "'--\(name)' of '\(spec.name)' is not a date option")
        return string(name).flatMap { try? DateArgument.parse($0).get() }
    }

    /// The items of a list option: every item typed, in order, else the default's items, else `[]`.
    func list(_ name: String) -> [String] {
        let option = declared(name)
        precondition(option.isList, "'--\(name)' of '\(spec.name)' is not a list option")
        if let items = given[name] { return items }
        return option.defaultValue.map { splitList($0) } ?? []
    }

    private func declared(_ name: String) -> OptionSpec {
        guard let option = spec.option(named: name) else {
            preconditionFailure("'\(spec.name)' declares no option '--\(name)'")
        }
        return option
    }
}
