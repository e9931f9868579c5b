/// The declaration of one `colonnade` subcommand: everything the parser validates and the help
/// text shows, with no behaviour attached.
///
///     CommandSpec(
///         name: "verify",
///         abstract: "Check a snapshot's checksums and structure.",
///         options: [OptionSpec("snapshot", value: "PATH", abstract: "Snapshot to check.")]
///     )
///
/// Option names are given without dashes; the parser, the accessors of ``ParsedArguments`` and
/// the constraints all use that bare name (`"limit"` for `--limit`).
struct CommandSpec: Sendable {
    /// Whether and how the command appears in `colonnade help`.
    enum Listing: Sendable {
        /// Listed normally.
        case shown
        /// Not listed (internal commands such as `_complete`, which the completion scripts run); still runs and has help.
        case hidden
    }

    /// The subcommand's name as typed (`filter`).
    var name: String
    /// One sentence for the command list and the top of the help text.
    var abstract: String
    /// Paragraphs shown after the usage line; may be empty.
    var discussion: String
    /// Positional arguments, in order. Only the last may repeat.
    var positionals: [PositionalSpec]
    /// Options, in the order the help text lists them.
    var options: [OptionSpec]
    /// Relations between options, checked after every option has parsed.
    var constraints: [OptionConstraint]
    /// Complete command lines (without the leading `colonnade`) shown under EXAMPLES.
    var examples: [String]
    /// How `colonnade help` lists the command.
    var listing: Listing

    /// Declares a command.
    ///
    /// - Precondition: option names and short names are unique; only the last positional repeats;
    ///   every option a constraint names is declared.
    init(
        name: String,
        abstract: String,
        discussion: String = "",
        positionals: [PositionalSpec] = [],
        options: [OptionSpec] = [],
        constraints: [OptionConstraint] = [],
        examples: [String] = [],
        listing: Listing = .shown
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.positionals = positionals
        self.options = options
        self.constraints = constraints
        self.examples = examples
        self.listing = listing
        precondition(Set(options.map(\.name)).count == options.count, "duplicate option in '\(name)'")
        let shorts = options.compactMap(\.shortName)
        precondition(Set(shorts).count == shorts.count, "duplicate short option in '\(name)'")
        precondition(positionals.dropLast().allSatisfy { !$0.isRepeating }, "only the last positional of '\(name)' may repeat")
        for constraint in constraints {
            for option in constraint.optionNames {
                precondition(self.option(named: option) != nil, "constraint in '\(name)' names undeclared option '\(option)'")
            }
        }
    }

    /// The option declared as `--name`, if any.
    func option(named name: String) -> OptionSpec? {
        options.first { $0.name == name }
    }

    /// The option declared with the short form `-character`, if any.
    func option(short character: Character) -> OptionSpec? {
        options.first { $0.shortName == character }
    }
}

/// One `--name` option of a command.
///
///     OptionSpec("limit", value: "N", kind: .integer(minimum: 1), abstract: "Print at most N rows.")
///     OptionSpec(flag: "count", abstract: "Print only the number of matching rows.")
struct OptionSpec: Sendable {
    /// The long name without dashes (`limit` for `--limit`).
    var name: String
    /// A one-letter alias (`o` for `-o`), if any.
    var shortName: Character?
    /// The placeholder shown in usage and help (`N`, `PATH`); `nil` for a flag.
    var valueName: String?
    /// What values are accepted; ignored for a flag.
    var kind: ValueKind
    /// Whether the value is a comma-separated list that may also be given several times
    /// (`--tickers A,B --tickers C` is `A, B, C`). Commas inside parentheses or double quotes do
    /// not split, so `--agg "avg(close),max(high)"` is two items.
    var isList: Bool
    /// Whether the command cannot run without it.
    var isRequired: Bool
    /// The value used when the option is absent, already valid for `kind`; shown in help.
    var defaultValue: String?
    /// One or two sentences for the help text.
    var abstract: String

    /// Declares an option that takes a value.
    init(
        _ name: String,
        short: Character? = nil,
        value valueName: String,
        kind: ValueKind = .string,
        isList: Bool = false,
        isRequired: Bool = false,
        defaultValue: String? = nil,
        abstract: String
    ) {
        self.name = name
        self.shortName = short
        self.valueName = valueName
        self.kind = kind
        self.isList = isList
        self.isRequired = isRequired
        self.defaultValue = defaultValue
        self.abstract = abstract
    }

    /// Declares a flag: an option that takes no value and is either present or not.
    init(flag name: String, short: Character? = nil, abstract: String) {
        self.name = name
        self.shortName = short
        self.valueName = nil
        self.kind = .string
        self.isList = false
        self.isRequired = false
        self.defaultValue = nil
        self.abstract = abstract
    }

    /// Whether the option takes no value.
    var isFlag: Bool { valueName == nil }

    /// `--limit` (the spelling used in messages).
    var displayName: String { "--" + name }

    /// `--limit N`, or `--count` for a flag.
    var synopsis: String {
        valueName.map { "\(displayName) \($0)" } ?? displayName
    }
}

/// A positional argument (`FILE...`).
struct PositionalSpec: Sendable {
    /// The placeholder shown in usage and help (`FILE`, `TICKER`).
    var name: String
    /// Whether it takes one or more values (`FILE...`).
    var isRepeating: Bool
    /// Whether at least one value is required.
    var isRequired: Bool
    /// One or two sentences for the help text.
    var abstract: String

    /// Declares a positional argument.
    init(_ name: String, isRepeating: Bool = false, isRequired: Bool = true, abstract: String) {
        self.name = name
        self.isRepeating = isRepeating
        self.isRequired = isRequired
        self.abstract = abstract
    }

    /// `FILE...`, `[FILE]` and so on, as the usage line shows it.
    var synopsis: String {
        let core = isRepeating ? "\(name)..." : name
        return isRequired ? core : "[\(core)]"
    }
}

/// What an option's value must look like. Each is checked when the command line is parsed, so
/// a command's `run` only ever sees valid values.
enum ValueKind: Sendable, Equatable {
    /// Any text.
    case string
    /// A decimal integer no smaller than `minimum`.
    case integer(minimum: Int)
    /// A calendar date written `YYYY-MM-DD`.
    case date
    /// One of the given words, compared exactly.
    case choice([String])
}

/// A rule relating several options of one command, checked after all options have parsed.
/// Only options the user typed count; defaults never conflict.
enum OptionConstraint: Sendable {
    /// At most one of these may be given.
    case mutuallyExclusive([String])
    /// Exactly one of these must be given.
    case exactlyOne([String])
    /// When `option` is given, at least one of `anyOf` must be given too.
    case requires(option: String, anyOf: [String])
    /// Both are dates and the first may not be later than the second (`from`, `to`).
    case notAfter(String, String)

    var optionNames: [String] {
        switch self {
        case .mutuallyExclusive(let names), .exactlyOne(let names): names
        case .requires(let option, let others): [option] + others
        case .notAfter(let first, let second): [first, second]
        }
    }
}
