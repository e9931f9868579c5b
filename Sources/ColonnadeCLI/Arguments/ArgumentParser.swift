import Colonnade

/// Parses one subcommand's arguments against its ``CommandSpec``.
///
/// Accepted forms: `--name value`, `--name=value`, `-o value`, `-ovalue`, `-o=value`, flags
/// `--name`; list options split on commas and accumulate over repeats; a repeated single-valued
/// option keeps its last value (as git does, so aliases can override); `--` ends the options.
/// A value may begin with `-` (`--sort -date`) unless it begins with `--` or is one of the
/// command's short options: then the option is taken to be missing its value.
enum ArgumentParser {
    /// Parses `arguments` (everything after the subcommand's name).
    ///
    /// - Returns: The validated arguments.
    /// - Throws: The first ``UsageError`` found, left to right, then required options, then
    ///   constraints in declaration order.
    /// - Complexity: O(*n* · *k*) for *n* arguments and *k* declared options.
    static func parse(_ arguments: [String], for spec: CommandSpec) throws(UsageError) -> ParsedArguments {
        var given: [String: [String]] = [:]
        var positionals: [String] = []
        var index = arguments.startIndex
        var optionsEnded = false

        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            let (option, inlineValue) = try lookUp(argument, in: spec)
            if option.isFlag {
                if let inlineValue {
                    throw .unexpectedValue(option: option.displayName, value: inlineValue, command: spec.name)
                }
                given[option.name, default: []].append("")
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else if index < arguments.endIndex, !looksLikeOption(arguments[index], in: spec) {
                value = arguments[index]
                index += 1
            } else {
                throw .missingValue(option: option.displayName, valueName: option.valueName ?? "VALUE", command: spec.name)
            }
            if option.isList {
                let items = splitList(value)
                guard !items.isEmpty, !items.contains("") else {
                    throw .invalidValue(
                        option: option.displayName, value: value,
                        reason: "expected a comma-separated list without empty items",
                        suggestion: nil, command: spec.name)
                }
                for item in items { try validate(item, for: option, in: spec) }
                given[option.name, default: []].append(contentsOf: items)
            } else {
                try validate(value, for: option, in: spec)
                given[option.name] = [value]
            }
        }

        try checkPositionals(positionals, in: spec)
        for option in spec.options where option.isRequired && given[option.name] == nil {
            throw .missingOption(option: option.synopsis, command: spec.name)
        }
        for constraint in spec.constraints {
            try check(constraint, given: given, in: spec)
        }
        return ParsedArguments(spec: spec, given: given, positionals: positionals)
    }

    /// The option `argument` names and the value attached to it with `=` (or directly, for a
    /// short option), if any.
    ///
    /// Split by Unicode scalars, not characters: a value that starts with a combining mark
    /// (`--where=\u{301}…`) would otherwise fuse with the `=` into one character and make the
    /// whole argument an unknown option (found by the `Completion` fuzz target).
    private static func lookUp(_ argument: String, in spec: CommandSpec) throws(UsageError) -> (OptionSpec, String?) {
        if argument.hasPrefix("--") {
            let body = argument.unicodeScalars.dropFirst(2)
            let equals = body.firstIndex(of: "=")
            let name = String(Substring(body[..<(equals ?? body.endIndex)]))
            let inlineValue = equals.map { String(Substring(body[body.index(after: $0)...])) }
            guard let option = spec.option(named: name) else {
                throw unknownOption("--" + name, typedName: name, in: spec)
            }
            return (option, inlineValue)
        }
        let afterDash = argument.unicodeScalars.dropFirst()
        let letter = afterDash.first.map(Character.init) ?? "-"
        guard let option = spec.option(short: letter) else {
            throw unknownOption(argument, typedName: String(Substring(afterDash)), in: spec)
        }
        let rest = afterDash.dropFirst()
        let inlineValue = rest.isEmpty ? nil : String(Substring(rest.first == "=" ? rest.dropFirst() : rest))
        return (option, inlineValue)
    }

    private static func unknownOption(_ spelling: String, typedName: String, in spec: CommandSpec) -> UsageError {
        let names = spec.options.map(\.name) + ["help"]
        let suggestions = Suggestions.closest(to: typedName, among: names).map { "--" + $0 }
        return .unknownOption(spelling, command: spec.name, suggestions: suggestions)
    }

    private static func looksLikeOption(_ argument: String, in spec: CommandSpec) -> Bool {
        if argument.hasPrefix("--") || argument == "-h" { return true }
        guard argument.count >= 2, argument.hasPrefix("-") else { return false }
        return spec.option(short: argument.dropFirst().first ?? "-") != nil
    }

    private static func validate(_ value: String, for option: OptionSpec, in spec: CommandSpec) throws(UsageError) {
        func invalid(_ reason: String, suggestion: String? = nil) -> UsageError {
            .invalidValue(option: option.displayName, value: value, reason: reason, suggestion: suggestion, command: spec.name)
        }
        switch option.kind {
        case .string:
            return
        case .integer(let minimum):
            guard let number = Int(value) else {
                let isDigits = !value.isEmpty && value.allSatisfy(\.isASCII) && value.allSatisfy(\.isNumber)
                throw invalid(isDigits ? "the number is too large" : "expected an integer")
            }
            guard number >= minimum else { throw invalid("must be at least \(minimum)") }
        case .date:
            if case .failure(let problem) = DateArgument.parse(value) {
                throw invalid(problem.description)
            }
        case .choice(let allowed):
            guard allowed.contains(value) else {
                let nearest = Suggestions.closest(to: value, among: allowed).first
                throw invalid("expected one of \(allowed.joined(separator: ", "))", suggestion: nearest)
            }
        }
    }

    private static func checkPositionals(_ positionals: [String], in spec: CommandSpec) throws(UsageError) {
        let repeats = spec.positionals.last?.isRepeating ?? false
        if !repeats, positionals.count > spec.positionals.count {
            let extra = positionals[spec.positionals.count]
            // `colonnade filter limit 5`: the word names an option, so the dashes were probably forgotten.
            let suggestion = spec.option(named: extra).map(\.displayName)
            throw .unexpectedArgument(extra, command: spec.name, suggestion: suggestion)
        }
        for (position, argument) in spec.positionals.enumerated() where argument.isRequired && positionals.count <= position {
            throw .missingArgument(name: argument.synopsis, command: spec.name)
        }
    }

    private static func check(_ constraint: OptionConstraint, given: [String: [String]], in spec: CommandSpec) throws(UsageError) {
        func present(_ names: [String]) -> [String] {
            names.filter { given[$0] != nil }.map { "--" + $0 }
        }
        switch constraint {
        case .mutuallyExclusive(let names):
            let typed = present(names)
            if typed.count > 1 { throw .conflictingOptions(typed, command: spec.name) }
        case .exactlyOne(let names):
            let typed = present(names)
            if typed.count > 1 { throw .conflictingOptions(typed, command: spec.name) }
            if typed.isEmpty {
                let synopses = names.compactMap { spec.option(named: $0)?.synopsis }
                throw .missingOneOf(synopses, command: spec.name)
            }
        case .requires(let option, let others):
            if given[option] != nil, present(others).isEmpty {
                throw .missingCompanion(option: "--" + option, anyOf: others.map { "--" + $0 }, command: spec.name)
            }
        case .notAfter(let first, let second):
            guard let firstValue = given[first]?.last, let secondValue = given[second]?.last,
                let firstDay = try? DateArgument.parse(firstValue).get(),
                let secondDay = try? DateArgument.parse(secondValue).get()
            else { return }
            if firstDay > secondDay {
                throw .reversedRange(
                    first: "--" + first, firstValue: firstValue,
                    second: "--" + second, secondValue: secondValue, command: spec.name)
            }
        }
    }
}

/// Splits a list value on commas that are outside parentheses and double quotes, trimming
/// spaces around each item: `avg(close), "Adj. Close"` → `avg(close)`, `"Adj. Close"`.
func splitList(_ value: String) -> [String] {
    var items: [String] = []
    var current = ""
    var depth = 0
    var inQuotes = false
    for character in value {
        switch character {
        case "\"": inQuotes.toggle()
        case "(" where !inQuotes: depth += 1
        case ")" where !inQuotes: depth = max(0, depth - 1)
        case "," where !inQuotes && depth == 0:
            items.append(current.trimmingSpaces())
            current = ""
            continue
        default: break
        }
        current.append(character)
    }
    items.append(current.trimmingSpaces())
    return items
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var slice = self[...]
        while slice.first == " " { slice.removeFirst() }
        while slice.last == " " { slice.removeLast() }
        return String(slice)
    }
}
