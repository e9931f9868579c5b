import Glibc

/// The C library's `log` and `exp`, behind names that do not clash with the expression cases.
enum MathFunctions {
    @inline(__always) static func log(_ x: Double) -> Double { Glibc.log(x) }
    @inline(__always) static func exp(_ x: Double) -> Double { Glibc.exp(x) }
}
