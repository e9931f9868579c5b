import Colonnade
@testable import ColonnadeCLI
import Testing

/// The shell prompt's line (`EditBuffer`): every edit against a plain array-and-index reference on
/// seeded random keys, the invariants after each, and control characters kept out.
@Suite struct EditBufferTests {
    @Test(arguments: [1, 2, 3, 4])
    func randomEditsMatchTheReferenceAndKeepTheInvariants(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let alphabet: [Character] = ["a", "é", "日", "📈", "e\u{301}", "\u{9B}", "\u{202E}", "\u{1B}", "\u{7F}", " "]
        var buffer = EditBuffer()
        var reference: [Character] = [], cursor = 0
        for _ in 0 ..< 5_000 {
            switch random.next() % 9 {
            case 0, 1, 2:
                let c = alphabet[Int(random.next() % UInt64(alphabet.count))]
                let drawable = !c.unicodeScalars.contains { TerminalText.needsEscape($0) }
                #expect(buffer.insert(c) == drawable)
                if drawable {
                    reference.insert(c, at: cursor)
                    cursor += 1
                }
            case 3:
                #expect(buffer.deleteBackward() == (cursor > 0))
                if cursor > 0 {
                    reference.remove(at: cursor - 1)
                    cursor -= 1
                }
            case 4:
                #expect(buffer.deleteForward() == (cursor < reference.count))
                if cursor < reference.count { reference.remove(at: cursor) }
            case 5:
                let offset = Int(random.next() % 7) - 3
                let target = min(max(cursor + offset, 0), reference.count)
                #expect(buffer.moveCursor(by: offset) == (target != cursor))
                cursor = target
            case 6:
                if random.next() % 2 == 0 {
                    buffer.moveToStart()
                    cursor = 0
                } else {
                    buffer.moveToEnd()
                    cursor = reference.count
                }
            case 7:
                if random.next() % 2 == 0 {
                    buffer.eraseToEnd()
                    reference.removeSubrange(cursor...)
                } else {
                    buffer.eraseToStart()
                    reference.removeSubrange(..<cursor)
                    cursor = 0
                }
            default:
                buffer.replace(with: "x\u{1B}]0;t\u{07}y\u{2066}z")
                reference = ["x", "]", "0", ";", "t", "y", "z"]
                cursor = reference.count
            }
            #expect(buffer.isValid)
            #expect(buffer.characters == reference && buffer.cursor == cursor)
        }
    }

    @Test func anEmptyLineRefusesEveryMoveAndDeletion() {
        var buffer = EditBuffer()
        #expect(!buffer.deleteBackward() && !buffer.deleteForward() && !buffer.moveCursor(by: -1) && !buffer.moveCursor(by: 1))
        buffer.eraseToEnd()
        buffer.eraseToStart()
        #expect(buffer.isValid && buffer.text.isEmpty && buffer.cursor == 0)
        buffer.insert("a")
        #expect(buffer.moveCursor(by: .min) && buffer.cursor == 0)
        #expect(buffer.moveCursor(by: .max) && buffer.cursor == 1)
    }
}
