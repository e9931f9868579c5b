/// "Did you mean …?" candidates for a mistyped word: an option, a command, a column or a ticker.
///
/// Distance is the optimal string alignment variant of Damerau–Levenshtein, compared
/// case-insensitively over `Character`s: one insertion, deletion, substitution or swap of two
/// adjacent characters costs one, and no substring is edited twice.
///
///     Suggestions.closest(to: "hihg", among: ["open", "high", "low"])   // ["high"]
///     Suggestions.closest(to: "lmit", among: ["limit", "timing"])       // ["limit"]
package enum Suggestions {
    /// Returns the candidates nearest to `word`, or none when nothing is near enough.
    ///
    /// - Parameters:
    ///   - word: What the user typed.
    ///   - candidates: The valid spellings, in the order ties should be reported.
    ///   - maxDistance: The largest edit distance still worth suggesting; by default
    ///     `max(2, word.count / 3)`, so short words tolerate two typos and long ones a third of
    ///     their length.
    /// - Returns: Every candidate at the smallest distance found, if that distance is at most
    ///   `maxDistance`, in candidate order without duplicates; otherwise `[]`.
    /// - Complexity: O(*n* · *m*) per candidate, for *n* and *m* the lengths of the two words.
    package static func closest(to word: String, among candidates: [String], maxDistance: Int? = nil) -> [String] {
        let typed = Array(word.lowercased())
        let threshold = min(maxDistance ?? max(2, typed.count / 3), Int.max - 1)
        var best: [String] = []
        var bestDistance = threshold + 1
        for candidate in candidates {
            // Exact up to `bestDistance`: anything farther can neither win nor tie.
            let distance = editDistance(typed, Array(candidate.lowercased()), limit: bestDistance + 1)
            if distance < bestDistance {
                bestDistance = distance
                best = [candidate]
            } else if distance == bestDistance, distance <= threshold, !best.contains(candidate) {
                best.append(candidate)
            }
        }
        return bestDistance <= threshold ? best : []
    }

    /// The optimal string alignment distance between `a` and `b`; any value `>= limit` means
    /// "at least `limit`" (the exact figure is not needed once a candidate cannot win).
    static func editDistance(_ a: [Character], _ b: [Character], limit: Int) -> Int {
        if abs(a.count - b.count) >= limit { return limit }
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        // Three rolling rows: the transposition case looks two rows back.
        var twoBack = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0 ... b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1 ... a.count {
            current[0] = i
            var rowMinimum = i
            for j in 1 ... b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = min(value, twoBack[j - 2] + 1)
                }
                current[j] = value
                rowMinimum = min(rowMinimum, value)
            }
            if rowMinimum >= limit { return limit }
            (twoBack, previous, current) = (previous, current, twoBack)
        }
        return previous[b.count]
    }
}
