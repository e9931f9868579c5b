/// Splits a line into words as a POSIX shell would for plain arguments: whitespace separates,
/// single quotes keep everything literally, double quotes keep everything but `\"` and `\\`,
/// a backslash outside quotes escapes the next character. No expansion of any kind.
enum ShellWords {
    /// Why a line could not be split.
    struct UnclosedQuote: CLIReportableError {
        var quote: Character
        var message: String { "unclosed \(quote) quote" }
        var hint: String? { "close the quote, or put the expression after --where in the other kind of quotes" }
        var exitStatus: Int32 { ExitStatus.usage }
    }

    /// The words of `line`.
    static func split(_ line: String) throws -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for c in line {
            if escaped {
                current.append(c)
                escaped = false
                continue
            }
            switch quote {
            case "'":
                if c == "'" { quote = nil } else { current.append(c) }
            case "\"":
                if c == "\"" { quote = nil } else if c == "\\" { escaped = true } else { current.append(c) }
            default:
                if c == " " || c == "\t" {
                    if inWord {
                        words.append(current)
                        current = ""
                        inWord = false
                    }
                } else if c == "'" || c == "\"" {
                    quote = c
                    inWord = true
                } else if c == "\\" {
                    escaped = true
                    inWord = true
                } else {
                    current.append(c)
                    inWord = true
                }
            }
        }
        if let quote { throw UnclosedQuote(quote: quote) }
        if inWord { words.append(current) }
        return words
    }
}
