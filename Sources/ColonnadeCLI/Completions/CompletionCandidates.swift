/// The names `colonnade _complete` offers a completion script, and the exact text it prints for
/// them: the one place data from a snapshot (tickers, column names) becomes completion
/// candidates, so the one place to get right.
///
/// Names come from files and servers (an imported CSV, a `fetch --table` response), so a ticker
/// can be `$(touch${IFS}x)`. The scripts never expand what `_complete` prints: bash reads each
/// line as one finished candidate (``quotedForBash(_:completing:)``: matched and quoted here),
/// zsh hands the lines to `compadd` and fish to `complete -a` as literal strings, which both
/// quote on insertion. Names that cannot travel as one line, or be typed back, are not offered
/// at all (``isOffered(_:)``).
enum CompletionCandidates {
    /// Whether `name` is offered: non-empty printable ASCII without spaces (`!` … `~`). A name with
    /// a space, a tab, a line break or another control character would split a candidate line or
    /// draw on the terminal, and a non-ASCII one may hide look-alike or invisible characters: such
    /// names are left out (they can still be typed, quoted, by hand).
    static func isOffered(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { (0x21 ... 0x7E).contains($0) }
    }

    /// The bash candidates for `word`, the word being completed as typed (`AAPL,MS`): the names
    /// whose start is the word's last comma-separated item, compared literally (no pattern
    /// matching), each written as the typed items before that last comma followed by the name as
    /// one shell word (``shellWord(_:)``: unchanged when it holds no character the shell treats
    /// specially, else single-quoted). Bash inserts each line as it is, so what the line then runs
    /// with is the name itself, never an expansion of it.
    ///
    /// - Complexity: O(total length of `names`).
    static func quotedForBash(_ names: [String], completing word: String) -> [String] {
        let lastComma = word.lastIndex(of: ",")
        let typedPrefix = lastComma.map { String(word[...$0]) } ?? ""
        let item = lastComma.map { String(word[word.index(after: $0)...]) } ?? word
        return names.filter { isOffered($0) && $0.utf8.starts(with: item.utf8) }.map { typedPrefix + shellWord($0) }
    }
}
