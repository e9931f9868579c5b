#if canImport(Glibc)
import Glibc
#endif

/// How a query runs. The answer never depends on these; only the time does.
public struct QueryOptions: Sendable, Equatable {
    /// Worker threads; nil uses every online core. 1 runs on the calling thread.
    public var threads: Int?
    /// Whether to consult block summaries (zone maps) to skip or fill whole blocks.
    public var useBlockSummaries: Bool

    /// Options with every core and block summaries on.
    public init(threads: Int? = nil, useBlockSummaries: Bool = true) {
        self.threads = threads
        self.useBlockSummaries = useBlockSummaries
    }

    /// The number of online cores.
    public static var availableCores: Int {
        #if canImport(Glibc)
        return max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        #else
        return 1
        #endif
    }

    /// The thread count that will actually be used.
    public var effectiveThreads: Int { max(1, threads ?? QueryOptions.availableCores) }

    /// Rows per unit of parallel work: 16 blocks of 4,096 rows. Fixed, so that per-chunk partial
    /// results (sums) combine in the same order whatever the thread count.
    public static let chunkRows = 16 * 4096
}
