// Help and usage text, generated from the declaration so it cannot drift from what parses.

extension CommandSpec {
    /// The full help text for `colonnade help NAME` and `colonnade NAME --help`: overview,
    /// discussion, usage, arguments, options (aligned, wrapped at 80 columns) and examples.
    func helpText(programName: String = CommandLineTool.programName) -> String {
        var sections: [String] = []
        sections.append(wrap("OVERVIEW: " + abstract, indent: 0))
        if !discussion.isEmpty {
            sections.append(formatDiscussion(discussion))
        }
        sections.append(usageSynopsis(programName: programName))
        if !positionals.isEmpty {
            sections.append("ARGUMENTS:\n" + alignedRows(positionals.map { ($0.synopsis, $0.abstract) }))
        }
        var rows = options.map { option in (label(of: option), describe(option)) }
        rows.append(("-h, --help", "Show this help."))
        sections.append("OPTIONS:\n" + alignedRows(rows))
        if !examples.isEmpty {
            sections.append("EXAMPLES:\n" + exampleLines(programName: programName).map { "  " + $0 }.joined(separator: "\n"))
        }
        return sections.joined(separator: "\n\n") + "\n"
    }

    /// The examples as typed at a shell: each prefixed with the program's name, except one that
    /// names the program itself (a pipeline that starts with another program, such as
    /// `unzip -p FILE | colonnade import -`), shown as written.
    func exampleLines(programName: String = CommandLineTool.programName) -> [String] {
        examples.map { example in
            example.split(separator: " ").contains(Substring(programName)) ? example : "\(programName) \(example)"
        }
    }

    /// `USAGE: colonnade filter [--snapshot PATH] …`, every option shown, wrapped under the
    /// command name.
    func usageSynopsis(programName: String = CommandLineTool.programName) -> String {
        let lead = "USAGE: \(programName) \(name)"
        let parts = positionals.map(\.synopsis) + optionSynopses(includeOptional: true)
        return wrapWords(parts, lead: lead, continuation: String(repeating: " ", count: lead.count + 1))
    }

    /// One line for error messages: the command, its positionals and required options, and
    /// `[options]` for the rest (`colonnade import FILE... [options]`).
    func compactUsage(programName: String = CommandLineTool.programName) -> String {
        var parts = [programName, name] + positionals.map(\.synopsis) + optionSynopses(includeOptional: false)
        if options.contains(where: { !$0.isRequired && !isInExactlyOneGroup($0.name) }) {
            parts.append("[options]")
        }
        return parts.joined(separator: " ")
    }

    /// Synopses in declaration order; a group of alternatives appears once, where its first
    /// member is declared: `(--snapshot PATH | --csv FILE)` when one is required, `[--database
    /// WIKI | --table WIKI/PRICES]` when at most one is allowed.
    private func optionSynopses(includeOptional: Bool) -> [String] {
        var parts: [String] = []
        var shown: Set<String> = []
        for option in options where !shown.contains(option.name) {
            if let group = alternatives(containing: option.name) {
                shown.formUnion(group.names)
                if group.isRequired || includeOptional {
                    let inner = group.names.compactMap { self.option(named: $0).map(shortSynopsis) }.joined(separator: " | ")
                    parts.append(group.isRequired ? "(\(inner))" : "[\(inner)]")
                }
            } else if option.isRequired {
                parts.append(shortSynopsis(option))
            } else if includeOptional {
                parts.append("[\(shortSynopsis(option))]")
            }
        }
        return parts
    }

    private func alternatives(containing name: String) -> (names: [String], isRequired: Bool)? {
        for constraint in constraints {
            switch constraint {
            case .exactlyOne(let names) where names.contains(name): return (names, true)
            case .mutuallyExclusive(let names) where names.contains(name): return (names, false)
            default: continue
            }
        }
        return nil
    }

    private func isInExactlyOneGroup(_ name: String) -> Bool {
        alternatives(containing: name)?.isRequired ?? false
    }

    /// `-o FILE` when there is a short form, else `--output FILE`.
    private func shortSynopsis(_ option: OptionSpec) -> String {
        guard let short = option.shortName else { return option.synopsis }
        return "-\(short)" + (option.valueName.map { " " + $0 } ?? "")
    }

    private func label(of option: OptionSpec) -> String {
        (option.shortName.map { "-\($0), " } ?? "") + option.synopsis
    }

    private func describe(_ option: OptionSpec) -> String {
        var text = option.abstract
        if option.isRequired { text += " (required)" }
        if let defaultValue = option.defaultValue { text += " (default: \(defaultValue))" }
        return text
    }
}

extension CommandLineTool {
    /// The help text for `colonnade help` and `colonnade --help`: the listed commands and the
    /// global options.
    func helpText() -> String {
        let listed = commands.map(\.spec).filter { $0.listing != .hidden }
        let rows = listed.map { spec in (spec.name, spec.abstract) }
        return """
            \(Self.programName) \(version) — \(abstract)

            USAGE: \(Self.programName) <command> [options]

            COMMANDS:
            \(alignedRows(rows))

            OPTIONS:
            \(alignedRows([("-h, --help", "Show this help."), ("--version", "Print the version and exit.")]))

            SNAPSHOTS:
            \(wrap("Commands that read use " + SnapshotLocation.readOrder + " (20 tickers × 2,520 days of made-up quotes, "
               + "generated in memory). Commands that write (fetch, import) use " + SnapshotLocation.writeOrder
               + ". A --snapshot or $COLONNADE_SNAPSHOT whose directory does not exist is refused.", indent: 2))

            Run '\(Self.programName) help <command>' or '\(Self.programName) <command> --help' for a command's options.

            """
    }
}

// MARK: Layout

/// Label and text columns, two spaces in, text aligned after the longest label up to 26
/// columns; a longer label puts its text on the next line. Text wraps at 80 columns.
func alignedRows(_ rows: [(label: String, text: String)]) -> String {
    let labelWidth = rows.map(\.label.count).filter { $0 <= 26 }.max() ?? 0
    let textColumn = 2 + labelWidth + 2
    var lines: [String] = []
    for row in rows {
        let wrapped = wrap(row.text, indent: textColumn)
        if row.label.count <= labelWidth {
            let padding = String(repeating: " ", count: labelWidth - row.label.count + 2)
            lines.append("  " + row.label + padding + wrapped.dropFirst(textColumn))
        } else {
            lines.append("  " + row.label)
            lines.append(wrapped)
        }
    }
    return lines.joined(separator: "\n")
}

/// Greedy word wrap: every line starts with `indent` spaces and stays within `width` columns
/// unless a single word is longer.
func wrap(_ text: String, indent: Int, width: Int = 80) -> String {
    let margin = String(repeating: " ", count: indent)
    return wrapWords(text.split(separator: " ").map(String.init), lead: margin, continuation: margin, width: width)
}

/// `lead` followed by `words`, each line within `width` columns unless a single word is
/// longer; lines after the first start with `continuation`.
func wrapWords(_ words: [String], lead: String, continuation: String, width: Int = 80) -> String {
    var lines: [String] = []
    var line = lead
    var lineHasWord = false
    for word in words {
        if lineHasWord, line.count + 1 + word.count > width {
            lines.append(line)
            line = continuation
            lineHasWord = false
        }
        line += (line.isEmpty || line.last == " " ? "" : " ") + word
        lineHasWord = true
    }
    lines.append(line)
    return lines.joined(separator: "\n")
}

/// Paragraphs re-wrapped at 80 columns; a paragraph whose lines are indented (an example,
/// a table) is kept verbatim.
private func formatDiscussion(_ text: String) -> String {
    text.split(separator: "\n\n", omittingEmptySubsequences: true).map { paragraph in
        let lines = paragraph.split(separator: "\n")
        if lines.contains(where: { $0.hasPrefix(" ") }) { return String(paragraph) }
        return wrap(lines.joined(separator: " "), indent: 0)
    }.joined(separator: "\n\n")
}
