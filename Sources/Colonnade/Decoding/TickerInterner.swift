/// The tickers of a many-ticker rows array numbered in order of first appearance, as symbols (the
/// caller maps a ticker as written to its symbol, for example `BRK_A` → `BRK.A`), with a one-entry
/// cache: rows of one ticker usually come together.
struct TickerInterner {
    /// The symbols, by number.
    private(set) var symbols: [String] = []
    private var numbers: [String: Int32] = [:]
    private var last = (start: 0, count: -1, number: Int32(0))

    /// The number of the ticker written as the `count` bytes at `start` of `base`; `symbol` gives
    /// the symbol for those bytes (called only for a ticker unlike the previous one).
    @inline(__always)
    mutating func number(at start: Int, count: Int, in base: UnsafePointer<UInt8>, symbol text: () -> String) -> Int32 {
        if count == last.count && memoryEqual(base + start, base + last.start, count) { return last.number }
        let symbol = text()
        let number: Int32
        if let known = numbers[symbol] {
            number = known
        } else {
            number = Int32(symbols.count)
            numbers[symbol] = number
            symbols.append(symbol)
        }
        last = (start, count, number)
        return number
    }
}

/// Whether `count` bytes at `a` and `b` are equal.
@inline(__always)
func memoryEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    var i = 0
    while i < count {
        if a[i] != b[i] { return false }
        i += 1
    }
    return true
}
