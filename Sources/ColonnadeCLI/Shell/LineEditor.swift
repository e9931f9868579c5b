import Colonnade
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads lines from a terminal in raw mode, with editing and history, as `colonnade shell`'s
/// prompt: left/right (and Ctrl-B/Ctrl-F), Home/End (and Ctrl-A/Ctrl-E), Backspace, Delete,
/// Ctrl-K/Ctrl-U (erase to the end/start), up/down through the history, Ctrl-C to abandon the
/// line, Ctrl-D on an empty line for end of input, Tab to complete the word before the cursor
/// (through ``completer``: one candidate is filled in, several are extended to their common
/// prefix and listed). Text is UTF-8; each character is taken to be one column wide. The line is
/// an ``EditBuffer``: characters that would draw a control sequence (C1 controls, bidirectional
/// controls, from the keyboard, a history file or a completion) never enter it.
final class LineEditor {
    /// How a read ended.
    enum Outcome: Equatable {
        /// Enter was pressed.
        case line(String)
        /// Ctrl-C: the line was abandoned.
        case interrupt
        /// Ctrl-D on an empty line, or the input closed.
        case endOfInput
    }

    /// Where keys come from (a terminal in raw mode).
    let input: Int32
    /// Where the prompt and the line being edited are drawn.
    let output: Int32
    /// Earlier lines, oldest first.
    private(set) var history: [String]
    /// How many history lines are kept.
    let historyLimit: Int
    /// Bytes read but not used yet (typed ahead while a query ran, or after Enter).
    var pending: [UInt8] = []
    /// Where SIGINT is reported; it then acts as Ctrl-C.
    var signals: ShellSignals?
    /// What Tab completes: given the line up to the cursor, where the word being completed
    /// starts (a character offset) and the words it may become.
    var completer: ((String) -> (start: Int, candidates: [String]))?

    init(input: Int32, output: Int32, history: [String] = [], historyLimit: Int = 1_000) {
        self.input = input
        self.output = output
        self.history = Array(history.suffix(historyLimit))
        self.historyLimit = historyLimit
    }

    /// Adds `line` to the history unless it is empty or repeats the last entry.
    /// - Returns: whether it was added.
    @discardableResult
    func remember(_ line: String) -> Bool {
        guard !line.isEmpty, history.last != line else { return false }
        history.append(line)
        if history.count > historyLimit { history.removeFirst(history.count - historyLimit) }
        return true
    }

    /// Called after each key with the line as it then is: for tests and the `ShellLine` fuzz
    /// target, which check ``EditBuffer``'s invariants; nil otherwise.
    var afterEachKey: ((EditBuffer) -> Void)?

    /// Shows `prompt` and reads one line.
    func readLine(prompt: String) -> Outcome {
        var buffer = EditBuffer()
        var historyIndex = history.count  // history.count = the line being typed
        var draft = EditBuffer()

        func refresh() {
            var text = "\r" + prompt + buffer.text + "\u{1B}[K"
            if buffer.charactersAfterCursor > 0 { text += "\u{1B}[\(buffer.charactersAfterCursor)D" }
            write(text)
        }
        func recall(_ index: Int) {
            if historyIndex == history.count { draft = buffer }
            historyIndex = index
            if index == history.count { buffer.restore(draft) } else { buffer.replace(with: history[index]) }
            refresh()
        }

        write(prompt)
        while let byte = nextByte() {
            defer { afterEachKey?(buffer) }
            switch byte {
            case 0x0D, 0x0A:  // Enter
                write("\r\n")
                return .line(buffer.text)
            case 0x03:  // Ctrl-C
                write("^C\r\n")
                return .interrupt
            case 0x04:  // Ctrl-D
                if buffer.characters.isEmpty {
                    write("\r\n")
                    return .endOfInput
                }
                if buffer.deleteForward() { refresh() }
            case 0x7F, 0x08:  // Backspace
                if buffer.deleteBackward() { refresh() }
            case 0x01:
                buffer.moveToStart()
                refresh()  // Ctrl-A
            case 0x05:
                buffer.moveToEnd()
                refresh()  // Ctrl-E
            case 0x02: if buffer.moveCursor(by: -1) { refresh() }  // Ctrl-B
            case 0x06: if buffer.moveCursor(by: 1) { refresh() }  // Ctrl-F
            case 0x0B:
                buffer.eraseToEnd()
                refresh()  // Ctrl-K
            case 0x15:
                buffer.eraseToStart()
                refresh()  // Ctrl-U
            case 0x0C:
                write("\u{1B}[H\u{1B}[2J")
                refresh()  // Ctrl-L
            case 0x09:  // Tab
                guard let completer else { break }
                let (start, candidates) = completer(buffer.textBeforeCursor)
                guard !candidates.isEmpty, start <= buffer.cursor else { break }
                let typed = String(buffer.characters[start ..< buffer.cursor])
                var common = candidates[0]
                for candidate in candidates.dropFirst() { common = commonPrefix(common, candidate) }
                if candidates.count == 1, !common.hasSuffix("(") { common += " " }
                if common.count > typed.count {
                    buffer.replaceBeforeCursor(from: start, with: common)
                    refresh()
                } else if candidates.count > 1 {
                    write("\r\n" + candidates.map { TerminalText.escaped($0) }.joined(separator: "  ") + "\r\n")
                    refresh()
                }
            case 0x10: if historyIndex > 0 { recall(historyIndex - 1) }  // Ctrl-P
            case 0x0E: if historyIndex < history.count { recall(historyIndex + 1) }  // Ctrl-N
            case 0x1B:
                switch readEscape() {
                case "A": if historyIndex > 0 { recall(historyIndex - 1) }
                case "B": if historyIndex < history.count { recall(historyIndex + 1) }
                case "C": if buffer.moveCursor(by: 1) { refresh() }
                case "D": if buffer.moveCursor(by: -1) { refresh() }
                case "H", "1~", "7~":
                    buffer.moveToStart()
                    refresh()
                case "F", "4~", "8~":
                    buffer.moveToEnd()
                    refresh()
                case "3~": if buffer.deleteForward() { refresh() }
                default: break
                }
            case 0x20...:
                // A character that would draw a control sequence (C1, a bidirectional control) is dropped.
                guard let character = readCharacter(startingWith: byte), buffer.insert(character) else { continue }
                if buffer.charactersAfterCursor == 0 { write(String(character)) } else { refresh() }
            default:
                break  // other control keys are ignored
            }
        }
        write("\r\n")
        return .endOfInput
    }

    /// The rest of an escape sequence after ESC: `A` for `ESC [ A`, `3~` for `ESC [ 3 ~`,
    /// `H` for `ESC O H`; "" for anything unrecognised.
    private func readEscape() -> String {
        guard let introducer = nextByte() else { return "" }
        guard introducer == UInt8(ascii: "[") || introducer == UInt8(ascii: "O") else { return "" }
        var sequence = ""
        while let b = nextByte() {
            sequence.unicodeScalars.append(Unicode.Scalar(b))
            if (0x40 ... 0x7E).contains(b) || sequence.count > 8 { break }
        }
        return sequence
    }

    /// A UTF-8 character whose first byte is `first`; nil when the bytes are not valid UTF-8.
    private func readCharacter(startingWith first: UInt8) -> Character? {
        let length: Int
        switch first {
        case 0x20 ..< 0x80: length = 1
        case 0xC2 ... 0xDF: length = 2
        case 0xE0 ... 0xEF: length = 3
        case 0xF0 ... 0xF4: length = 4
        default: return nil
        }
        var bytes = [first]
        while bytes.count < length, let b = nextByte() {
            guard b & 0xC0 == 0x80 else {
                pending.insert(b, at: 0)
                return nil
            }
            bytes.append(b)
        }
        guard let text = String(validating: bytes, as: UTF8.self), text.count == 1 else { return nil }
        return text.first
    }

    /// The next byte: typed-ahead first, then from the terminal; nil at end of input. A SIGINT
    /// reads as Ctrl-C (0x03).
    private func nextByte() -> UInt8? {
        if !pending.isEmpty { return pending.removeFirst() }
        var byte: UInt8 = 0
        while true {
            if let signals {
                var fds = [
                    pollfd(fd: input, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: signals.interruptDescriptor, events: Int16(POLLIN), revents: 0),
                ]
                let ready = SystemCall.retryingOnInterrupt { poll(&fds, 2, -1) }
                if fds[1].revents != 0 && signals.takeInterrupt() { return 0x03 }
                if ready > 0 && fds[0].revents == 0 { continue }
            }
            let n = SystemCall.retryingOnInterrupt { read(input, &byte, 1) }
            return n == 1 ? byte : nil
        }
    }

    /// The longest common prefix of two words, ignoring case (the first word's spelling).
    private func commonPrefix(_ a: String, _ b: String) -> String {
        var end = a.startIndex, other = b.startIndex
        while end < a.endIndex, other < b.endIndex, a[end].lowercased() == b[other].lowercased() {
            end = a.index(after: end)
            other = b.index(after: other)
        }
        return String(a[..<end])
    }

    /// Writes `text` to the terminal, all of it.
    func write(_ text: String) {
        // A terminal that cannot be written to has no one to tell.
        _ = Array(text.utf8).withUnsafeBytes { SystemCall.writeAll(output, $0.baseAddress, $0.count) }
    }
}
