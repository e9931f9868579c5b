import Foundation
import Testing

@testable import Colonnade
import ColonnadeTestSupport

#if canImport(Glibc)
import Glibc
#endif

// Differential tests: DecimalParser against Double(String), compared by bit pattern, on seeded
// random decimals of every shape the grammar allows, plus hand-picked hard cases. Mismatches are
// collected and reported together (one #expect per shape keeps the debug build fast).

/// Collects inputs whose parse differs from Double(String).
private struct Differential {
    var checked = 0
    var mismatches: [String] = []

    mutating func check(_ bytes: [UInt8]) {
        checked += 1
        let text = String(decoding: bytes, as: UTF8.self)
        guard let expected = Double(text) else {
            mismatches.append("reference rejected \(text)")
            return
        }
        let actual = bytes.withUnsafeBufferPointer {
            DecimalParser.parseDouble($0.baseAddress!, count: $0.count)
        }
        if actual?.bitPattern != expected.bitPattern, mismatches.count < 20 {
            mismatches.append("\(text): got \(actual.map { "\($0)" } ?? "nil"), want \(expected)")
        }
    }

    mutating func check(_ text: String) { check(Array(text.utf8)) }

    func expectNoMismatches(atLeast minimum: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(checked >= minimum, sourceLocation: sourceLocation)
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))", sourceLocation: sourceLocation)
    }
}

private func parse(_ text: String) -> Double? {
    let bytes = Array(text.utf8)
    // A real, dereferenceable pointer even for the empty input.
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(1, bytes.count)) { buffer in
        _ = buffer.initialize(from: bytes)
        return DecimalParser.parseDouble(buffer.baseAddress!, count: bytes.count)
    }
}

private extension Array where Element == UInt8 {
    mutating func appendDigits(_ count: Int, _ rng: inout SplitMix64, nonZeroFirst: Bool = false) {
        for i in 0 ..< count {
            let digit = nonZeroFirst && i == 0 ? 1 + rng.below(9) : rng.below(10)
            append(UInt8(ascii: "0") + UInt8(digit))
        }
    }
    mutating func appendSign(_ rng: inout SplitMix64) {
        switch rng.below(8) {
        case 0: append(UInt8(ascii: "-"))
        case 1: append(UInt8(ascii: "+"))
        default: break
        }
    }
}

/// printf-style formatting of one Double, without Foundation's String(format:).
private func cFormat(_ value: Double, _ format: String, precision: Int32) -> String {
    var buffer = [UInt8](repeating: 0, count: 64)
    let length = buffer.withUnsafeMutableBufferPointer { out in
        withVaList([precision, value]) { args in
            out.withMemoryRebound(to: CChar.self) { Int(vsnprintf($0.baseAddress!, 64, format, args)) }
        }
    }
    return String(decoding: buffer.prefix(length), as: UTF8.self)
}

@Suite struct DecimalParsingTests {
    @Test func typicalPricesMatchDoubleFromString() {
        var rng = SplitMix64(seed: 1)
        var diff = Differential()
        var bytes: [UInt8] = []
        for _ in 0 ..< 400_000 {
            bytes.removeAll(keepingCapacity: true)
            if rng.chance(10) { bytes.append(UInt8(ascii: "-")) }
            bytes.appendDigits(rng.inRange(1 ... 6), &rng, nonZeroFirst: !rng.chance(6))
            bytes.append(UInt8(ascii: "."))
            bytes.appendDigits(rng.inRange(1 ... 17), &rng)
            diff.check(bytes)
        }
        diff.expectNoMismatches(atLeast: 400_000)
    }

    @Test func integersMatchDoubleFromString() {
        var rng = SplitMix64(seed: 2)
        var diff = Differential()
        var bytes: [UInt8] = []
        for _ in 0 ..< 150_000 {
            bytes.removeAll(keepingCapacity: true)
            bytes.appendSign(&rng)
            bytes.appendDigits(rng.inRange(1 ... 20), &rng, nonZeroFirst: !rng.chance(10))
            switch rng.below(6) {
            case 0: bytes.append(UInt8(ascii: "."))
            case 1: bytes += Array(".0".utf8)
            default: break
            }
            diff.check(bytes)
        }
        // Around 2^53, 2^63 and 2^64, where the significand's width changes.
        for base: UInt64 in [1 << 53, 1 << 63, UInt64.max - 20, 9_999_999_999_999_999_990] {
            for delta: UInt64 in 0 ... 20 { diff.check(String(base &+ delta)) }
        }
        diff.expectNoMismatches(atLeast: 150_000)
    }

    @Test func exponentsFromMinus350ToPlus310MatchDoubleFromString() {
        var rng = SplitMix64(seed: 3)
        var diff = Differential()
        var bytes: [UInt8] = []
        for _ in 0 ..< 200_000 {
            bytes.removeAll(keepingCapacity: true)
            bytes.appendSign(&rng)
            let digits = rng.inRange(1 ... 19)
            let point = rng.below(digits + 2)  // digits + 1: no point
            if point == 0 && rng.chance(2) {
                bytes.append(UInt8(ascii: "."))
                bytes.appendDigits(digits, &rng)
            } else {
                let before = min(point, digits)
                bytes.appendDigits(max(before, 1), &rng, nonZeroFirst: true)
                if point <= digits {
                    bytes.append(UInt8(ascii: "."))
                    bytes.appendDigits(digits - before, &rng)
                }
            }
            bytes.append(rng.chance(2) ? UInt8(ascii: "e") : UInt8(ascii: "E"))
            let exponent = rng.inRange(-350 ... 310)
            if exponent < 0 {
                bytes.append(UInt8(ascii: "-"))
            } else if rng.chance(2) {
                bytes.append(UInt8(ascii: "+"))
            }
            if rng.chance(8) { bytes.append(UInt8(ascii: "0")) }
            bytes += Array(String(exponent.magnitude).utf8)
            diff.check(bytes)
        }
        diff.expectNoMismatches(atLeast: 200_000)
    }

    @Test func longSignificandsMatchDoubleFromString() {
        var rng = SplitMix64(seed: 4)
        var diff = Differential()
        var bytes: [UInt8] = []
        for i in 0 ..< 20_000 {
            bytes.removeAll(keepingCapacity: true)
            bytes.appendSign(&rng)
            // Mostly 20...60 digits, some up to 800.
            let digits = i % 10 == 0 ? rng.inRange(20 ... 800) : rng.inRange(20 ... 60)
            let leadingZeros = rng.chance(4) ? rng.inRange(1 ... 30) : 0
            let point = rng.below(digits + 1)
            if leadingZeros > 0 {
                bytes += Array("0.".utf8)
                bytes += [UInt8](repeating: UInt8(ascii: "0"), count: leadingZeros)
                bytes.appendDigits(digits, &rng, nonZeroFirst: true)
            } else {
                bytes.appendDigits(point, &rng, nonZeroFirst: true)
                bytes.append(UInt8(ascii: "."))
                bytes.appendDigits(digits - point, &rng)
            }
            // Runs of trailing zeros: dropped digits that are all zero.
            if rng.chance(5) { bytes += [UInt8](repeating: UInt8(ascii: "0"), count: rng.inRange(1 ... 40)) }
            if rng.chance(2) { bytes += Array("e\(rng.inRange(-340...300))".utf8) }
            diff.check(bytes)
        }
        diff.expectNoMismatches(atLeast: 20_000)
    }

    @Test func printedRandomDoublesMatchDoubleFromString() {
        var rng = SplitMix64(seed: 5)
        var diff = Differential()
        var produced = 0
        while produced < 120_000 {
            // Random bit patterns cover every exponent; also some near typical price magnitudes.
            let value =
                rng.chance(4)
                ? Double(rng.next() % 100_000_000) / 10_000 : Double(bitPattern: rng.next())
            guard value.isFinite else { continue }
            produced += 1
            diff.check(value.description)
            diff.check(cFormat(value, "%.*g", precision: 17))
            diff.check(cFormat(value, "%.*e", precision: Int32(rng.inRange(0 ... 24))))
        }
        diff.expectNoMismatches(atLeast: 360_000)
    }

    @Test func exactHalfwayPointsAndTheirNeighboursMatchDoubleFromString() {
        var rng = SplitMix64(seed: 6)
        var diff = Differential()
        var powersOfFive: [BigUInt] = [BigUInt(1)]
        for _ in 1 ... 1100 { powersOfFive.append(powersOfFive.last!.multiplied(by: 5)) }
        for i in 0 ..< 4_000 {
            // Every exponent field, including subnormals (field 0) and the top binade.
            let field = UInt64(i < 2046 ? i : rng.below(2047))
            let fractionMask: UInt64 = (1 << 52) - 1
            let fraction: UInt64 = rng.chance(8) ? (rng.chance(2) ? 0 : fractionMask) : rng.next() & fractionMask
            let significand = field == 0 ? fraction : fraction | 1 << 52
            let binaryExponent = (field == 0 ? 1 : Int(field)) - 1075
            // Midpoint to the next Double up: (2·significand + 1) × 2^(binaryExponent − 1).
            let digits: [UInt8]
            var decimalExponent = 0
            let k = binaryExponent - 1
            if k >= 0 {
                digits = BigUInt(2 * significand + 1).shiftedLeft(by: k).decimalDigits()
            } else {
                digits = BigUInt(2 * significand + 1).multiplied(by: powersOfFive[-k]).decimalDigits()
                decimalExponent = k
            }
            let sign: [UInt8] = rng.chance(2) ? [UInt8(ascii: "-")] : []
            /// Checks sign · int(d) · 10^exponent, as "DDDDe±K" or as "D.DDDe±K".
            func emit(_ d: [UInt8], _ exponent: Int) {
                if rng.chance(2) {
                    diff.check(sign + d + Array("e\(exponent)".utf8))
                } else {
                    let shifted = exponent + d.count - 1
                    diff.check(sign + [d[0], UInt8(ascii: ".")] + Array(d.dropFirst()) + Array("e\(shifted)".utf8))
                }
            }
            emit(digits, decimalExponent)  // exactly halfway: ties to even
            let above = Array("0000000000000000000001".utf8)
            emit(digits + above, decimalExponent - above.count)  // just above
            // Just below: subtract one unit in the last non-zero place, then append nines.
            var below = digits
            if let last = below.indices.last(where: { below[$0] != UInt8(ascii: "0") }) {
                below[last] -= 1
                for i in (last + 1) ..< below.count { below[i] = UInt8(ascii: "9") }
                emit(below + Array("999999999999".utf8), decimalExponent - 12)
            }
            // Truncated to 17...25 digits: near, but no longer exactly at, the midpoint.
            let cut = min(digits.count, rng.inRange(17 ... 25))
            emit(Array(digits.prefix(cut)), decimalExponent + digits.count - cut)
        }
        diff.expectNoMismatches(atLeast: 15_000)
    }

    @Test(arguments: [
        "9007199254740993", "9007199254740992", "9007199254740994", "9007199254740995",
        "9007199254740993.0000000000000000001", "90071992547409930000000000", "9007199254740993e-10",
        "2.2250738585072011e-308", "2.2250738585072014e-308", "2.2250738585072012e-308",
        "2.225073858507201136057409796709131975934819546351645648e-308",
        "4.9406564584124654e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
        "2.47032822920623272088284396434110686182529901307162382212792841250337753635104375932649918180817996189898282347722858865463328355177969898199387398005390939063150356595155702263922908583924491051844359318028499365361525003193704576782492193656236698636584807570015857692699037063119282795585513329278343384093519780155312465972635795746227664652728272200563740064854999770965994704540208281662262378573934507363390079677619305775067401763246736009689513405355374585166611342237666786041621596804619144672918403005300575308490487653917113865916462395249126236538818796362393732804238910186723484976682350898633885879256283027559956575244555072551893136908362547791869486679949683240497058210285131854513962138377228261454376934125320985913276672363281255e-324",
        "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
        "179769313486231580793728971405301e276", "1e23", "8.41e21", "5e-324", "-5e-324", "3e-324",
        "2e-324", "-0.0", "-0", "0e0", "-0e-5", "00000.0000e99999", "0.0e-99999999999",
        "86.90000000000001", "0.1", "0.3", "1e22", "1e-22", "123456789012345678e-22",
        "7.3177701707893310e+15", "4503599627370496.5", "4503599627370497.5",
        "1e308", "1e309", "1e400", "-1e400", "1e-400", "1e-400000", "-1e-400000",
        "1e+99999999999", "-1e+99999999999", "1e-99999999999", "1e999999999999999999999999999",
        "0.000000000000000000000000000000000000000000001e+400", "100000000000000000000000000000e-330",
        "18446744073709551615", "18446744073709551616", "18446744073709551617", "99999999999999999999",
        "1.00000000000000011102230246251565404236316680908203125",
        "1.00000000000000011102230246251565404236316680908203124",
        "1.00000000000000011102230246251565404236316680908203126",
        "158.61642206543", "2411643.0", "+.5", ".5e1", "5.", "5.e-1", "007", "1E5", "1e+0",
    ])
    func hardCasesMatchDoubleFromString(_ text: String) {
        let expected = Double(text)!
        #expect(parse(text)?.bitPattern == expected.bitPattern, "\(text)")
    }

    @Test func longRunsOfNinesAndZerosMatchDoubleFromString() {
        var diff = Differential()
        for count in [19, 20, 21, 40, 200, 800] {
            let nines = String(repeating: "9", count: count)
            let zeros = String(repeating: "0", count: count)
            for text in [
                nines, "0." + nines, nines + "e-\(count + 300)", "1" + zeros + "1", "0." + zeros + "1",
                "1." + zeros + "1", nines + "e-330", "4." + zeros + "9e-324", zeros, "-" + zeros + "." + zeros,
            ] {
                diff.check(text)
            }
        }
        diff.expectNoMismatches(atLeast: 60)
    }

    /// Tokens over `_slowTokenLimit` bytes reach `Double(String)` rewritten to at most 800
    /// significant digits (`_boundedDecimal`): midpoints between doubles (the hardest case) with
    /// thousands of zeros or nines after them, leading zeros, long integer parts with negative
    /// exponents, signs and huge exponents. The rewrite, and `parseDouble` on the whole token, must
    /// give `Double(String)`'s bits for the whole token.
    @Test func longTokensAreRewrittenBoundedAndRoundAlike() {
        var rng = SplitMix64(seed: 17)
        var powersOfFive: [BigUInt] = [BigUInt(1)]
        for _ in 1 ... 1100 { powersOfFive.append(powersOfFive.last!.multiplied(by: 5)) }
        var tokens: [[UInt8]] = []
        let zeros = [UInt8](repeating: UInt8(ascii: "0"), count: 1_500)
        let nines = [UInt8](repeating: UInt8(ascii: "9"), count: 1_500)
        for i in 0 ..< 300 {
            let field = UInt64(i < 60 ? i * 34 : rng.below(2047))
            let significand = (field == 0 ? 0 : 1 << 52) | (rng.next() & ((1 << 52) - 1))
            let binaryExponent = (field == 0 ? 1 : Int(field)) - 1075
            let k = binaryExponent - 1
            // The midpoint above this double: (2·significand + 1) × 2^k.
            let digits =
                k >= 0
                ? BigUInt(2 * significand + 1).shiftedLeft(by: k).decimalDigits()
                : BigUInt(2 * significand + 1).multiplied(by: powersOfFive[-k]).decimalDigits()
            let exponent = k >= 0 ? 0 : k
            let sign: [UInt8] = rng.chance(2) ? [UInt8(ascii: "-")] : (rng.chance(4) ? [UInt8(ascii: "+")] : [])
            tokens.append(sign + digits + zeros + Array("e\(exponent - zeros.count)".utf8))  // exactly halfway
            tokens.append(sign + digits + zeros + [UInt8(ascii: "1")] + Array("e\(exponent - zeros.count - 1)".utf8))  // just above
            var below = digits
            if let last = below.indices.last(where: { below[$0] != UInt8(ascii: "0") }) {
                below[last] -= 1
                for j in (last + 1) ..< below.count { below[j] = UInt8(ascii: "9") }
                tokens.append(sign + below + nines + Array("e\(exponent - nines.count)".utf8))  // just below
            }
            // The same value written as 0.000…DIGITS with the point moved.
            tokens.append(
                sign + Array("0.".utf8) + zeros + digits + zeros + [UInt8(ascii: "1")]
                    + Array("e\(exponent + digits.count + zeros.count)".utf8))
        }
        tokens.append(Array("1".utf8) + zeros + Array("e-1600".utf8))
        tokens.append(Array("-".utf8) + zeros + Array(".".utf8) + zeros)
        tokens.append(Array("9".utf8) + nines + Array("e-99999999999999999".utf8))
        tokens.append(Array("1".utf8) + zeros + Array("e+99999999999999999999".utf8))
        tokens.append(Array("4.".utf8) + zeros + Array("9e-324".utf8))
        tokens.append(Array("2.4703282292062327".utf8) + zeros + Array("1e-324".utf8))
        var mismatches: [String] = []
        var checked = 0
        for token in tokens {
            #expect(token.count > DecimalParser._slowTokenLimit)
            let expected = Double(String(decoding: token, as: UTF8.self))!
            let rewritten = token.withUnsafeBufferPointer { DecimalParser._boundedDecimal($0.baseAddress!, count: $0.count) }
            let parsed = token.withUnsafeBufferPointer { DecimalParser.parseDouble($0.baseAddress!, count: $0.count) }
            checked += 1
            if let rewritten, rewritten.utf8.count <= 830, Double(rewritten)?.bitPattern == expected.bitPattern,
                parsed?.bitPattern == expected.bitPattern
            {
                continue
            }
            if mismatches.count < 10 {
                mismatches.append(
                    "\(String(decoding: token.prefix(60), as: UTF8.self))… (\(token.count) bytes): rewritten "
                        + "\(rewritten.map { "\($0.utf8.count) bytes → \(Double($0).map { "\($0)" } ?? "nil")" } ?? "nil"), "
                        + "parsed \(parsed.map { "\($0)" } ?? "nil"), want \(expected)")
            }
        }
        #expect(checked >= 1_200)
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
        // The rewriting itself, on short tokens.
        for (token, want) in [
            ("123.45", "0.12345e3"), ("-000.00120", "-0.120e-2"), ("+7e-3", "0.7e-2"), ("0.0", "0"), ("-0e5", "-0"),
            (".5", "0.5e0"), ("5.", "0.5e1"), ("1e-99999999999999", "0.1e-100000"),
        ] {
            let got = Array(token.utf8).withUnsafeBufferPointer { DecimalParser._boundedDecimal($0.baseAddress!, count: $0.count) }
            #expect(got == want, "\(token)")
        }
        for bad in ["1.2.3", "1e", "e5", "1x", "--1", "."] {
            #expect(
                Array(bad.utf8).withUnsafeBufferPointer { DecimalParser._boundedDecimal($0.baseAddress!, count: $0.count) } == nil, "\(bad)"
            )
        }
    }

    @Test func malformedInputsAreRejected() {
        let rejected = [
            "", " ", " 1", "1 ", "+", "-", ".", "+.", "-.", "e", "e5", ".e5", "1e", "1e+", "1e-", "1.e",
            "1.2.3", "1..2", "--1", "+-1", "-+1", "1-", "1+", "1e5.0", "1e5e5", "1e--5", "1ee5",
            "inf", "-inf", "Infinity", "nan", "NaN", "0x1p3", "0x10", "1_000", "1,5", "1f", "1d",
            "١", "1\0", "\01", "e+", ".-1", "+ 1", "1 e5", "1e 5", "0.5x", "12345678901234567890123x",
            "1" + String(repeating: "0", count: 30) + "#",
        ]
        for text in rejected {
            #expect(parse(text) == nil, "\(text.debugDescription) should be rejected")
        }
    }

    @Test func onlyTheGivenBytesAreRead() {
        // The same digits followed by more digits in memory: count must bound the parse.
        let bytes = Array("123.456e7890".utf8)
        bytes.withUnsafeBufferPointer { buffer in
            #expect(DecimalParser.parseDouble(buffer.baseAddress!, count: 3) == 123)
            #expect(DecimalParser.parseDouble(buffer.baseAddress!, count: 7) == 123.456)
            #expect(DecimalParser.parseDouble(buffer.baseAddress!, count: 8) == nil)
            #expect(DecimalParser.parseDouble(buffer.baseAddress!, count: 9) == 123.456e7)
        }
    }

    @Test func powersOfFiveTableMatchesBigIntegerArithmetic() {
        let table = DecimalParser._powersOfFive128
        #expect(table.count == 2 * (DecimalParser._largestPowerOfFive - DecimalParser._smallestPowerOfFive + 1))
        var failures: [Int] = []
        var power = BigUInt(1)
        var powers: [BigUInt] = [power]
        for _ in 1 ... 342 {
            power = power.multiplied(by: 5)
            powers.append(power)
        }
        for q in DecimalParser._smallestPowerOfFive ... DecimalParser._largestPowerOfFive {
            let index = 2 * (q - DecimalParser._smallestPowerOfFive)
            let entry = BigUInt(table[index]).shiftedLeft(by: 64).adding(BigUInt(table[index + 1]))
            guard entry.bitWidth == 128 else {
                failures.append(q)
                continue
            }
            if q >= 0 {
                let p = powers[q]
                let width = p.bitWidth
                let expected = width <= 128 ? p.shiftedLeft(by: 128 - width) : p.shiftedRight(by: width - 128)
                if expected != entry { failures.append(q) }
            } else {
                // entry = truncate(floor(2^b / P) + 1) to 128 bits, i.e. for some t ≥ 0 the
                // integer c = floor(2^b / P) + 1 lies in [entry·2^t, (entry+1)·2^t − 1], which
                // holds iff (entry·2^t − 1)·P ≤ 2^b < ((entry+1)·2^t − 1)·P.
                let p = powers[-q]
                let z = p.bitWidth  // 5^k is never a power of two: least z with 2^z ≥ P
                let b = q >= -27 ? z + 127 : 2 * z + 128
                let twoToB = BigUInt(1).shiftedLeft(by: b)
                let candidates = q >= -27 ? [0] : [b - z + 1 - 128, b - z + 2 - 128]
                let matches = candidates.contains { t in
                    guard t >= 0 else { return false }
                    let low = entry.shiftedLeft(by: t).subtractingOne()
                    let high = entry.adding(BigUInt(1)).shiftedLeft(by: t).subtractingOne()
                    return low.multiplied(by: p) <= twoToB && twoToB < high.multiplied(by: p)
                }
                if !matches { failures.append(q) }
            }
        }
        #expect(failures.isEmpty, "wrong entries for q in \(failures)")
    }
}

/// A minimal arbitrary-precision unsigned integer (little-endian 32-bit limbs) for building exact
/// test inputs and checking the table. Obviously correct rather than fast.
private struct BigUInt: Comparable {
    var limbs: [UInt32]  // no trailing zero limbs; zero is []

    init(_ value: UInt64) {
        limbs = [UInt32(truncatingIfNeeded: value), UInt32(truncatingIfNeeded: value >> 32)]
        normalize()
    }

    private init(limbs: [UInt32]) {
        self.limbs = limbs
        normalize()
    }

    private mutating func normalize() {
        while limbs.last == 0 { limbs.removeLast() }
    }

    var bitWidth: Int {
        guard let top = limbs.last else { return 0 }
        return 32 * limbs.count - top.leadingZeroBitCount
    }

    func multiplied(by other: BigUInt) -> BigUInt {
        var result = [UInt32](repeating: 0, count: limbs.count + other.limbs.count + 1)
        for (i, a) in limbs.enumerated() {
            var carry: UInt64 = 0
            for (j, b) in other.limbs.enumerated() {
                let t = UInt64(a) * UInt64(b) + UInt64(result[i + j]) + carry
                result[i + j] = UInt32(truncatingIfNeeded: t)
                carry = t >> 32
            }
            var k = i + other.limbs.count
            while carry != 0 {
                let t = UInt64(result[k]) + carry
                result[k] = UInt32(truncatingIfNeeded: t)
                carry = t >> 32
                k += 1
            }
        }
        return BigUInt(limbs: result)
    }

    func multiplied(by small: UInt32) -> BigUInt { multiplied(by: BigUInt(UInt64(small))) }

    func adding(_ other: BigUInt) -> BigUInt {
        var result = [UInt32](repeating: 0, count: max(limbs.count, other.limbs.count) + 1)
        var carry: UInt64 = 0
        for i in 0 ..< (result.count - 1) {
            let t = UInt64(i < limbs.count ? limbs[i] : 0) + UInt64(i < other.limbs.count ? other.limbs[i] : 0) + carry
            result[i] = UInt32(truncatingIfNeeded: t)
            carry = t >> 32
        }
        result[result.count - 1] = UInt32(carry)
        return BigUInt(limbs: result)
    }

    /// self − 1; precondition self > 0.
    func subtractingOne() -> BigUInt {
        var result = limbs
        var i = 0
        while result[i] == 0 {
            result[i] = .max
            i += 1
        }
        result[i] -= 1
        return BigUInt(limbs: result)
    }

    func shiftedLeft(by bits: Int) -> BigUInt {
        guard !limbs.isEmpty else { return self }
        var result = [UInt32](repeating: 0, count: bits / 32)
        let shift = UInt64(bits % 32)
        var carry: UInt64 = 0
        for limb in limbs {
            let t = (UInt64(limb) << shift) | carry
            result.append(UInt32(truncatingIfNeeded: t))
            carry = t >> 32
        }
        result.append(UInt32(carry))
        return BigUInt(limbs: result)
    }

    func shiftedRight(by bits: Int) -> BigUInt {
        let whole = bits / 32, shift = UInt32(bits % 32)
        guard whole < limbs.count else { return BigUInt(0) }
        var result: [UInt32] = []
        for i in whole ..< limbs.count {
            let high: UInt32 = i + 1 < limbs.count ? limbs[i + 1] : 0
            result.append(shift == 0 ? limbs[i] : (limbs[i] >> shift) | (high << (32 - shift)))
        }
        return BigUInt(limbs: result)
    }

    /// ASCII decimal digits, most significant first ("0" for zero).
    func decimalDigits() -> [UInt8] {
        var remaining = limbs
        var chunks: [UInt32] = []  // base 10^9, least significant first
        while !remaining.isEmpty {
            var remainder: UInt64 = 0
            for i in stride(from: remaining.count - 1, through: 0, by: -1) {
                let t = (remainder << 32) | UInt64(remaining[i])
                remaining[i] = UInt32(t / 1_000_000_000)
                remainder = t % 1_000_000_000
            }
            while remaining.last == 0 { remaining.removeLast() }
            chunks.append(UInt32(remainder))
        }
        guard let top = chunks.last else { return [UInt8(ascii: "0")] }
        var digits = Array(String(top).utf8)
        for chunk in chunks.dropLast().reversed() {
            let text = String(chunk)
            digits += [UInt8](repeating: UInt8(ascii: "0"), count: 9 - text.utf8.count) + Array(text.utf8)
        }
        return digits
    }

    static func < (a: BigUInt, b: BigUInt) -> Bool {
        if a.limbs.count != b.limbs.count { return a.limbs.count < b.limbs.count }
        for i in stride(from: a.limbs.count - 1, through: 0, by: -1) where a.limbs[i] != b.limbs[i] {
            return a.limbs[i] < b.limbs[i]
        }
        return false
    }
}
