// fuzz-modules: Colonnade
//
// DECIMAL values of any width (Parquet FIXED_LEN_BYTE_ARRAY/BYTE_ARRAY big-endian, Arrow
// decimal128/256 little-endian) to Float64 and Int64 (InteropDecimal). Differential oracle: the
// Float64 equals `Double(String)` of the decimal text computed here by schoolbook long division
// (correctly rounded by glibc's strtod), in both byte orders; the Int64 exists exactly when the
// value fits and then equals the text. Input: byte 0 the scale (mod 80), the rest the integer
// (at most 64 bytes).
@testable import Colonnade

/// The decimal digits of a big-endian two's-complement integer, and its sign.
func decimalText(_ be: [UInt8]) -> (negative: Bool, digits: String) {
    guard let top = be.first else { return (false, "0") }
    let negative = top & 0x80 != 0
    var m = be
    if negative {
        // Negate: invert and add one, from the least significant byte (the end).
        var carry = 1
        for i in stride(from: m.count - 1, through: 0, by: -1) {
            let v = Int(~m[i]) + carry
            m[i] = UInt8(v & 0xFF)
            carry = v >> 8
        }
    }
    var digits: [Character] = []
    while m.contains(where: { $0 != 0 }) {
        var r = 0
        for i in 0 ..< m.count {
            let cur = r << 8 | Int(m[i])
            m[i] = UInt8(cur / 10)
            r = cur % 10
        }
        digits.append(Character(String(r)))
    }
    return (negative, digits.isEmpty ? "0" : String(digits.reversed()))
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let scale = Int(data[0]) % 80
    let be = Array(UnsafeBufferPointer(start: data + 1, count: min(size - 1, InteropDecimal.maximumByteCount)))
    let le = Array(be.reversed())
    let (negative, digits) = decimalText(be)
    let expected = Double((negative ? "-" : "") + digits + "e-\(scale)")!
    for (bytes, bigEndian) in [(be, true), (le, false)] {
        let got = bytes.withUnsafeBytes { InteropDecimal.double($0, bigEndian: bigEndian, scale: scale) }
        precondition(
            got.bitPattern == expected.bitPattern || (got == 0 && expected == 0),
            "\(negative ? "-" : "")\(digits)e-\(scale): \(got), Double(String) says \(expected)")
        let whole = bytes.withUnsafeBytes { InteropDecimal.int64($0, bigEndian: bigEndian) }
        let exact = Int64((negative ? "-" : "") + digits)
        precondition(whole == exact, "Int64 of \(negative ? "-" : "")\(digits): \(String(describing: whole))")
    }
    return 0
}
