/// What a completion script offers for an option's value or a positional argument, derived from
/// its declaration (``OptionSpec``, ``PositionalSpec``) so that the scripts never drift from what
/// the parser accepts.
enum ValueCompletion: Equatable, Sendable {
    /// Nothing to offer (free text, a number, a date).
    case none
    /// One of these words (a ``ValueKind/choice(_:)`` option).
    case words([String])
    /// A file path.
    case files
    /// A directory path.
    case directories
    /// Column names of the snapshot the command line names (or the default one), asked of
    /// `colonnade _complete columns` when completing; comma-separated lists complete item by item.
    case columns
    /// The snapshot's value columns only (`close`, `adj_close`: no `ticker`, `date` or `all`), for
    /// a `COLUMN` placeholder (`chart --price`, `--overlay`).
    case valueColumns
    /// Ticker symbols of that snapshot, from `colonnade _complete tickers`.
    case tickers

    /// Whether the value is a comma-separated list (completion then works on the last item).
    var isDynamic: Bool { topic != nil }

    /// The `_complete` topic (`columns`, `tickers`) for a dynamic completion.
    var topic: String? {
        switch self {
        case .columns: "columns"
        case .valueColumns: "value-columns"
        case .tickers: "tickers"
        default: nil
        }
    }
}

extension OptionSpec {
    /// How completion scripts complete this option's value: the choices of a choice option,
    /// file names for a `PATH`/`FILE`/`*.svg` placeholder, directories for `DIR`, the snapshot's
    /// columns for `--columns` (value columns for a `COLUMN` placeholder) and its tickers for a
    /// ticker list (`--tickers A,B`); else nothing.
    var valueCompletion: ValueCompletion {
        guard let valueName else { return .none }
        if case .choice(let words) = kind { return .words(words) }
        if name == "columns" { return .columns }
        if name == "tickers", case .string = kind { return .tickers }
        if valueName == "COLUMN" || name == "overlay" { return .valueColumns }  // an overlay is often just a column
        return ValueCompletion(placeholder: valueName)
    }
}

extension PositionalSpec {
    /// How completion scripts complete this argument: files for `FILE`, tickers for `TICKER`, the
    /// shells for `SHELL`.
    var valueCompletion: ValueCompletion {
        switch name {
        case "TICKER", "TICKERS": .tickers
        case "SHELL": .words(CompletionScript.Shell.allCases.map(\.rawValue))
        default: ValueCompletion(placeholder: name)
        }
    }
}

extension ValueCompletion {
    /// Files for `PATH`, `FILE`, `FILE.svg` and the like, directories for `DIR`, else nothing.
    init(placeholder: String) {
        let base = placeholder.split(separator: ".").first.map(String.init) ?? placeholder
        switch base {
        case "PATH", "FILE": self = .files
        case "DIR": self = .directories
        default: self = .none
        }
    }
}
