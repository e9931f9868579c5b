/// A mistake in the command line: the user typed something the command does not accept.
///
/// Each case says what was wrong and where (`command` is the subcommand's name, or `nil` for
/// `colonnade` itself). The top level prints ``message``, ``hint`` when there is one, and the
/// command's usage line, then exits with status 2 (``ExitStatus/usage``).
enum UsageError: Error, Equatable, Sendable {
    /// No subcommand was given.
    case missingCommand
    /// `colonnade filtr`: no such subcommand (or help topic).
    case unknownCommand(String, suggestions: [String])
    /// `--lmit`: no such option. `suggestions` are full spellings (`--limit`).
    case unknownOption(String, command: String?, suggestions: [String])
    /// `--limit` at the end, or followed by another option.
    case missingValue(option: String, valueName: String, command: String)
    /// `--count=yes`: a flag given a value.
    case unexpectedValue(option: String, value: String, command: String)
    /// A value that does not parse or is out of range. `reason` completes the sentence
    /// ("expected an integer", "must be at least 1", "February 2023 has 28 days").
    case invalidValue(option: String, value: String, reason: String, suggestion: String?, command: String)
    /// A required option is absent; `option` is its synopsis (`--tickers N`).
    case missingOption(option: String, command: String)
    /// A required positional argument is absent (`FILE`).
    case missingArgument(name: String, command: String)
    /// A positional argument the command does not take. `suggestion` names an option the word
    /// resembles (`limit` → `--limit`).
    case unexpectedArgument(String, command: String?, suggestion: String?)
    /// Options of which at most one may be given were given together.
    case conflictingOptions([String], command: String)
    /// None of the options of which exactly one must be given was given.
    case missingOneOf([String], command: String)
    /// `option` only makes sense together with one of `anyOf`.
    case missingCompanion(option: String, anyOf: [String], command: String)
    /// Two dates in the wrong order (`--from` after `--to`).
    case reversedRange(first: String, firstValue: String, second: String, secondValue: String, command: String)
    /// `option` has no meaning together with `other` (`--sort` with `--count`); `reason` says why.
    /// Refused rather than silently ignored.
    case inapplicable(option: String, with: String, reason: String, command: String)

    /// The subcommand the error is about, or `nil` for `colonnade` itself.
    var command: String? {
        switch self {
        case .missingCommand, .unknownCommand: nil
        case .unknownOption(_, let command, _), .unexpectedArgument(_, let command, _): command
        case .missingValue(_, _, let command), .unexpectedValue(_, _, let command),
            .invalidValue(_, _, _, _, let command), .missingOption(_, let command),
            .missingArgument(_, let command), .conflictingOptions(_, let command),
            .missingOneOf(_, let command), .missingCompanion(_, _, let command),
            .reversedRange(_, _, _, _, let command), .inapplicable(_, _, _, let command):
            command
        }
    }
}

extension UsageError: CLIReportableError {
    var message: String {
        let place = "'\(CommandLineTool.programName)\(command.map { " " + $0 } ?? "")'"
        switch self {
        case .missingCommand:
            return "missing command"
        case .unknownCommand(let word, _):
            return "unknown command '\(word)'"
        case .unknownOption(let option, _, _):
            return "unknown option '\(option)' for \(place)"
        case .missingValue(let option, let valueName, _):
            return "missing value for '\(option) \(valueName)' in \(place)"
        case .unexpectedValue(let option, let value, _):
            return "option '\(option)' of \(place) takes no value (got '\(value)')"
        case .invalidValue(let option, let value, let reason, _, _):
            return "invalid value '\(value)' for '\(option)' in \(place): \(reason)"
        case .missingOption(let option, _):
            return "missing required option '\(option)' for \(place)"
        case .missingArgument(let name, _):
            return "missing argument \(name) for \(place)"
        case .unexpectedArgument(let word, _, _):
            return "unexpected argument '\(word)' for \(place)"
        case .conflictingOptions(let options, _):
            return "conflicting options \(quotedList(options, conjunction: "and")) for \(place)"
        case .missingOneOf(let options, _):
            return "\(place) needs one of \(quotedList(options, conjunction: "or"))"
        case .missingCompanion(let option, let others, _):
            return "'\(option)' in \(place) needs \(quotedList(others, conjunction: "or"))"
        case .reversedRange(let first, let firstValue, let second, let secondValue, _):
            return "'\(first) \(firstValue)' is after '\(second) \(secondValue)' in \(place)"
        case .inapplicable(let option, let other, let reason, _):
            return "'\(option)' does not apply with '\(other)' in \(place): \(reason)"
        }
    }

    var hint: String? {
        switch self {
        case .missingCommand:
            return "run '\(CommandLineTool.programName) help' to list the commands"
        case .unknownCommand(_, let suggestions), .unknownOption(_, _, let suggestions):
            return suggestions.isEmpty ? nil : "did you mean \(quotedList(suggestions, conjunction: "or"))?"
        case .invalidValue(_, _, _, let suggestion?, _), .unexpectedArgument(_, _, let suggestion?):
            return "did you mean '\(suggestion)'?"
        case .conflictingOptions(let options, _):
            return "give only one of \(quotedList(options, conjunction: "or"))"
        default:
            return nil
        }
    }

    var exitStatus: Int32 { ExitStatus.usage }
}

/// `'a'`, `'a' and 'b'`, `'a', 'b' or 'c'`.
func quotedList(_ items: [String], conjunction: String) -> String {
    let quoted = items.map { "'\($0)'" }
    guard quoted.count > 1 else { return quoted.first ?? "" }
    return quoted.dropLast().joined(separator: ", ") + " \(conjunction) " + quoted[quoted.count - 1]
}
