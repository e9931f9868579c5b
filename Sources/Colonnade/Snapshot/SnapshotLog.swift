/// The version log of a snapshot store (format 2.0, docs/SNAPSHOT_FORMAT.md, *Stores: versions
/// and appends*): which data files each committed version names, and when and how it was made.
///
/// A single-file (1.x) snapshot reads as a log of one version (``SnapshotVersion/Kind/single``).

/// One committed version of a store.
public struct SnapshotVersion: Sendable, Equatable {
    /// What made a version.
    public enum Kind: UInt8, Sendable {
        /// A single-file (1.x) snapshot, seen (or, once upgraded, kept) as version 1.
        case single = 0
        /// A whole table written (a full rewrite: `adjust`, `generate --force`, a restatement).
        case full = 1
        /// Rows appended or replaced: one new segment on top of the previous version's files.
        case append = 2
        /// The previous version's files folded into one.
        case compact = 3
        /// An older version made current again (no data written).
        case restore = 4

        /// How `colonnade log` names it.
        public var name: String {
            switch self {
            case .single: "snapshot"
            case .full: "write"
            case .append: "append"
            case .compact: "compact"
            case .restore: "restore"
            }
        }
    }

    /// The version's number: 1 for the first, each commit one more (numbers are never reused).
    public var number: Int
    /// When it was committed: milliseconds since 1970-01-01 UTC.
    public var millisecondsSince1970: Int64
    /// What made it.
    public var kind: Kind
    /// The command that made it, credentials redacted (empty when unknown).
    public var command: String
    /// The table's rows at this version.
    public var rowCount: Int
    /// Rows this commit wrote (the segment's or the whole table's; 0 for a restore).
    public var writtenRows: Int
    /// Bytes of data files this commit wrote (0 for a restore).
    public var writtenBytes: Int
    /// For a restore: the version it made current again.
    public var restoredFrom: Int?
    /// The data files, by index into ``SnapshotLog/files``: the base first, then the segments in
    /// commit order (a later segment's row wins on equal ticker and date).
    public var files: [Int]
}

/// One immutable data file of a store: a whole 1.x snapshot (its own header, zone maps, ticker
/// index and checksums), never changed after it is named by a version.
public struct SnapshotDataFile: Sendable, Equatable {
    /// The file's name inside the store's data directory.
    public var name: String
    /// Its size in bytes.
    public var size: Int
    /// The footer checksum recorded in its trailer (a swapped or rewritten file is refused).
    public var footerChecksum: UInt64
    /// Its rows.
    public var rowCount: Int
}

/// A store's versions and data files.
public struct SnapshotLog: Sendable, Equatable {
    /// The data directory's name, beside the log file (empty for a single-file snapshot).
    public var dataDirectory: String
    /// Every data file some version names.
    public var files: [SnapshotDataFile]
    /// The versions, oldest first; the last is current. Never empty.
    public var versions: [SnapshotVersion]

    /// Whether this is a single-file (1.x) snapshot rather than a 2.x store.
    public var isSingleFile: Bool { dataDirectory.isEmpty }

    /// The current (newest) version.
    public var current: SnapshotVersion { versions[versions.count - 1] }

    /// The version numbered `number`, if the log still holds it.
    public func version(_ number: Int) -> SnapshotVersion? { versions.first { $0.number == number } }

    /// The newest version committed at or before `millisecondsSince1970`, if any.
    public func version(atOrBefore millisecondsSince1970: Int64) -> SnapshotVersion? {
        versions.last { $0.millisecondsSince1970 <= millisecondsSince1970 }
    }

    /// Bytes of the files `version` names.
    public func bytes(of version: SnapshotVersion) -> Int { version.files.reduce(0) { $0 + files[$1].size } }

    /// Bytes of every data file (the current version's and the history's).
    public var totalBytes: Int { files.reduce(0) { $0 + $1.size } }
}

extension SnapshotLog {
    /// Version log format: `COLNSNAP`, major 2 (so a 1.x reader refuses it as an unknown major
    /// version instead of reading it as a snapshot), minor 0.
    static let majorVersion: UInt16 = 2
    static let minorVersion: UInt16 = 0
    static let headerSize = 64
    static let bodyTag = SnapshotFormat.tag("VLOG")
    /// The largest log a reader accepts (a log of a million versions is far smaller).
    static let maximumSize = 256 << 20

    /// The log's bytes: header, body (see docs/SNAPSHOT_FORMAT.md, *The version log*).
    func encoded() -> [UInt8] {
        var body = SnapshotByteWriter()
        body.writeUInt32LE(Self.bodyTag)
        body.writeString(dataDirectory)
        body.writeUInt32LE(UInt32(files.count))
        for f in files {
            body.writeString(f.name)
            body.writeUInt64LE(UInt64(f.size))
            body.writeUInt64LE(f.footerChecksum)
            body.writeUInt64LE(UInt64(f.rowCount))
        }
        body.writeUInt32LE(UInt32(versions.count))
        for v in versions {
            body.writeUInt64LE(UInt64(v.number))
            body.writeUInt64LE(UInt64(bitPattern: v.millisecondsSince1970))
            body.writeUInt8(v.kind.rawValue)
            body.writeUInt64LE(UInt64(v.rowCount))
            body.writeUInt64LE(UInt64(v.writtenRows))
            body.writeUInt64LE(UInt64(v.writtenBytes))
            body.writeUInt64LE(UInt64(v.restoredFrom ?? 0))
            body.writeString(v.command)
            body.writeUInt32LE(UInt32(v.files.count))
            for i in v.files { body.writeUInt32LE(UInt32(i)) }
        }
        var header = SnapshotByteWriter()
        header.bytes.append(contentsOf: SnapshotFormat.magic)
        header.writeUInt16LE(Self.majorVersion)
        header.writeUInt16LE(Self.minorVersion)
        header.writeUInt32LE(0)
        header.writeUInt64LE(UInt64(Self.headerSize + body.bytes.count))
        header.writeUInt64LE(SnapshotChecksum.hash(body.bytes, seed: UInt64(Self.headerSize)))
        header.bytes.append(contentsOf: repeatElement(0, count: Self.headerSize - header.bytes.count))
        header.setUInt64LE(SnapshotChecksum.hash(header.bytes, seed: 0), at: 56)
        return header.bytes + body.bytes
    }

    /// Whether `bytes` begin as a version log (the magic and major version 2), whatever follows.
    static func isLog(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 12 && bytes.prefix(8).elementsEqual(SnapshotFormat.magic)
            && UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt16.self)) == majorVersion
    }

    /// Decodes and checks a log: header and body checksums, counts, names, indices, ascending
    /// version numbers. Every value is range-checked; no byte sequence traps.
    static func decode(_ b: UnsafeRawBufferPointer, file: String) throws(SnapshotError) -> SnapshotLog {
        guard b.count >= 8, b.prefix(8).elementsEqual(SnapshotFormat.magic) else { throw .notASnapshot(file: file) }
        guard b.count >= headerSize else { throw .truncated(file: file, expected: headerSize, actual: b.count) }
        func u64(_ o: Int) -> UInt64 { UInt64(littleEndian: b.loadUnaligned(fromByteOffset: o, as: UInt64.self)) }
        let major = UInt16(littleEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt16.self))
        let minor = UInt16(littleEndian: b.loadUnaligned(fromByteOffset: 10, as: UInt16.self))
        guard major == majorVersion else {
            throw .unsupportedVersion(file: file, found: "\(major).\(minor)", supported: "1.x and 2.x")
        }
        var page = Array(b.prefix(headerSize))
        for i in 56 ..< 64 { page[i] = 0 }
        let headerSum = SnapshotChecksum.hash(page, seed: 0)
        guard headerSum == u64(56) else {
            throw .checksumMismatch(file: file, section: "version log header", column: nil, expected: u64(56), actual: headerSum)
        }
        guard UInt32(littleEndian: b.loadUnaligned(fromByteOffset: 12, as: UInt32.self)) == 0,
            (32 ..< 56).allSatisfy({ b[$0] == 0 })
        else { throw .malformedHeader(file: file, detail: "version log flags or reserved bytes are not 0") }
        let length = u64(16)
        guard length == UInt64(b.count) else {
            if length > UInt64(b.count) { throw .truncated(file: file, expected: Int(clamping: length), actual: b.count) }
            throw .malformedHeader(file: file, detail: "version log has \(b.count) bytes, its header records \(length)")
        }
        let body = UnsafeRawBufferPointer(rebasing: b[headerSize...])
        let bodySum = SnapshotChecksum.hash(body, seed: UInt64(headerSize))
        guard bodySum == u64(24) else {
            throw .checksumMismatch(file: file, section: "version log", column: nil, expected: u64(24), actual: bodySum)
        }
        var r = SnapshotByteReader(body, file: file, section: "VLOG")
        guard try r.readUInt32LE("tag") == bodyTag else { throw r.fail("the body does not start with VLOG") }
        let directory = try r.readString("data directory")
        guard isPlainName(directory) else { throw r.fail("data directory '\(directory)' is not a plain file name") }
        let fileCount = try r.readCount32("file count", minimumItemBytes: 28)
        var files = [SnapshotDataFile]()
        var names = Set<String>()
        for i in 0 ..< fileCount {
            let name = try r.readString("file \(i) name")
            guard isPlainName(name), names.insert(name).inserted else {
                throw r.fail("file \(i) name '\(name)' is not a plain, unique file name")
            }
            let size = try r.readCount64("file \(i) size", limit: Int.max)
            let sum = try r.readUInt64LE("file \(i) checksum")
            let rows = try r.readCount64("file \(i) rows", limit: Int(Int32.max) * 64)
            files.append(SnapshotDataFile(name: name, size: size, footerChecksum: sum, rowCount: rows))
        }
        // Sizes are each at most Int.max; their total must be too, so that the bytes of a version
        // (distinct files, checked below) and of the whole history sum without overflow.
        var totalSize = 0
        for f in files {
            let (sum, overflow) = totalSize.addingReportingOverflow(f.size)
            guard !overflow else { throw r.fail("the data files' sizes add up to more than \(Int.max) bytes") }
            totalSize = sum
        }
        let versionCount = try r.readCount32("version count", minimumItemBytes: 57)
        guard versionCount > 0 else { throw r.fail("no versions") }
        var versions = [SnapshotVersion]()
        for i in 0 ..< versionCount {
            let number = try r.readCount64("version \(i) number", limit: Int(Int64.max))
            let time = Int64(bitPattern: try r.readUInt64LE("version \(i) time"))
            let kindCode = try r.readUInt8("version \(i) kind")
            guard let kind = SnapshotVersion.Kind(rawValue: kindCode) else {
                throw r.fail("version \(number) has unknown kind \(kindCode)")
            }
            let rows = try r.readCount64("version \(i) rows", limit: Int(Int32.max) * 64)
            let written = try r.readCount64("version \(i) written rows", limit: Int(Int32.max) * 64)
            let bytes = try r.readCount64("version \(i) written bytes", limit: Int.max)
            let restored = try r.readCount64("version \(i) restored from", limit: Int(Int64.max))
            let command = try r.readString("version \(i) command")
            let count = try r.readCount32("version \(i) file count", minimumItemBytes: 4)
            guard count > 0 else { throw r.fail("version \(number) names no file") }
            var indices = [Int]()
            var named = Set<Int>()
            for _ in 0 ..< count {
                let index = Int(try r.readUInt32LE("version \(i) file index"))
                guard index < files.count else { throw r.fail("version \(number) names file \(index) of \(files.count)") }
                guard named.insert(index).inserted else { throw r.fail("version \(number) names file \(index) twice") }
                indices.append(index)
            }
            guard number > (versions.last?.number ?? 0) else { throw r.fail("version numbers do not ascend at version \(number)") }
            versions.append(
                SnapshotVersion(
                    number: number, millisecondsSince1970: time, kind: kind, command: command,
                    rowCount: rows, writtenRows: written, writtenBytes: bytes,
                    restoredFrom: restored == 0 ? nil : restored, files: indices))
        }
        try r.expectEnd()
        return SnapshotLog(dataDirectory: directory, files: files, versions: versions)
    }

    /// A name that stays inside its directory: not empty, no `/`, not `.` or `..`, no NUL.
    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 255 && name != "." && name != ".." && !name.utf8.contains(UInt8(ascii: "/"))
            && !name.utf8.contains(0)
    }
}
