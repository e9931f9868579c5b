import Colonnade

/// One option, declared once: its ``OptionSpec`` (what the parser checks and the help text and
/// completion scripts show) and the type its value is read as.
///
/// A command lists its keys in its ``CommandSpec`` and reads them back through
/// ``ParsedArguments/subscript(_:)``, so a misspelt option is a compile error, not a trap:
///
///     static let limit = OptionKey.integer("limit", value: "N", minimum: 1, abstract: "Print at most N rows.")
///     static let count = OptionKey.flag("count", abstract: "Print only the number of matching rows.")
///     …
///     let limit: Int? = parsed[FilterCommand.Options.limit]
///     if parsed[FilterCommand.Options.count] { … }
///
/// The parser has validated every value against the spec before a command runs, so reading never
/// fails on input; the value types follow the declaration: a flag is `Bool`, an option with a
/// default is non-optional, a list is `[String]`, a choice is its `enum`, a date is a ``Day``.
struct OptionKey<Value>: Sendable {
    /// The declaration the parser, the help text and the completion scripts use.
    let spec: OptionSpec
    /// The value from what was typed: one entry per occurrence for a flag or a single-valued
    /// option (the last wins), one per item for a list; `nil` when the option was not typed.
    private let read: @Sendable (_ typed: [String]?) -> Value

    private init(_ spec: OptionSpec, read: @escaping @Sendable (_ typed: [String]?) -> Value) {
        self.spec = spec
        self.read = read
    }

    /// The long name without dashes.
    var name: String { spec.name }

    /// The value, from what was typed for this option (`nil` when it was not).
    func value(typed: [String]?) -> Value { read(typed) }
}

extension OptionKey where Value == Bool {
    /// A flag: `true` when given.
    static func flag(_ name: String, short: Character? = nil, abstract: String) -> Self {
        Self(OptionSpec(flag: name, short: short, abstract: abstract)) { $0 != nil }
    }
}

extension OptionKey where Value == String? {
    /// Text, `nil` when not given.
    static func string(_ name: String, short: Character? = nil, value valueName: String, abstract: String) -> Self {
        Self(OptionSpec(name, short: short, value: valueName, abstract: abstract)) { $0?.last }
    }
}

extension OptionKey where Value == String {
    /// Text with a default.
    static func string(_ name: String, value valueName: String, default defaultValue: String, abstract: String) -> Self {
        Self(OptionSpec(name, value: valueName, defaultValue: defaultValue, abstract: abstract)) { $0?.last ?? defaultValue }
    }
}

extension OptionKey where Value == Int? {
    /// A decimal integer no smaller than `minimum`, `nil` when not given.
    static func integer(_ name: String, value valueName: String, minimum: Int, abstract: String) -> Self {
        // The parser accepted only values `Int(_:)` parses.
        Self(OptionSpec(name, value: valueName, kind: .integer(minimum: minimum), abstract: abstract)) { $0?.last.flatMap { Int($0) } }
    }
}

extension OptionKey where Value == Int {
    /// A decimal integer no smaller than `minimum`, with a default.
    ///
    /// - Precondition: `defaultValue >= minimum`.
    static func integer(
        _ name: String, value valueName: String, minimum: Int, default defaultValue: Int,
        abstract: String
    ) -> Self {
        precondition(defaultValue >= minimum, "default of '--\(name)' below its minimum")
        return Self(
            OptionSpec(
                name, value: valueName, kind: .integer(minimum: minimum), defaultValue: String(defaultValue),
                abstract: abstract)
        ) { $0?.last.flatMap { Int($0) } ?? defaultValue }
    }

    /// A decimal integer no smaller than `minimum` that must be given.
    static func requiredInteger(_ name: String, value valueName: String, minimum: Int, abstract: String) -> Self {
        Self(OptionSpec(name, value: valueName, kind: .integer(minimum: minimum), isRequired: true, abstract: abstract)) { typed in
            guard let number = typed?.last.flatMap({ Int($0) }) else {
                preconditionFailure("required option '--\(name)' read without a value")
            }
            return number
        }
    }
}

extension OptionKey where Value == Day? {
    /// A date `YYYY-MM-DD`, `nil` when not given.
    static func date(_ name: String, abstract: String) -> Self {
        Self(OptionSpec(name, value: "YYYY-MM-DD", kind: .date, abstract: abstract)) { typed in
            typed?.last.flatMap { try? DateArgument.parse($0).get() }.map(Day.init(daysSinceEpoch:))
        }
    }
}

extension OptionKey where Value == Day {
    /// A date `YYYY-MM-DD` with a default.
    static func date(_ name: String, default defaultValue: Day, abstract: String) -> Self {
        Self(OptionSpec(name, value: "YYYY-MM-DD", kind: .date, defaultValue: defaultValue.description, abstract: abstract)) { typed in
            typed?.last.flatMap { try? DateArgument.parse($0).get() }.map(Day.init(daysSinceEpoch:)) ?? defaultValue
        }
    }
}

extension OptionKey where Value == [String] {
    /// A comma-separated list that may be repeated: every item typed, in order; `[]` when not given.
    static func list(_ name: String, value valueName: String, abstract: String) -> Self {
        Self(OptionSpec(name, value: valueName, isList: true, abstract: abstract)) { $0 ?? [] }
    }
}

extension OptionKey where Value: RawRepresentable & CaseIterable & Sendable, Value.RawValue == String {
    /// One of the cases of `Value`, by raw value, with a default.
    ///
    /// - Parameter valueName: the placeholder; by default the raw values joined by `|`.
    static func choice(_ name: String, value valueName: String? = nil, default defaultValue: Value, abstract: String) -> Self {
        let words = Value.allCases.map(\.rawValue)
        return Self(
            OptionSpec(
                name, value: valueName ?? words.joined(separator: "|"), kind: .choice(words),
                defaultValue: defaultValue.rawValue, abstract: abstract)
        ) { typed in
            typed?.last.flatMap(Value.init(rawValue:)) ?? defaultValue
        }
    }

    /// One of the cases of `Value`, by raw value, that must be given.
    static func requiredChoice(_ name: String, value valueName: String? = nil, abstract: String) -> Self {
        let words = Value.allCases.map(\.rawValue)
        return Self(
            OptionSpec(
                name, value: valueName ?? words.joined(separator: "|"), kind: .choice(words),
                isRequired: true, abstract: abstract)
        ) { typed in
            guard let choice = typed?.last.flatMap(Value.init(rawValue:)) else {
                preconditionFailure("required option '--\(name)' read without a value")
            }
            return choice
        }
    }
}

extension OptionKey {
    /// One of the cases of `Choice`, by raw value; `nil` when not given.
    static func choice<Choice: RawRepresentable & CaseIterable & Sendable>(
        _ name: String, value valueName: String? = nil, abstract: String
    ) -> Self where Value == Choice?, Choice.RawValue == String {
        let words = Choice.allCases.map(\.rawValue)
        return Self(
            OptionSpec(
                name, value: valueName ?? words.joined(separator: "|"), kind: .choice(words),
                abstract: abstract)
        ) { typed in
            typed?.last.flatMap(Choice.init(rawValue:))
        }
    }
}
