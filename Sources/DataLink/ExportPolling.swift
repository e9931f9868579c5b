/// How long and how often to ask whether a whole-table export is ready, and how hard to try
/// downloading it.
///
/// The wait between status requests starts at `firstInterval` and grows by `growth` up to
/// `maximumInterval`; a `Retry-After` on a status answer is honoured instead when present. The
/// whole wait is bounded by `timeout`.
public struct ExportPolling: Sendable {
    /// The first wait. Default 2 s.
    public var firstInterval: Duration
    /// The longest wait between two status requests. Default 30 s (Nasdaq's own client waits 30 s).
    public var maximumInterval: Duration
    /// The factor each wait grows by. Default 1.5.
    public var growth: Double
    /// The longest the export may take to become ready. Default 30 minutes.
    public var timeout: Duration
    /// How often the download link may be refused (403, 401, 400, 410: an expired link) before
    /// giving up; each refusal asks the API for a fresh link. Default 3.
    public var maximumLinkRefusals: Int
    /// How many download attempts in a row may fail without the file growing. Default 5.
    public var maximumStalledAttempts: Int

    /// Settings; see the properties.
    public init(
        firstInterval: Duration = .seconds(2), maximumInterval: Duration = .seconds(30), growth: Double = 1.5,
        timeout: Duration = .seconds(30 * 60), maximumLinkRefusals: Int = 3, maximumStalledAttempts: Int = 5
    ) {
        self.firstInterval = firstInterval
        self.maximumInterval = maximumInterval
        self.growth = Swift.max(1, growth)
        self.timeout = timeout
        self.maximumLinkRefusals = Swift.max(0, maximumLinkRefusals)
        self.maximumStalledAttempts = Swift.max(1, maximumStalledAttempts)
    }

    /// The wait after `interval`: grown, capped.
    func next(after interval: Duration) -> Duration {
        let grown = interval * growth
        return grown > maximumInterval ? maximumInterval : grown
    }
}

/// What a whole-table export download is doing, for progress lines.
public enum ExportEvent: Sendable {
    /// The export is not ready (`status`); the next status request is in `next`.
    case waiting(status: String, elapsed: Duration, next: Duration)
    /// The file is being downloaded from `host`, starting at byte `offset` (0, or a resume).
    case downloading(host: String, offset: Int)
    /// The link was refused with `status` (expired); a fresh one is being asked for.
    case linkRefused(status: Int)
}

/// A finished export download.
public struct ExportDownload: Sendable {
    /// The size of the downloaded file.
    public var bytes: Int
    /// Status requests sent.
    public var statusRequests: Int
    /// Links used (more than one when a link was refused).
    public var links: Int
    /// Download attempts that resumed a partial file with a `Range` request.
    public var resumes: Int
    /// The export's `data_snapshot_time`, if given.
    public var dataSnapshotTime: String?
}
