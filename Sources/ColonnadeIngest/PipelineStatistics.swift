import Colonnade
import DataLinkFormat
import Synchronization

/// What the zip pipeline did, counted for tests (for example that a failing piece stops the
/// inflation early).
package final class PipelineStatistics: Sendable {
    private let counters = Mutex<(runs: Int, bytes: Int)>((0, 0))

    package init() {}

    /// Pipelines started.
    package var runs: Int { counters.withLock { $0.runs } }
    /// Uncompressed bytes inflated by the pipelines (not by a whole-member decode afterwards).
    package var bytesInflated: Int { counters.withLock { $0.bytes } }

    func started() { counters.withLock { $0.runs += 1 } }
    func inflated(_ n: Int) { counters.withLock { $0.bytes += n } }
}
