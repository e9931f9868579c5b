/// Zone maps: the minimum, maximum and unknown count of each block of `blockRows` rows of a column.
///
/// "Unknown" counts the rows a comparison can never match: nulls and NaNs. Minimum and maximum
/// are taken over the other rows (and are 0 for a block with none). A scan then decides per block:
/// nothing can match (skip), everything matches (fill the mask words with ones, read no values),
/// or maybe (run the kernel).
///
/// The block is `zoneMapBlockRows` = 512 rows = 8 mask words, chosen by measurement
/// (docs/MEASUREMENTS.md, *Block size*): 4,096-row blocks span 16 years of one ticker and barely
/// prune a narrow price band; 256 prunes no better than 512 and costs more decisions. Runs of blocks that need the kernel are evaluated in one call, so the
/// per-block decision stays cheap when nothing prunes. DuckDB uses 2,048-row vectors and
/// ClickHouse 8,192-row granules; our blocks are smaller because ticker-grouped prices are smooth.
public struct BlockSummaries<Element: ColumnElement>: Sendable, Equatable {
    /// Rows per block. A multiple of 64, so blocks cover whole mask words.
    public static var blockRows: Int { zoneMapBlockRows }

    /// The smallest known value in each block.
    public var minimums: [Element]
    /// The largest known value in each block.
    public var maximums: [Element]
    /// The number of nulls and NaNs in each block.
    public var unknownCounts: [UInt32]

    /// Summaries from their parts (the snapshot loader uses this).
    public init(minimums: [Element], maximums: [Element], unknownCounts: [UInt32]) {
        precondition(minimums.count == maximums.count && maximums.count == unknownCounts.count)
        self.minimums = minimums
        self.maximums = maximums
        self.unknownCounts = unknownCounts
    }

    /// The number of blocks.
    public var count: Int { minimums.count }

    /// The number of blocks needed for `rows` rows.
    public static func blockCount(forRows rows: Int) -> Int { (rows + blockRows - 1) / blockRows }

    /// Computes the summaries of `column`.
    ///
    /// Float64 and Int32 columns without nulls take a branch-free four-lane pass per block
    /// (`BlockSummaries+Fast.swift`); the result is bit-identical to the row-by-row pass
    /// (`init(rowByRow:)`), which every other column takes.
    /// - Complexity: O(column.count), one pass.
    public init(of column: Column<Element>) {
        if column.validity == nil, let fast = Self.fastSummaries(of: column) {
            self = fast
            return
        }
        self.init(rowByRow: column)
    }

    /// The summaries computed row by row, in order: the first of equal values (±0) wins.
    /// The reference for the fast paths.
    package init(rowByRow column: Column<Element>) {
        let blocks = BlockSummaries.blockCount(forRows: column.count)
        var mins = [Element](), maxs = [Element](), unknowns = [UInt32]()
        mins.reserveCapacity(blocks)
        maxs.reserveCapacity(blocks)
        unknowns.reserveCapacity(blocks)
        column.withUnsafeBufferPointer { values in
            for b in 0 ..< blocks {
                let lo = b * BlockSummaries.blockRows, hi = Swift.min(lo + BlockSummaries.blockRows, column.count)
                var mn = Element.nullPlaceholder, mx = Element.nullPlaceholder
                var seen = false
                var unknown: UInt32 = 0
                for r in lo ..< hi {
                    let x = values[r]
                    if column.isNull(r) || x.isNaNValue {
                        unknown += 1
                        continue
                    }
                    if !seen {
                        mn = x
                        mx = x
                        seen = true
                        continue
                    }
                    if x < mn { mn = x }
                    if x > mx { mx = x }
                }
                mins.append(mn)
                maxs.append(mx)
                unknowns.append(unknown)
            }
        }
        self.init(minimums: mins, maximums: maxs, unknownCounts: unknowns)
    }

    /// What `bounds` can do in block `block`, which holds `rows` rows.
    @inlinable
    public func outcome(of bounds: RangeBounds<Element>, inBlock block: Int, rows: Int) -> BlockOutcome {
        let unknown = Int(unknownCounts[block])
        if unknown >= rows { return .none }
        let mn = minimums[block], mx = maximums[block]
        if let lo = bounds.lower, bounds.lowerInclusive ? mx < lo : mx <= lo { return .none }
        if let hi = bounds.upper, bounds.upperInclusive ? mn > hi : mn >= hi { return .none }
        guard unknown == 0 else { return .some }
        if let lo = bounds.lower, bounds.lowerInclusive ? !(mn >= lo) : !(mn > lo) { return .some }
        if let hi = bounds.upper, bounds.upperInclusive ? !(mx <= hi) : !(mx < hi) { return .some }
        return .all
    }
}

/// Rows per zone-map block, for every element type (a multiple of 64).
public let zoneMapBlockRows = 512

/// What a predicate can do within one block, decided from its summary.
public enum BlockOutcome: Sendable {
    /// No row can match: skip the block.
    case none
    /// Every row matches: fill the words, read no values.
    case all
    /// Some rows may match: run the kernel.
    case some
}

extension Column {
    /// Computes (or recomputes) the block summaries.
    public mutating func computeSummaries() {
        // Pending values get their summaries when computed (the deferred merge does it).
        if pending != nil { return }
        summaries = BlockSummaries(of: self)
    }
}
