#if canImport(Glibc)
import Glibc
#endif

/// How a query runs. The answer never depends on these; only the time does.
public struct QueryOptions: Sendable, Equatable {
    /// Worker threads; nil uses every online core. 1 runs on the calling thread.
    public var threads: Int?
    /// Whether to consult block summaries (zone maps) to skip or fill whole blocks.
    public var useBlockSummaries: Bool
    /// Rows per unit of parallel work for this query: `QueryOptions.chunkRows` unless a test lowers
    /// it, so that a small table spans many chunks and many threads. A positive multiple of
    /// `zoneMapBlockRows` (chunks must cover whole blocks). Aggregate sums depend on it (see
    /// `Selection.aggregate`); selections never do.
    package var rowsPerChunk: Int = QueryOptions.chunkRows {
        willSet {
            precondition(
                newValue > 0 && newValue % zoneMapBlockRows == 0, "rowsPerChunk must be a positive multiple of \(zoneMapBlockRows)")
        }
    }
    /// Whether grouped aggregates of bare columns take the flat path (`Selection+FlatAggregation.swift`);
    /// tests turn it off to hold that path to the general one.
    package var flatAggregation = true
    /// Whether a moving window named more than once in a screen is computed once per chunk
    /// (`SharedWindow.swift`); tests turn it off to hold sharing to computing each time.
    package var shareWindows = true
    /// Whether windows over decimal columns are summed exactly (`SeriesKernels+Exact.swift`); the
    /// benchmarks turn it off to measure what exactness costs against the floating-point sliding
    /// sums (issue 30: "within 5 %"). Off, ties are answered as the floating-point sums fall.
    package var exactWindows = true
    /// Where the evaluator counts what it did (tests only; nil costs one branch per range leaf).
    package var counters: EvaluationCounters?

    /// Options with every core and block summaries on.
    public init(threads: Int? = nil, useBlockSummaries: Bool = true) {
        self.threads = threads
        self.useBlockSummaries = useBlockSummaries
    }

    /// The number of online cores, as first asked (every query without `threads` asks; glibc's
    /// `sysconf` answers by reading a file of /sys each time).
    public static var availableCores: Int { onlineCores }

    private static let onlineCores: Int = {
        #if canImport(Glibc)
        return max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        #else
        return 1
        #endif
    }()

    /// The thread count that will actually be used.
    public var effectiveThreads: Int { max(1, threads ?? QueryOptions.availableCores) }

    /// Rows per unit of parallel work: 65,536 rows (128 zone-map blocks of 512). Fixed, so that
    /// per-chunk partial results (sums) combine in the same order whatever the thread count.
    public static let chunkRows = 16 * 4096
}
