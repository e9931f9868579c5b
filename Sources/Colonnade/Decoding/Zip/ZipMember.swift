/// One member of a zip archive, as its central directory (and local header) describe it.
public struct ZipMember: Sendable, Hashable {
    /// The member's path inside the archive (UTF-8, or bytes read as UTF-8 with replacement).
    public var name: String
    /// The compression method (0 stored, 8 deflate; see `ZipError.methodName`).
    public var method: Int
    /// The general-purpose flags (bit 0 encrypted, bit 3 data descriptor, bit 11 UTF-8 names).
    public var flags: Int
    /// The CRC-32 of the uncompressed data.
    public var crc32: UInt32
    /// Compressed bytes.
    public var compressedSize: Int
    /// Uncompressed bytes.
    public var uncompressedSize: Int
    /// Where the member's local header starts.
    public var localHeaderOffset: Int
    /// Where the member's compressed data starts (after the local header).
    public var dataOffset: Int
    /// The Unix file mode the archive records (the external attributes' high 16 bits, when the
    /// archive was made on Unix), or nil.
    public var unixMode: UInt32? = nil

    /// Whether the member is a directory entry (its name ends in `/`).
    public var isDirectory: Bool { name.hasSuffix("/") }
    /// Whether the member is encrypted (flag bit 0 or 6, or WinZip AES).
    public var isEncrypted: Bool { flags & 0x41 != 0 || method == 99 }
    /// Whether a data descriptor follows the compressed data (flag bit 3).
    public var hasDataDescriptor: Bool { flags & 0x8 != 0 }
    /// Whether the archive records the member as a symbolic link (Unix mode `S_IFLNK`): its data
    /// is the link's target path, not a file's contents.
    public var isSymbolicLink: Bool { unixMode.map { $0 & 0o170000 == 0o120000 } ?? false }
}
