/// Constants of the snapshot file format, version 1.0. The format is specified byte by byte in
/// `docs/SNAPSHOT_FORMAT.md`; every number here appears there.
///
///     offset 0      header (64 bytes, then zeros to 4096)
///     offset 4096   column payloads, each 64-byte aligned and padded to 64
///     footer        tagged sections: schema, ticker dictionary, ticker index, columns, summaries, metadata
///     end - 24      trailer: footer checksum, footer length, magic
public enum SnapshotFormat {
    /// `COLNSNAP` — the first and the last eight bytes of every snapshot.
    public static let magic: [UInt8] = Array("COLNSNAP".utf8)
    /// The magic as a little-endian `UInt64` (how it is compared).
    static let magicWord: UInt64 = magic.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
    /// The major version this build writes and reads. A file with another major version is refused.
    public static let majorVersion: UInt16 = 1
    /// The minor version this build writes. Files with any minor version of a known major load
    /// (minor versions only add optional sections).
    public static let minorVersion: UInt16 = 0

    /// Size of the meaningful part of the header.
    static let headerSize = 64
    /// Where the header's checksum field is.
    static let headerChecksumOffset = 56
    /// The header page: payloads start here.
    static let payloadStart = 4096
    /// Payload alignment and padding.
    static let payloadAlignment = 64
    /// The header's reserved bytes (zero in 1.x).
    static let reservedHeaderBytes = 40 ..< 56
    /// The header page after the header (zero).
    static let headerPaddingBytes = 64 ..< 4096
    /// Size of the trailer: footer checksum, footer length, magic.
    static let trailerSize = 24
    /// The smallest possible snapshot: header page, empty footer, trailer.
    static let minimumFileSize = payloadStart + trailerSize
    /// Alignment of the footer and of each section in it.
    static let sectionAlignment = 8
    /// Bytes of a section header: tag, flags, length.
    static let sectionHeaderSize = 16
    /// Section flag: a reader that does not know the tag may skip the section.
    static let optionalFlag: UInt32 = 1

    /// Section tags (four ASCII bytes, stored in file order, compared as little-endian `UInt32`).
    enum Tag {
        static let schema = tag("SCHM")
        static let tickerDictionary = tag("TDIC")
        static let tickerIndex = tag("TIDX")
        static let columns = tag("COLS")
        static let summaries = tag("SUMM")
        static let metadata = tag("META")
    }

    static func tag(_ text: StaticString) -> UInt32 {
        precondition(text.utf8CodeUnitCount == 4)
        return text.withUTF8Buffer { UInt32(littleEndian: UnsafeRawBufferPointer($0).loadUnaligned(as: UInt32.self)) }
    }

    /// The four characters of a tag, for messages (non-printable bytes as `?`).
    static func tagName(_ tag: UInt32) -> String {
        var out = ""
        for i in 0 ..< 4 {
            let b = UInt8(truncatingIfNeeded: tag >> (8 * UInt32(i)))
            out.append(b >= 0x20 && b < 0x7F ? Character(Unicode.Scalar(b)) : "?")
        }
        return out
    }

    /// `n` rounded up to a multiple of `alignment` (a power of two).
    @inline(__always) static func align(_ n: Int, _ alignment: Int) -> Int { (n + alignment - 1) & ~(alignment - 1) }
}
