import Foundation

/// A shell completion script for `colonnade`, generated from the same ``CommandSpec``
/// declarations the parser and `colonnade help` use, so it never drifts from what parses.
///
///     let script = CompletionScript(commands: CommandSpec.colonnadeCommands)
///     print(script.text(for: .bash))
///
/// Every script offers the commands (and `help COMMAND`), each command's options (long and short
/// forms), the choices of choice options (`--format`), file names for `PATH`/`FILE` values and
/// `FILE` arguments, and — asked of `colonnade _complete columns|tickers` while completing — the
/// column names and tickers of the snapshot the line names with `--snapshot` (else the default
/// one) for `--columns`, `--tickers` and `TICKER` arguments, item by item in comma lists.
struct CompletionScript: Sendable {
    /// The shells a script can be generated for.
    enum Shell: String, CaseIterable, Sendable {
        case bash, zsh, fish
    }

    /// The program name the script completes (`colonnade`).
    var programName: String
    /// The commands offered, in order (hidden ones are left out).
    var commands: [CommandSpec]

    /// A script for `commands` (those with ``CommandSpec/Listing-swift.enum/hidden`` listing are dropped).
    init(programName: String = CommandLineTool.programName, commands: [CommandSpec]) {
        self.programName = programName
        self.commands = commands.filter { $0.listing != .hidden }
    }

    /// The script's text for `shell`.
    func text(for shell: Shell) -> String {
        switch shell {
        case .bash: bashScript()
        case .zsh: zshScript()
        case .fish: fishScript()
        }
    }

    /// The top-level words besides the commands.
    static let globalOptions: [(name: String, abstract: String)] = [
        ("--help", "Show help"), ("--version", "Print the version"),
    ]

    /// The shell function names use the program name with anything but letters, digits and `_`
    /// replaced (`colonnade-dev` → `colonnade_dev`).
    var functionStem: String {
        String(programName.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
    }
}

/// The first sentence of `text`, on one line, without its final period: what a completion menu
/// shows beside a candidate.
func completionSummary(_ text: String) -> String {
    let oneLine = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    var sentence = oneLine
    if let end = oneLine.range(of: ". ") { sentence = String(oneLine[..<end.lowerBound]) }
    if sentence.hasSuffix(".") { sentence.removeLast() }
    if sentence.count > 90 { sentence = String(sentence.prefix(87)) + "..." }
    return sentence
}

/// `word` as one shell word: unchanged when it holds only characters no shell treats specially,
/// else in single quotes (valid in bash, zsh and fish alike for these characters).
func shellWord(_ word: String) -> String {
    let plain = word.unicodeScalars.allSatisfy {
        $0.properties.isAlphabetic && $0.isASCII || ("0" ... "9").contains($0) || "-_./,+@%".unicodeScalars.contains($0)
    }
    if plain && !word.isEmpty { return word }
    return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
}
