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
