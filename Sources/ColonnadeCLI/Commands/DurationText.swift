import Dispatch

/// Durations as `--deadline` and `--bulk-timeout` take and print them.
enum DurationText {
    /// `d` as a Dispatch interval (durations here are at most the week `parseDuration` allows).
    static func dispatchInterval(_ d: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = d.components
        if seconds < 0 { return .nanoseconds(0) }
        return .nanoseconds(Int(min(seconds, 30 * 86_400)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }

    /// `6 h`, `30 min`, `90 s`, `1.5 s`: a duration as `--deadline` and `--bulk-timeout` take it.
    static func format(_ d: Duration) -> String {
        let seconds = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        if seconds >= 3600, seconds.truncatingRemainder(dividingBy: 3600) == 0 { return "\(Int(seconds / 3600)) h" }
        if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60)) min" }
        if seconds == seconds.rounded() { return "\(Int(seconds)) s" }
        return "\(seconds) s"
    }

    /// `90`, `90s`, `1.5s`, `10m`, `1h`: seconds unless suffixed.
    static func parseDuration(_ text: String) -> Duration? {
        var number = Substring(text.trimmingCharacters(in: .whitespaces))
        var scale = 1.0
        if let last = number.last, "smh".contains(last) {
            scale = last == "s" ? 1 : last == "m" ? 60 : 3600
            number = number.dropLast()
        }
        guard let value = Double(number), value.isFinite, value > 0, value * scale <= 7 * 86_400 else { return nil }
        return .milliseconds(Int64((value * scale * 1000).rounded()))
    }
}
