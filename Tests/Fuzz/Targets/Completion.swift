// fuzz-modules: Colonnade ColonnadeCLI
//
// The completion candidate path: names from a snapshot (data: an imported CSV, a server's table)
// through `colonnade _complete` to what a completion script inserts. The input is
// `WORD \0 NAME \n NAME \n …` (no 0 byte: no word, every line a name), decoded with U+FFFD for
// bad bytes. Oracles:
// - `CompletionCandidates.isOffered`: an offered name is printable ASCII without spaces, so it is
//   one line of what `_complete` prints;
// - `quotedForBash` (what bash inserts): each candidate is the word's typed items before its last
//   comma, then a shell word that two independent lexers — a strict POSIX one here, which accepts
//   only safe unquoted characters, single-quoted runs and `\'`, and the shell's `ShellWords` —
//   read back as exactly one offered name starting with the word's last item; each such name
//   appears once, in order;
// - `colonnade _complete tickers --word=WORD` over a snapshot holding the names as tickers prints
//   exactly those candidates (and without `--word`, exactly the offered names);
// - the generated bash, zsh and fish scripts (checked once, at start) never hand `_complete`'s
//   output to anything that expands it: no `compgen -W` of a variable, no `_values`.
@testable import ColonnadeCLI
import Colonnade
import Foundation

nonisolated(unsafe) var scratchDirectory = ""

@_cdecl("LLVMFuzzerInitialize")
public func initialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    scratchDirectory = NSTemporaryDirectory() + "colonnade-fuzz-completion-\(getpid())"
    try? FileManager.default.createDirectory(atPath: scratchDirectory, withIntermediateDirectories: true)
    let scripts = CompletionScript(commands: CommandSpec.colonnadeCommands)
    let bash = scripts.text(for: .bash), zsh = scripts.text(for: .zsh)
    precondition(!bash.contains("-W \"$names") && !bash.contains("-W \"${") && !bash.contains("-W \"$("), "bash expands names")
    precondition(!zsh.contains("_values -") && !zsh.contains("_values $"), "zsh parses names as _values specs")
    precondition(scripts.text(for: .fish).contains("printf '%s%s\\n' \"$prefix\" $name"), "fish prints names other than literally")
    return 0
}

/// The value of `word` read as a POSIX shell would, when it is a safe literal: only unquoted
/// characters no shell treats specially (letters, digits, `-_./,+@%`), single-quoted runs (no
/// expansion inside), and `\'`. nil for anything else — a `$`, backquote, glob or blank outside
/// single quotes, an unclosed quote.
func posixLiteral(_ word: Substring) -> String? {
    let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,+@%".unicodeScalars)
    var out = "", scalars = Array(word.unicodeScalars), i = 0
    while i < scalars.count {
        switch scalars[i] {
        case "'":
            guard let close = scalars[(i + 1)...].firstIndex(of: "'") else { return nil }
            out.unicodeScalars.append(contentsOf: scalars[(i + 1) ..< close])
            i = close + 1
        case "\\":
            guard i + 1 < scalars.count, scalars[i + 1] == "'" else { return nil }
            out += "'"
            i += 2
        case let s where safe.contains(s):
            out.unicodeScalars.append(s)
            i += 1
        default:
            return nil
        }
    }
    return out
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let split = input.firstIndex(of: 0)
    let word = split.map { String(decoding: input[..<$0], as: UTF8.self) }
    let names = String(decoding: split.map { input[($0 + 1)...] } ?? input[...], as: UTF8.self)
        .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)

    let offered = names.filter(CompletionCandidates.isOffered)
    for name in offered {
        precondition(
            !name.isEmpty && name.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 0x20 && $0.value < 0x7F },
            "offered a name that is not one printable word: \(name.debugDescription)")
    }

    let typed = word ?? ""
    let candidates = CompletionCandidates.quotedForBash(names, completing: typed)
    let typedPrefix = typed.lastIndex(of: ",").map { String(typed[...$0]) } ?? ""
    let item = String(typed.dropFirst(typedPrefix.count))
    var read = [String]()
    for candidate in candidates {
        precondition(candidate.hasPrefix(typedPrefix), "a candidate lost the typed items: \(candidate.debugDescription)")
        let quoted = candidate.dropFirst(typedPrefix.count)
        guard let name = posixLiteral(quoted) else { preconditionFailure("not a safe literal: \(quoted.debugDescription)") }
        precondition((try? ShellWords.split(String(quoted))) == [name], "ShellWords reads \(quoted.debugDescription) otherwise")
        read.append(name)
    }
    let expected = offered.filter { $0.utf8.starts(with: item.utf8) }
    precondition(read == expected, "candidates \(read) for \(typed.debugDescription), expected \(expected)")

    // `_complete` itself, over a snapshot with these tickers (distinct, as a table's are).
    var seen = Set<String>()
    let symbols = names.filter { !$0.isEmpty && $0.utf8.count <= 64 && seen.insert($0).inserted }
    guard !symbols.isEmpty, symbols.count <= 64 else { return 0 }
    let path = scratchDirectory + "/names.snapshot"
    do {
        let entries = symbols.enumerated().map { TickerEntry(symbol: $1, firstRow: $0, rowCount: 1) }
        var table = try QuoteTable(
            schema: [ColumnDescriptor(name: "Close", type: .float64)],
            columns: [AnyColumn(Column<Double>(symbols.map { _ in 1 }))],
            dates: Column<Int32>(symbols.map { _ in 0 }), tickers: entries)
        table.computeSummaries()
        try table.save(to: path, durable: false)
    } catch {
        return 0  // names a snapshot refuses never reach _complete
    }
    func complete(_ arguments: [String]) -> String {
        let output = MemoryOutputWriter(), errors = MemoryOutputWriter()
        let context = CommandContext(standardOutput: output, standardError: errors, environment: [:], currentDirectory: scratchDirectory)
        precondition(runColonnade(["_complete", "tickers", "--snapshot", path] + arguments, context: context) == 0, "_complete failed")
        return output.text
    }
    precondition(complete([]) == symbols.filter(CompletionCandidates.isOffered).map { $0 + "\n" }.joined(), "_complete's names")
    if let word {
        let printed = complete(["--word=" + word])
        precondition(
            printed == CompletionCandidates.quotedForBash(symbols, completing: word).map { $0 + "\n" }.joined(), "_complete --word")
    }
    return 0
}
