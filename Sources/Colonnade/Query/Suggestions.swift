// TEMPORARY stub until the `cli` branch lands (replaced wholesale at merge).
public enum Suggestions {
    public static func closest(to word: String, among candidates: [String], maxDistance: Int? = nil) -> [String] {
        func dist(_ a: [Character], _ b: [Character]) -> Int {
            var prev = Array(0...b.count)
            for i in 1...max(a.count, 1) where !a.isEmpty {
                var cur = [i] + Array(repeating: 0, count: b.count)
                for j in 1...max(b.count, 1) where !b.isEmpty {
                    cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                }
                prev = cur
            }
            return a.isEmpty ? b.count : prev[b.count]
        }
        let w = Array(word.lowercased())
        let limit = maxDistance ?? max(2, w.count / 3)
        let scored = candidates.map { ($0, dist(w, Array($0.lowercased()))) }.filter { $0.1 <= limit }
        guard let best = scored.map(\.1).min() else { return [] }
        return scored.filter { $0.1 == best }.map(\.0)
    }
}
