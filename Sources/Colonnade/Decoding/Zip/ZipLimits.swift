/// How large a zip member may inflate: the zip-bomb guard.
///
/// A member may inflate to at most `maximumRatio` times its compressed size, but always to
/// `ratioFloor` (small members of repetitive text compress well), and never past `maximumSize`.
/// The limit is checked against the size the archive records before inflating, and against the
/// bytes actually produced while inflating (a member cannot lie its way past it).
///
/// DEFLATE cannot exceed about 1032:1; real quote CSV compresses 4–12:1, so the default ratio of
/// 200 leaves plenty of room while stopping a bomb after a bounded amount of work.
public struct ZipLimits: Sendable, Hashable {
    /// The most a member may inflate relative to its compressed size. Default 200.
    public var maximumRatio: Int
    /// The most any member may inflate to, in bytes. Default 16 GiB.
    public var maximumSize: Int
    /// The size every member may reach whatever its ratio (capped by `maximumSize`). Default 64 MiB.
    public var ratioFloor: Int

    /// The most all members of one archive may inflate to together, in bytes. Default 64 GiB.
    public var maximumTotalSize: Int

    /// Limits; see the properties.
    public init(
        maximumRatio: Int = 200, maximumSize: Int = 16 << 30, ratioFloor: Int = 64 << 20,
        maximumTotalSize: Int = 64 << 30
    ) {
        self.maximumRatio = Swift.max(1, maximumRatio)
        self.maximumSize = Swift.max(0, maximumSize)
        self.ratioFloor = Swift.max(0, ratioFloor)
        self.maximumTotalSize = Swift.max(0, maximumTotalSize)
    }

    /// The defaults.
    public static let standard = ZipLimits()

    /// The most all members of an archive of `archiveSize` bytes may inflate to together: the
    /// ratio rule applied to the whole file, capped by `maximumTotalSize`. Members may not share
    /// bytes (the directory reader refuses overlapping members), so this bounds the work and
    /// memory of reading every member, not only each one.
    public func allowedTotalSize(archiveSize: Int) -> Int {
        let (scaled, overflow) = archiveSize.multipliedReportingOverflow(by: maximumRatio)
        return Swift.min(maximumTotalSize, Swift.max(ratioFloor, overflow ? Int.max : scaled))
    }

    /// The most a member with `compressedSize` compressed bytes may inflate to.
    public func allowedSize(compressedSize: Int) -> Int {
        let (scaled, overflow) = compressedSize.multipliedReportingOverflow(by: maximumRatio)
        let byRatio = overflow ? Int.max : scaled
        return Swift.min(maximumSize, Swift.max(ratioFloor, byRatio))
    }
}
