import Colonnade
// How cells become text, shared by the formatters.

extension Double {
    /// Swift's shortest round-trip spelling (`description`: `553.13`, `2411643.0`, `-0.0`)
    /// without a trailing `.0` (`2411643`, `-0`), for tables.
    var compactText: String {
        let text = description
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }
}

extension Double {
    /// At most `decimals` digits after the point, trailing zeros dropped, for tables:
    /// `283.1645595238097` → `283.16456` (6), `80.13` → `80.13`, `2.0` → `2`. NaN and infinities
    /// as ``compactText``; a value that rounds to zero is `0`.
    func roundedText(decimals: Int) -> String {
        guard isFinite else { return compactText }
        var text = String(format: "%.*f", decimals, self)
        if text.contains(".") {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        return text == "-0" ? "0" : text
    }
}

extension BinaryInteger {
    /// The decimal spelling with commas between groups of three digits: `20,000,000`.
    var groupedText: String {
        let digits = String(magnitude)
        var grouped = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        return (self < 0 ? "-" : "") + grouped
    }
}

/// `YYYY-MM-DD` for days since 1970-01-01.
func dayText(_ day: Int32) -> String {
    Day(daysSinceEpoch: day).description
}
