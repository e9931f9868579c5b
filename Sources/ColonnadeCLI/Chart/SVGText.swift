/// Text and numbers as they go into an SVG document.
enum SVGText {
    /// `text` safe as XML character data or an attribute value: `&`, `<`, `>`, `"` and `'`
    /// escaped, and characters XML 1.0 does not allow (C0 controls but tab, DEL, C1 controls,
    /// U+FFFE/U+FFFF) dropped, so text from a file or the network can neither break the document
    /// nor reach a terminal that shows it.
    static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t": out += " "
            default:
                let v = scalar.value
                if v < 0x20 || (0x7F ... 0x9F).contains(v) || v == 0xFFFE || v == 0xFFFF { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A coordinate with one decimal (a tenth of a pixel), shortest form: `12`, `12.5`, `-0.5`.
    /// Non-finite values (which the chart never produces: it clamps first) print as `0`.
    static func number(_ value: Double) -> String {
        guard value.isFinite, abs(value) < 1e15 else { return "0" }
        let tenths = Int64((value * 10).rounded())
        let whole = tenths / 10, fraction = abs(tenths % 10)
        let sign = tenths < 0 && whole == 0 ? "-" : ""
        return fraction == 0 ? "\(sign)\(whole)" : "\(sign)\(whole).\(fraction)"
    }
}
