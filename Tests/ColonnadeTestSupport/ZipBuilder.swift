import Colonnade

/// Writes zip archives byte by byte for tests, with control over every field the reader checks:
/// method, flags, recorded CRC and sizes, data descriptors, ZIP64 fields. The compressed data is
/// given (stored bytes, or a raw DEFLATE stream made elsewhere).
public struct ZipBuilder {
    /// One member to write.
    public struct Member {
        public var name: String
        public var method: Int
        public var data: [UInt8]
        public var crc32: UInt32
        public var uncompressedSize: Int
        public var flags = 0
        /// Write a data descriptor (sets flag bit 3; the local header's CRC and sizes are zero).
        public var descriptor: Descriptor = .none
        /// Write sizes and offset as ZIP64 extra fields (0xFFFFFFFF in the 32-bit fields).
        public var zip64 = false
        /// The central directory's external attributes (the Unix mode in the high 16 bits: the
        /// archive says it was made on Unix).
        public var externalAttributes: UInt32 = 0

        public enum Descriptor { case none, withSignature, withoutSignature }

        /// A stored member of `bytes`.
        public static func stored(_ name: String, _ bytes: [UInt8]) -> Member {
            Member(name: name, method: 0, data: bytes, crc32: CRC32.checksum(bytes), uncompressedSize: bytes.count)
        }

        /// A deflate member: `stream` must inflate to `original`.
        public static func deflated(_ name: String, stream: [UInt8], original: [UInt8]) -> Member {
            Member(name: name, method: 8, data: stream, crc32: CRC32.checksum(original), uncompressedSize: original.count)
        }
    }

    public var members: [Member]
    /// Write a ZIP64 end record and locator.
    public var zip64End = false
    public var comment: [UInt8] = []

    public init(_ members: [Member], zip64End: Bool = false) {
        self.members = members
        self.zip64End = zip64End
    }

    public func bytes() -> [UInt8] {
        var out: [UInt8] = []
        var central: [UInt8] = []
        for m in members {
            let offset = out.count
            let name = Array(m.name.utf8)
            let flags = m.flags | (m.descriptor == .none ? 0 : 0x8)
            var extra: [UInt8] = []
            if m.zip64 {
                extra += le16(1) + le16(16) + le64(m.uncompressedSize) + le64(m.data.count)
            }
            let small = { (v: Int) -> Int in m.zip64 ? 0xFFFF_FFFF : v }
            out += le32(0x0403_4B50) + le16(m.zip64 ? 45 : 20) + le16(flags) + le16(m.method) + le16(0) + le16(0x21)
            if m.descriptor == .none {
                out += le32(Int(m.crc32)) + le32(small(m.data.count)) + le32(small(m.uncompressedSize))
            } else {
                out += le32(0) + le32(m.zip64 ? 0xFFFF_FFFF : 0) + le32(m.zip64 ? 0xFFFF_FFFF : 0)
            }
            out += le16(name.count) + le16(extra.count) + name + extra + m.data
            switch m.descriptor {
            case .none: break
            case .withSignature: out += le32(0x0807_4B50) + descriptorBody(m)
            case .withoutSignature: out += descriptorBody(m)
            }
            var centralExtra: [UInt8] = []
            if m.zip64 {
                centralExtra += le16(1) + le16(24) + le64(m.uncompressedSize) + le64(m.data.count) + le64(offset)
            }
            central +=
                le32(0x0201_4B50) + le16(0x031E) + le16(m.zip64 ? 45 : 20) + le16(flags) + le16(m.method)
                + le16(0) + le16(0x21) + le32(Int(m.crc32)) + le32(small(m.data.count)) + le32(small(m.uncompressedSize))
                + le16(name.count) + le16(centralExtra.count) + le16(0) + le16(0) + le16(0) + le32(Int(m.externalAttributes))
                + le32(m.zip64 ? 0xFFFF_FFFF : offset) + name + centralExtra
        }
        let directoryOffset = out.count
        out += central
        if zip64End {
            let record = out.count
            out +=
                le32(0x0606_4B50) + le64(44) + le16(45) + le16(45) + le32(0) + le32(0)
                + le64(members.count) + le64(members.count) + le64(central.count) + le64(directoryOffset)
            out += le32(0x0706_4B50) + le32(0) + le64(record) + le32(1)
            out +=
                le32(0x0605_4B50) + le16(0) + le16(0) + le16(0xFFFF) + le16(0xFFFF)
                + le32(0xFFFF_FFFF) + le32(0xFFFF_FFFF) + le16(comment.count) + comment
        } else {
            out +=
                le32(0x0605_4B50) + le16(0) + le16(0) + le16(members.count) + le16(members.count)
                + le32(central.count) + le32(directoryOffset) + le16(comment.count) + comment
        }
        return out
    }

    private func descriptorBody(_ m: Member) -> [UInt8] {
        le32(Int(m.crc32)) + (m.zip64 ? le64(m.data.count) + le64(m.uncompressedSize) : le32(m.data.count) + le32(m.uncompressedSize))
    }

    private func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
    private func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16((v >> 16) & 0xFFFF) }
    private func le64(_ v: Int) -> [UInt8] { le32(v & 0xFFFF_FFFF) + le32((v >> 32) & 0xFFFF_FFFF) }
}
