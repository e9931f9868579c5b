import Testing

@testable import Colonnade
import ColonnadeTestSupport

// Differential tests of the decoders' inline number scan (eight bytes at a time) against the
// byte-at-a-time scan it replaced (same accepted grammar, same stop offset, same nil cases) and,
// whenever it converts, against Double(String) bit for bit. Every token sits at the very end of
// its bytes, right before a page the process may not read (`GuardedBytes`, in ColonnadeTestSupport),
// so a load past `end` crashes the test.

/// The scan as it was before the eight-byte loads: one byte at a time, the oracle for the
/// grammar, the stop offset and the nil cases.
private func byteAtATimeScan(_ base: UnsafePointer<UInt8>, _ p: Int, _ end: Int) -> (value: Double, stop: Int)? {
    var q = p
    let negative = q < end && base[q] == UInt8(ascii: "-")
    if negative { q += 1 }
    var significand: UInt64 = 0
    let integerStart = q
    while q < end {
        let digit = base[q] &- UInt8(ascii: "0")
        if digit >= 10 { break }
        significand = significand &* 10 &+ UInt64(digit)
        q += 1
    }
    var digits = q - integerStart
    var fractionDigits = 0
    if q < end && base[q] == UInt8(ascii: ".") {
        q += 1
        let fractionStart = q
        while q < end {
            let digit = base[q] &- UInt8(ascii: "0")
            if digit >= 10 { break }
            significand = significand &* 10 &+ UInt64(digit)
            q += 1
        }
        fractionDigits = q - fractionStart
        digits += fractionDigits
    }
    guard digits > 0 && digits <= 19 else { return nil }
    if significand <= 1 << 53 && fractionDigits <= 22 {
        var value = Double(Int64(bitPattern: significand))
        if fractionDigits > 0 { value /= DecimalParser._exactPowerOfTen(fractionDigits) }
        return (negative ? -value : value, q)
    }
    guard let magnitude = DecimalParser._eiselLemire(significand, -fractionDigits) else { return nil }
    return (Double(bitPattern: magnitude | (negative ? 1 << 63 : 0)), q)
}

/// Collects scans that differ from the byte-at-a-time scan or from Double(String).
private struct ScanDifferential {
    var checked = 0
    var converted = 0
    var mismatches: [String] = []

    /// Scans `bytes[p...]` with `end` = `bytes.count`, the bytes ending at a guard page.
    mutating func check(_ bytes: [UInt8], from p: Int, in memory: GuardedBytes) {
        checked += 1
        let (actual, expected) = memory.withBytesAtEnd(bytes) { base in
            (NumberScanning.scanPlainDecimal(base, p, bytes.count), byteAtATimeScan(base, p, bytes.count))
        }
        func describe() -> String { "\(bytes[p...].map { String($0, radix: 16) }.joined(separator: " ")) from \(p) of \(bytes.count)" }
        guard mismatches.count < 20 else { return }
        switch (actual, expected) {
        case (nil, nil):
            return
        case let (a?, e?) where a.stop == e.stop && a.value.bitPattern == e.value.bitPattern:
            converted += 1
            let text = String(decoding: bytes[p ..< a.stop], as: UTF8.self)
            if Double(text)?.bitPattern != a.value.bitPattern {
                mismatches.append("\(text.debugDescription): got \(a.value), Double(String) gives \(Double(text).map { "\($0)" } ?? "nil")")
            }
        default:
            mismatches.append("\(describe()): got \(actual.map { "\($0)" } ?? "nil"), byte loop gives \(expected.map { "\($0)" } ?? "nil")")
        }
    }

    func expectNoMismatches(
        atLeast minimum: Int, convertedAtLeast minimumConverted: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(checked >= minimum, sourceLocation: sourceLocation)
        #expect(converted >= minimumConverted, sourceLocation: sourceLocation)
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))", sourceLocation: sourceLocation)
    }
}

/// What the decoders see after a number, plus bytes that stress the digit test: the neighbours
/// of '0'…'9' (0x2F '/', 0x3A ':'), the grammar's own bytes, and bytes whose subtraction or
/// addition would borrow or carry into the next byte.
private let followers: [UInt8] =
    Array(",]\n\r\" }".utf8) + [0x2F, 0x3A] + Array(".eE+-0".utf8)
    + [0x00, 0x09, 0x7F, 0x80, 0xAF, 0xB0, 0xC6, 0xF9, 0xFA, 0xFF]

private extension Array where Element == UInt8 {
    mutating func appendDigits(_ count: Int, _ rng: inout SplitMix64) {
        let style = rng.below(8)
        for _ in 0 ..< count {
            switch style {
            case 0: append(UInt8(ascii: "0"))
            case 1: append(UInt8(ascii: "9"))
            default: append(UInt8(ascii: "0") + UInt8(rng.below(10)))
            }
        }
    }

    /// A random token of exactly `length` bytes: an optional sign, digits, an optional point.
    static func randomToken(length: Int, _ rng: inout SplitMix64) -> [UInt8] {
        var token: [UInt8] = []
        var rest = length
        if rest > 1, rng.chance(3) {
            token.append(rng.chance(4) ? UInt8(ascii: "+") : UInt8(ascii: "-"))
            rest -= 1
        }
        if rng.chance(3) {
            token.appendDigits(rest, &rng)
        } else {
            // The point anywhere, including first and last.
            let integerDigits = rng.below(rest)
            token.appendDigits(integerDigits, &rng)
            token.append(UInt8(ascii: "."))
            token.appendDigits(rest - 1 - integerDigits, &rng)
        }
        return token
    }
}

@Suite struct NumberScanningTests {
    @Test func randomTokensOfEveryLengthMatchByteLoopAndDoubleFromString() {
        let memory = GuardedBytes()
        var rng = SplitMix64(seed: 0x5CA7)
        var differential = ScanDifferential()
        for length in 1 ... 25 {
            for _ in 0 ..< 300 {
                let token = [UInt8].randomToken(length: length, &rng)
                // Anything before the token (0…8 bytes, digits included) is not part of it.
                var bytes: [UInt8] = []
                bytes.appendDigits(rng.below(9), &rng)
                let p = bytes.count
                bytes += token
                // The token ends exactly at `end`, or 1…8 bytes before it, with any follower first.
                let after = rng.below(9)
                if after > 0 {
                    bytes.append(followers[rng.below(followers.count)])
                    for _ in 1 ..< after {
                        bytes.append(rng.chance(2) ? UInt8(ascii: "0") + UInt8(rng.below(10)) : followers[rng.below(followers.count)])
                    }
                }
                differential.check(bytes, from: p, in: memory)
            }
        }
        differential.expectNoMismatches(atLeast: 7_500, convertedAtLeast: 3_000)
    }

    @Test func longFractionsReadFromTwoAndThreeWordsMatchByteLoopAndDoubleFromString() {
        // Tokens with their point at every offset 0…7 and 0…20 fraction digits, followed by a
        // follower and 0…30 more bytes, so the two- and three-word reads (which need 16 and 24
        // bytes before `end`) run, and fall back, at every length.
        let memory = GuardedBytes()
        var rng = SplitMix64(seed: 0x10F7)
        var differential = ScanDifferential()
        for integerDigits in 0 ... 8 {
            for fractionDigits in 0 ... 20 {
                for _ in 0 ..< 12 {
                    var bytes: [UInt8] = []
                    if rng.chance(6) { bytes.append(UInt8(ascii: "-")) }
                    bytes.appendDigits(integerDigits, &rng)
                    bytes.append(UInt8(ascii: "."))
                    bytes.appendDigits(fractionDigits, &rng)
                    bytes.append(followers[rng.below(followers.count)])
                    for _ in 0 ..< rng.below(31) {
                        bytes.append(rng.chance(2) ? UInt8(ascii: "0") + UInt8(rng.below(10)) : followers[rng.below(followers.count)])
                    }
                    differential.check(bytes, from: 0, in: memory)
                }
            }
        }
        differential.expectNoMismatches(atLeast: 2_200, convertedAtLeast: 1_500)
    }

    @Test func longFractionsGiveKnownValues() throws {
        // Known answers on each path, with room after them for every load.
        let memory = GuardedBytes()
        let pad = String(repeating: "7", count: 24)
        let cases: [(String, Double, Int)] = [
            ("118088.0", 118088.0, 8), ("1114527.0", 1114527.0, 9), ("1234567.", 1234567.0, 8),
            ("0.12345678901234", 0.12345678901234, 16), ("158.6164220654312", 158.6164220654312, 17),
            ("12.34567890123456789", 12.34567890123456789, 20), (".1234567890123456789", 0.1234567890123456789, 20),
            ("9007199254.740993", 9007199254.740993, 17), ("0.000000000000000001", 1e-18, 20),
        ]
        for (text, value, stop) in cases {
            let bytes = Array((text + "," + pad).utf8)
            let scanned = try #require(
                memory.withBytesAtEnd(bytes) { NumberScanning.scanPlainDecimal($0, 0, bytes.count) },
                "\(text.debugDescription)")
            #expect(scanned.value.bitPattern == value.bitPattern, "\(text.debugDescription)")
            #expect(scanned.stop == stop, "\(text.debugDescription)")
        }
        // 20 digits: too many for the fast grammar, however the point splits them.
        for text in ["1234567.8901234567890", "1.2345678901234567890"] {
            let bytes = Array((text + "," + pad).utf8)
            #expect(memory.withBytesAtEnd(bytes) { NumberScanning.scanPlainDecimal($0, 0, bytes.count) } == nil, "\(text)")
        }
    }

    @Test func everyFollowerAtEveryDistanceFromEnd() {
        // Fixed tokens, each followed by every follower, with 0…8 more bytes before `end`.
        let memory = GuardedBytes()
        var differential = ScanDifferential()
        let tokens = [
            "185.82", "118088.0", "0.0", "1.0", "-0", "-0.0", "0", "7", "12345678", "123456789",
            "1234567.8", "12345678.9", "0.12345678", "00000000000000000001", "000000001.5",
            "9999999999999999999", "999999999999999999.9", "10000000000000000000", "18446744073709551616",
            "9007199254740993", "9007199254740992", "-9007199254740993.0", "4.9406564584124654",
            "1.", "-1.", ".5", "-.5", "12345678.", ".12345678", "-", ".", "-.", "+1", "1e5", "1.5E-3",
        ]
        for text in tokens {
            let token = Array(text.utf8)
            for follower in followers {
                for extra in 0 ... 8 {
                    let bytes = token + [follower] + [UInt8](repeating: UInt8(ascii: "7"), count: extra)
                    differential.check(bytes, from: 0, in: memory)
                }
            }
            // And with nothing after it at all.
            differential.check(token, from: 0, in: memory)
        }
        differential.expectNoMismatches(atLeast: 7_500, convertedAtLeast: 5_000)
    }

    @Test func digitsNextToSlashAndColonStopTheRunWherever() {
        // 0x2F and 0x3A differ from '0' and '9' by one: at every position in a run of digits.
        let memory = GuardedBytes()
        var rng = SplitMix64(seed: 0x2F3A)
        var differential = ScanDifferential()
        for length in 1 ... 20 {
            for position in 0 ..< length {
                for bad: UInt8 in [0x2F, 0x3A] {
                    var bytes: [UInt8] = []
                    bytes.appendDigits(length, &rng)
                    bytes[position] = bad
                    differential.check(bytes, from: 0, in: memory)
                    differential.check(bytes + Array("1.25,".utf8), from: 0, in: memory)
                    differential.check(Array("3.".utf8) + bytes, from: 0, in: memory)
                }
            }
        }
        differential.expectNoMismatches(atLeast: 1_200, convertedAtLeast: 800)
    }

    @Test func fastPathConvertsTheTypicalTokensAndStopsBeforeTheDelimiter() throws {
        // Known answers, so a scan that returned nil for everything could not pass.
        let memory = GuardedBytes()
        let cases: [(String, Double, Int)] = [
            ("185.82,", 185.82, 6), ("118088.0]", 118088.0, 8), ("0.0\n", 0, 3), ("1.0\r\n", 1, 3),
            ("-0 ", -0.0, 2), ("12345678901234.5678\"", 12345678901234.5678, 19), ("1.", 1, 2), (".5", 0.5, 2),
            // The exponent is not read: the caller sees 'e' where it wants a delimiter.
            ("1e5", 1, 1), ("-2.5E3,", -2.5, 4),
        ]
        for (text, value, stop) in cases {
            let bytes = Array(text.utf8)
            let result = memory.withBytesAtEnd(bytes) { NumberScanning.scanPlainDecimal($0, 0, bytes.count) }
            let scanned = try #require(result, "\(text.debugDescription)")
            #expect(scanned.value.bitPattern == value.bitPattern, "\(text.debugDescription)")
            #expect(scanned.stop == stop, "\(text.debugDescription)")
        }
        for text in ["+1", "12345678901234567890", "-", ".", "-.", "", "e5", "-x", ".,"] {
            let bytes = Array(text.utf8)
            #expect(
                memory.withBytesAtEnd(bytes) { NumberScanning.scanPlainDecimal($0, 0, bytes.count) } == nil,
                "\(text.debugDescription)")
        }
    }

    @Test func csvNumbersEndingAtTheLastByteDecodeLikeDoubleFromString() throws {
        // A one-column CSV whose last number is the input's last byte (no line end), in bytes that
        // end at a guard page: the decoder's scan must neither read past the end nor misconvert.
        let memory = GuardedBytes(pages: 4)
        var rng = SplitMix64(seed: 0xC5F)
        for trial in 0 ..< 40 {
            var text = "close\n"
            var expected: [Double] = []
            for row in 0 ..< 1 + rng.below(60) {
                if row > 0 { text += rng.chance(3) ? "\r\n" : "\n" }
                let token = String(decoding: [UInt8].randomToken(length: 1 + rng.below(22), &rng), as: UTF8.self)
                    .replacingPlusSign()
                let number = token == "-" || token == "." || token == "-." ? "0" : token
                text += number
                expected.append(try #require(Double(number), "\(number)"))
            }
            let bytes = Array(text.utf8)
            let decoded: [Double] = try memory.withBytesAtEnd(bytes) { base in
                var scanner = CSVScanner(input: ByteInput(base: base, count: bytes.count, source: "t.csv"), position: 0)
                let names = try scanner.readHeader()
                var symbols: [String] = []
                let buffers = try scanner.decodeRows(names: names, kinds: [0], valueCount: 1, symbols: &symbols)
                return (0 ..< buffers.count).map { buffers.values[0][$0] }
            }
            #expect(decoded.map(\.bitPattern) == expected.map(\.bitPattern), "trial \(trial): \(text.debugDescription)")
        }
    }

    @Test func jsonNumbersBeforeEveryDelimiterDecodeLikeDoubleFromString() throws {
        // Rows of two numbers, each followed by what JSON allows there (',', ']', blanks), the
        // document ending at a guard page.
        let memory = GuardedBytes(pages: 4)
        var rng = SplitMix64(seed: 0x750)
        let blanks = ["", "", " ", "\n", "\r\n", "\t"]
        for trial in 0 ..< 40 {
            var text = "["
            var expected: [[Double]] = [[], []]
            for row in 0 ..< 1 + rng.below(40) {
                if row > 0 { text += "," + blanks[rng.below(blanks.count)] }
                text += "["
                for column in 0 ..< 2 {
                    let token = String(decoding: [UInt8].randomToken(length: 1 + rng.below(22), &rng), as: UTF8.self)
                        .replacingPlusSign()
                    let number = token == "-" || token == "." || token == "-." ? "0" : token
                    text += number + blanks[rng.below(blanks.count)] + (column == 0 ? "," : "]")
                    if column == 0 { text += blanks[rng.below(blanks.count)] }
                    expected[column].append(try #require(Double(number), "\(number)"))
                }
            }
            text += "]"
            let bytes = Array(text.utf8)
            let decoded: [[Double]] = try memory.withBytesAtEnd(bytes) { base in
                var scanner = JSONScanner(input: ByteInput(base: base, count: bytes.count, source: "t.json"), position: 0)
                var symbols: [String] = []
                let buffers = try scanner.decodeRows(names: ["a", "b"], kinds: [0, 1], symbols: &symbols, valueCount: 2)
                return (0 ..< 2).map { column in (0 ..< buffers.count).map { buffers.values[column][$0] } }
            }
            #expect(
                decoded.map { $0.map(\.bitPattern) } == expected.map { $0.map(\.bitPattern) },
                "trial \(trial): \(text.debugDescription)")
        }
    }
}

private extension String {
    /// CSV numbers here are unsigned or negative (a leading '+' is valid too, but slow-path only).
    func replacingPlusSign() -> String { first == "+" ? String(dropFirst()) : self }
}
