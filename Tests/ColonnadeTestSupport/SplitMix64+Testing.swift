import Colonnade

extension SplitMix64 {
    /// Uniform in `0..<bound` (modulo bias negligible for test bounds).
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// Uniform in `range`.
    public mutating func inRange(_ range: ClosedRange<Int>) -> Int { range.lowerBound + below(range.count) }

    /// True one time in `oneIn`.
    public mutating func chance(_ oneIn: Int) -> Bool { below(oneIn) == 0 }
}
