// fuzz-modules: Colonnade ColonnadeCLI
//
// `colonnade shell`'s input: the line editor (keys on a terminal), the line reader (a pipe or a
// file) and what the session makes of each line. The input is `HISTORY \0 KEYS` (no 0 byte: all
// keys): history lines as a history file holds them, then the bytes typed — characters, control
// keys, escape sequences, invalid UTF-8. Oracles:
// - the line editor: after every key the line is an `EditBuffer` whose cursor lies within it and
//   whose characters are all drawable (`isValid`); every line returned and everything drawn on the
//   terminal is valid UTF-8 and carries no control character but the editor's own (CR, LF, `^C`,
//   ESC [ K, ESC [ n D, ESC [ H, ESC [ 2 J);
// - the line reader: the lines it gives for the whole input (as a file) are the input split at LF,
//   one CR before each LF dropped, decoded with U+FFFD for bad bytes (a reference split here);
// - the session: every line is interpreted (`.open` excepted: it would load any path the input
//   names); a message it prints and the report of an error it throws carry no control character
//   but the line feeds between lines (`TerminalText.needsEscape`).
@testable import ColonnadeCLI
import Colonnade
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A file the editor draws into (rewound for each input), /dev/null to read end of input from,
/// the snapshot the session loads, and a scratch file the line reader reads.
nonisolated(unsafe) var screenFile: Int32 = -1
nonisolated(unsafe) var endOfInput: Int32 = -1
nonisolated(unsafe) var linesFile = ""
nonisolated(unsafe) var session: ShellSession?

@_cdecl("LLVMFuzzerInitialize")
public func initialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    let directory = NSTemporaryDirectory() + "colonnade-fuzz-shellline-\(getpid())"
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    screenFile = open(directory + "/screen", O_RDWR | O_CREAT | O_TRUNC, 0o600)
    endOfInput = open("/dev/null", O_RDONLY)
    linesFile = directory + "/lines"
    precondition(screenFile >= 0 && endOfInput >= 0, "cannot open the scratch files in \(directory)")
    let path = directory + "/fuzz.snapshot"
    session = buildOnce {
        do {
            var table = importBase
            table.computeSummaries()
            try table.save(to: path, durable: false)
            let context = CommandContext(
                standardOutput: MemoryOutputWriter(), standardError: MemoryOutputWriter(),
                environment: [:], currentDirectory: directory)
            return try ShellSession(path: path, verify: true, context: context)
        } catch {
            fatalError("fuzz snapshot: \(error)")
        }
    }
    return 0
}

/// Whether `text` holds a scalar `TerminalText` escapes, line feeds aside.
func hasUnsafeScalar(_ text: String) -> Bool {
    text.unicodeScalars.contains { $0 != "\n" && TerminalText.needsEscape($0) }
}

/// Checks what the editor drew: valid UTF-8, and no control byte but CR, LF and ESC starting one
/// of the editor's own sequences (ESC [ digits K|D|H|J).
func checkDrawn(_ bytes: [UInt8]) {
    guard let text = String(validating: bytes, as: UTF8.self) else { preconditionFailure("the editor drew invalid UTF-8") }
    let scalars = Array(text.unicodeScalars)
    var i = 0
    while i < scalars.count {
        let s = scalars[i]
        if s == "\u{1B}" {
            precondition(i + 1 < scalars.count && scalars[i + 1] == "[", "a bare ESC drawn at \(i)")
            var j = i + 2
            while j < scalars.count, ("0" ... "9").contains(scalars[j]) { j += 1 }
            precondition(j < scalars.count && "KDHJ".unicodeScalars.contains(scalars[j]), "an ESC sequence not the editor's own at \(i)")
            i = j + 1
            continue
        }
        precondition(s == "\r" || s == "\n" || !TerminalText.needsEscape(s), "U+\(String(s.value, radix: 16)) drawn at \(i)")
        i += 1
    }
}

/// The line reader's reference: `bytes` split at LF, one CR before each LF dropped, the last
/// piece kept when not empty, each decoded with U+FFFD for bad bytes.
func referenceLines(_ bytes: [UInt8]) -> [String] {
    var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { piece in
        String(decoding: piece.last == 0x0D ? piece.dropLast() : piece[...], as: UTF8.self)
    }
    // The last piece has no LF after it: kept as it is (its CR too) when not empty.
    if let last = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).last {
        lines.removeLast()
        if !last.isEmpty { lines.append(String(decoding: last, as: UTF8.self)) }
    }
    return lines
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let split = input.firstIndex(of: 0)
    let history = split.map { String(decoding: input[..<$0], as: UTF8.self).split(separator: "\n").map(String.init) } ?? []
    let keys = split.map { Array(input[($0 + 1)...]) } ?? input

    // The line editor.
    _ = ftruncate(screenFile, 0)
    _ = lseek(screenFile, 0, SEEK_SET)
    let editor = LineEditor(input: endOfInput, output: screenFile, history: history, historyLimit: 50)
    editor.pending = keys
    editor.afterEachKey = { precondition($0.isValid, "cursor \($0.cursor) of \($0.characters.count), or a control character in the line") }
    var lines = 0
    while true {
        let outcome = editor.readLine(prompt: "> ")
        if outcome == .endOfInput { break }
        if case .line(let line) = outcome {
            precondition(!hasUnsafeScalar(line), "a control character in a returned line")
            editor.remember(line)
        }
        lines += 1
        precondition(lines <= keys.count + 1, "more lines than keys")
    }
    let drawnSize = Int(lseek(screenFile, 0, SEEK_END))
    var drawn = [UInt8](repeating: 0, count: drawnSize)
    precondition(pread(screenFile, &drawn, drawnSize, 0) == drawnSize, "cannot read back the screen")
    checkDrawn(drawn)

    // The line reader, over the whole input as a file.
    guard FileManager.default.createFile(atPath: linesFile, contents: Data(input)) else { fatalError("cannot write \(linesFile)") }
    let fd = open(linesFile, O_RDONLY)
    precondition(fd >= 0)
    defer { close(fd) }
    let reader = LineReader(fileDescriptor: fd)
    var read = [String]()
    while let line = reader.next() { read.append(line) }
    precondition(read == referenceLines(input), "the line reader's lines differ from the reference split")

    // The session, line by line.
    guard let session else { return 0 }
    session.settings = ShellSettings()  // each input starts from the defaults, so a finding reproduces alone
    for line in read where !line.trimmingSpacesAndTabs().hasPrefix(".open") {
        do {
            if case .message(let text) = try session.interpret(line) {
                precondition(!hasUnsafeScalar(text), "a control character in a shell message for \(line.debugDescription)")
            }
        } catch {
            let report = ErrorReport(error)
            precondition(!hasUnsafeScalar(report.message) && !hasUnsafeScalar(report.hint ?? ""), "a control character in an error report")
            precondition(!report.excerpt.contains(where: hasUnsafeScalar), "a control character in an error excerpt")
        }
    }
    return 0
}
