import Colonnade

/// The line being edited at `colonnade shell`'s prompt (``LineEditor``): its characters and the
/// cursor, and the edits keys make.
///
/// Invariants, kept by every edit (``isValid`` checks them; the `ShellLine` fuzz target relies on
/// it): `0 <= cursor <= characters.count`, and every character is drawable — none holds a scalar
/// ``TerminalText`` escapes (C0/C1 controls, DEL, line separators, bidirectional controls), so
/// redrawing the line never sends the terminal a control sequence that came from the text
/// (typed, pasted, or recalled from a history file someone else may have written).
struct EditBuffer: Equatable {
    /// The characters, in order.
    private(set) var characters: [Character] = []
    /// Where the next character goes: 0 (before the first) … `characters.count` (after the last).
    private(set) var cursor = 0

    /// The line as text.
    var text: String { String(characters) }

    /// Characters after the cursor (how far a redraw moves back).
    var charactersAfterCursor: Int { characters.count - cursor }

    /// Whether both invariants hold.
    var isValid: Bool { 0 <= cursor && cursor <= characters.count && characters.allSatisfy(Self.isDrawable) }

    /// Whether `character` may enter the line: it holds no scalar ``TerminalText`` escapes.
    static func isDrawable(_ character: Character) -> Bool {
        !character.unicodeScalars.contains(where: TerminalText.needsEscape)
    }

    /// Inserts `character` at the cursor and moves past it; returns false (and changes nothing)
    /// for a character that is not drawable.
    @discardableResult
    mutating func insert(_ character: Character) -> Bool {
        guard Self.isDrawable(character) else { return false }
        characters.insert(character, at: cursor)
        cursor += 1
        return true
    }

    /// Backspace: removes the character before the cursor; false at the start.
    @discardableResult
    mutating func deleteBackward() -> Bool {
        guard cursor > 0 else { return false }
        characters.remove(at: cursor - 1)
        cursor -= 1
        return true
    }

    /// Delete: removes the character under the cursor; false at the end.
    @discardableResult
    mutating func deleteForward() -> Bool {
        guard cursor < characters.count else { return false }
        characters.remove(at: cursor)
        return true
    }

    /// Moves the cursor by `offset` characters, clamped to the line; false when it did not move.
    @discardableResult
    mutating func moveCursor(by offset: Int) -> Bool {
        // Compared before adding, so that no offset overflows.
        let target =
            offset < 0
            ? (offset < -cursor ? 0 : cursor + offset)
            : (offset > characters.count - cursor ? characters.count : cursor + offset)
        defer { cursor = target }
        return target != cursor
    }

    /// Home: the cursor before the first character.
    mutating func moveToStart() { cursor = 0 }

    /// End: the cursor after the last character.
    mutating func moveToEnd() { cursor = characters.count }

    /// Ctrl-K: erases from the cursor to the end.
    mutating func eraseToEnd() { characters.removeSubrange(cursor...) }

    /// Ctrl-U: erases from the start to the cursor.
    mutating func eraseToStart() {
        characters.removeSubrange(..<cursor)
        cursor = 0
    }

    /// The text before the cursor (what Tab completes).
    var textBeforeCursor: String { String(characters[..<cursor]) }

    /// Replaces the characters from `start` to the cursor with `text` (a completion), cursor after
    /// it; characters that are not drawable are left out.
    mutating func replaceBeforeCursor(from start: Int, with text: String) {
        let start = Swift.max(0, Swift.min(start, cursor))
        let inserted = text.filter(Self.isDrawable).map { $0 }
        characters.replaceSubrange(start ..< cursor, with: inserted)
        cursor = start + inserted.count
    }

    /// Replaces the line with `text` (a history entry), cursor at the end; characters that are not
    /// drawable are left out.
    mutating func replace(with text: String) {
        characters = text.filter(Self.isDrawable).map { $0 }
        cursor = characters.count
    }

    /// Replaces the line with `other`'s characters and cursor (the draft, when coming back down
    /// the history).
    mutating func restore(_ other: EditBuffer) { self = other }
}
