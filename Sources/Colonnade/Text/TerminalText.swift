/// Text from a file or the network (tickers, column names, metadata, server messages, paths),
/// made safe to print on a terminal: control characters cannot move the cursor, set the
/// title, write to the clipboard (OSC 52) or reorder the line. The package's one escaper: every
/// place that prints such text calls ``escaped(_:lineBreaks:)`` — the CLI directly or through
/// `ErrorReport`, `CommandContext.warn` and the table, CSV and JSON formatters; the engine's and
/// the format's error descriptions through `DecodeError.oneLine`; the HTTP client's messages
/// through `Redactor.oneLine`, after redaction.
///
/// Escaped as `\n`, `\r`, `\t` and `\u{HEX}`: C0 controls, DEL, C1 controls (U+0080–U+009F,
/// which some terminals read as 8-bit CSI/OSC), the line and paragraph separators U+2028/U+2029,
/// and the bidirectional controls (U+061C, U+200E/U+200F, U+202A–U+202E, U+2066–U+2069) that
/// make a line display in another order than it reads. Everything else, including
/// non-ASCII letters and emoji, passes through unchanged. Backslashes are not escaped: the
/// result is for reading, not for parsing back. Invalid UTF-8 never reaches here: text is
/// decoded with U+FFFD in place of bad bytes, and U+FFFD prints as itself.
package enum TerminalText {
    /// What ``escaped(_:lineBreaks:)`` does with line feeds, carriage returns and tabs.
    package enum LineBreaks: Sendable {
        /// Written as `\n`, `\r`, `\t`: the text stays on one line (names, paths, values).
        case escaped
        /// Every line break (`Character.isNewline`: LF, CR, CR LF, VT, FF, NEL, U+2028, U+2029)
        /// becomes one space, tabs are `\t`: messages whose own breaks are only wrapping
        /// (error reports).
        case spaces
        /// LF, CR and tab kept as they are (a CSV field, whose quotes carry them exactly).
        case kept
    }

    /// Whether `scalar` is escaped.
    package static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00 ... 0x1F, 0x7F ... 0x9F, 0x2028, 0x2029, 0x061C, 0x200E, 0x200F, 0x202A ... 0x202E, 0x2066 ... 0x2069: true
        default: false
        }
    }

    /// `text` with every escaped scalar written as `\n`, `\r`, `\t` or `\u{HEX}`, line breaks
    /// as `lineBreaks` says.
    ///
    /// - Complexity: O(*n*) in the length of `text`; `text` itself when nothing needs escaping.
    package static func escaped(_ text: String, lineBreaks: LineBreaks = .escaped) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        let source = lineBreaks == .spaces ? String(text.map { $0.isNewline ? " " : $0 }) : text
        var out = ""
        for scalar in source.unicodeScalars {
            switch scalar {
            case _ where lineBreaks == .kept && (scalar == "\n" || scalar == "\r" || scalar == "\t"): out.unicodeScalars.append(scalar)
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where needsEscape(scalar): out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `text` split into lines, each escaped: for multi-line output (a debug log entry) whose
    /// line breaks are meant, but whose lines hold text from elsewhere.
    package static func escapedLines(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { escaped(String($0)) }.joined(separator: "\n")
    }

    /// Serialized JSON with the escaped scalars that JSON allows raw (DEL, C1, the separators,
    /// the bidirectional controls) written as `\uXXXX`: the same JSON value, safe on a terminal.
    /// C0 controls never appear raw in valid JSON.
    package static func escapedJSON(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: needsEscape) else { return json }
        var out = ""
        for scalar in json.unicodeScalars {
            if scalar.value >= 0x7F && needsEscape(scalar) {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
