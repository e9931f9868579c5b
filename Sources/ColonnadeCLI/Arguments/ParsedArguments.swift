/// A command line that parsed and validated against a ``CommandSpec``.
///
/// Every value has already been checked against its option's ``ValueKind``, so reading never
/// fails on input. Values are read through the option's ``OptionKey``, so a misspelt option does
/// not compile; reading a key the command's spec does not declare is a programmer error and traps.
///
///     let parsed = try ArgumentParser.parse(["--limit=5", "--tickers", "AAPL,MSFT"], for: .filter)
///     parsed[FilterCommand.Options.limit]     // 5
///     parsed[FilterCommand.Options.tickers]   // ["AAPL", "MSFT"]
///     parsed[FilterCommand.Options.count]     // false
///     parsed[FilterCommand.Options.format]    // .table (the default)
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

    /// The value of the option `key` declares: as typed, else its default (see ``OptionKey``).
    subscript<Value>(_ key: OptionKey<Value>) -> Value {
        checkDeclared(key)
        return key.value(typed: given[key.name])
    }

    /// Whether the user typed the option (defaults do not count).
    func isGiven<Value>(_ key: OptionKey<Value>) -> Bool {
        checkDeclared(key)
        return given[key.name] != nil
    }

    /// Whether the command declares `key` (a command that shares code with another may lack it).
    func declares<Value>(_ key: OptionKey<Value>) -> Bool {
        spec.option(named: key.name) != nil
    }

    /// What was typed for the option named `name`, untyped: for the parser's own tests, which
    /// go over every declared option by name. Commands read through keys.
    func _typedValues(ofOptionNamed name: String) -> [String]? {
        given[name]
    }

    private func checkDeclared<Value>(_ key: OptionKey<Value>) {
        guard let option = spec.option(named: key.name) else {
            preconditionFailure("'\(spec.name)' declares no option '--\(key.name)'")
        }
        precondition(
            option.kind == key.spec.kind && option.isList == key.spec.isList && option.isFlag == key.spec.isFlag,
            "'--\(key.name)' of '\(spec.name)' is declared differently from the key read")
    }
}
