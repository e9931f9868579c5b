/// A zip archive read from a file (mapped, not copied) or from bytes: its members, and their
/// uncompressed bytes — whole, or streamed in chunks with bounded memory.
///
///     let archive = try ZipArchive(contentsOfFile: "export.zip")
///     for member in archive.members where !member.isDirectory {
///         let bytes = try archive.extract(member)           // CRC-32 and size checked
///     }
///
/// What is implemented (docs/ZIP.md): the end-of-central-directory record (and ZIP64's record and
/// locator), central-directory headers with ZIP64 extra fields, local headers, data descriptors
/// (with or without signature, 32- or 64-bit sizes), stored and deflate members. Every member's
/// CRC-32 and size are checked. Split archives, encryption and other methods are refused with a
/// `ZipError` naming the member and the byte.
///
/// For fuzzing and tests, `extractAll(_:limits:)` takes bytes and returns every member or throws.
package final class ZipArchive: @unchecked Sendable {
    // Safe to share: immutable after init; the storage is read-only.
    /// The archive's name for messages (usually the file name).
    package let name: String
    /// The members in central-directory order.
    package let members: [ZipMember]
    private let storage: ZipStorage

    /// Maps and reads the archive at `path`; `name` defaults to its last path component.
    package convenience init(contentsOfFile path: String, name: String? = nil) throws(ZipError) {
        let label = name ?? Self.lastComponent(path)
        try self.init(storage: ZipStorage(mapping: path, archive: label), name: label)
    }

    /// Reads an archive held in memory.
    package convenience init(bytes: [UInt8], name: String) throws(ZipError) {
        try self.init(storage: ZipStorage(bytes: bytes), name: name)
    }

    /// Reads an archive held in `count` bytes at `base`, allocated by `malloc`: the archive takes
    /// them (no copy) and frees them when it is freed, or when this throws.
    package convenience init(owningMallocBytes base: UnsafeMutableRawPointer, count: Int, name: String) throws(ZipError) {
        try self.init(storage: ZipStorage(owningMallocBytes: base, count: count), name: name)
    }

    private init(storage: ZipStorage, name: String) throws(ZipError) {
        self.storage = storage
        self.name = name
        do {
            self.members = try ZipDirectoryReader(storage: storage, archive: name).readMembers()
        } catch {
            if storage.lostPages { throw Self.shrank(name, member: nil) }
            throw error
        }
        if storage.lostPages { throw Self.shrank(name, member: nil) }
        var total = 0
        for member in members {
            let (sum, overflow) = total.addingReportingOverflow(member.uncompressedSize)
            total = overflow ? Int.max : sum
        }
        totalUncompressedSize = total
    }

    /// What every member records it inflates to, added up (saturating at `Int.max`).
    package let totalUncompressedSize: Int

    /// The error for an archive file that shrank while it was being read (its mapping read
    /// zeros past the new end: whatever else went wrong came from that).
    static func shrank(_ archive: String, member: String?) -> ZipError {
        .malformed(archive: archive, member: member, offset: 0, detail: "the archive file shrank while it was being read")
    }

    /// Whether `bytes` start like a zip archive (a local header, or an empty archive's end record).
    package static func looksLikeZip(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 4 else { return false }
        return bytes[0] == 0x50 && bytes[1] == 0x4B && ((bytes[2] == 3 && bytes[3] == 4) || (bytes[2] == 5 && bytes[3] == 6))
    }

    static func lastComponent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        let tail = path[path.index(after: slash)...]
        return tail.isEmpty ? path : String(tail)
    }

    // MARK: Reading members

    /// Every file member's bytes (directories skipped), each checked; the fuzz-friendly entry point.
    /// - Throws: The first `ZipError`.
    package static func extractAll(_ bytes: [UInt8], limits: ZipLimits = .standard) throws(ZipError) -> [(name: String, bytes: [UInt8])] {
        let archive = try ZipArchive(bytes: bytes, name: "input")
        var out: [(name: String, bytes: [UInt8])] = []
        for member in archive.members where !member.isDirectory {
            out.append((member.name, try archive.extract(member, limits: limits)))
        }
        return out
    }

    /// The member's uncompressed bytes, CRC-32 and size checked.
    /// - Throws: `ZipError` (limits first, from the recorded size, so a bomb costs nothing).
    package func extract(_ member: ZipMember, limits: ZipLimits = .standard) throws(ZipError) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(Swift.min(member.uncompressedSize, limits.allowedSize(compressedSize: member.compressedSize)))
        try stream(member, limits: limits, chunkSize: 1 << 20) { chunk in
            out.append(contentsOf: UnsafeBufferPointer(start: chunk.base + chunk.dataStart, count: chunk.count - chunk.dataStart))
            return 0
        }
        return out
    }

    /// Streams the member's uncompressed bytes to `consume` in chunks of about `chunkSize` bytes.
    ///
    /// `consume` returns how many trailing bytes of the chunk's data it has not used and wants
    /// again at the start of the next chunk's data (for example a partial line), or nil to stop
    /// early. Chunks may be kept and read on other threads.
    ///
    /// The CRC-32 and size are checked after the last chunk, so a consumer must not act on the
    /// bytes for good until this returns without throwing.
    ///
    /// With `checksByCaller`, the CRC-32 is not computed here: the consumer computes it over each
    /// chunk's `newBytes` (on any thread, joined in member order with `CRC32.combine`) and passes
    /// it to `checkChecksum(_:_:)`, which it must do before using the bytes for good. The inflating
    /// thread then only inflates. Sizes and limits are checked here either way.
    ///
    /// Chunk buffers are reused once the consumer drops its last reference to a chunk, so a
    /// consumer that drops chunks promptly costs no new memory per chunk.
    ///
    /// - Throws: `ZipError`: encrypted or unsupported member, over the limits (checked against the
    ///   recorded size first, then against the bytes produced), corrupt data, size or CRC mismatch.
    /// - Complexity: O(uncompressed size); memory about two chunks plus what the consumer keeps.
    package func stream(
        _ member: ZipMember, limits: ZipLimits = .standard, chunkSize: Int = 4 << 20,
        checksByCaller: Bool = false, _ consume: (InflatedChunk) -> Int?
    ) throws(ZipError) {
        do {
            try streamMapped(member, limits: limits, chunkSize: chunkSize, checksByCaller: checksByCaller, consume)
        } catch {
            if storage.lostPages { throw Self.shrank(name, member: member.name) }
            throw error
        }
        if storage.lostPages { throw Self.shrank(name, member: member.name) }
    }

    /// `stream`'s work, on the archive's bytes as they read (zeros where a shrunk file lost pages).
    private func streamMapped(
        _ member: ZipMember, limits: ZipLimits, chunkSize: Int,
        checksByCaller: Bool, _ consume: (InflatedChunk) -> Int?
    ) throws(ZipError) {
        if member.isEncrypted { throw .encrypted(archive: name, member: member.name, offset: member.localHeaderOffset) }
        guard member.method == 0 || member.method == 8 else {
            throw .unsupportedMethod(archive: name, member: member.name, offset: member.localHeaderOffset, method: member.method)
        }
        let allowed = limits.allowedSize(compressedSize: member.compressedSize)
        if member.uncompressedSize > allowed {
            throw .tooLarge(
                archive: name, member: member.name, size: member.uncompressedSize,
                compressedSize: member.compressedSize, limit: allowed)
        }
        // Then the whole archive: every member's recorded size counts, so a directory of many
        // members, each within its own limit, cannot add up to more than the file allows.
        let allowedTotal = limits.allowedTotalSize(archiveSize: storage.count)
        if totalUncompressedSize > allowedTotal {
            throw .tooLarge(
                archive: name, member: "(all \(members.count) members)", size: totalUncompressedSize,
                compressedSize: storage.count, limit: allowedTotal)
        }
        if member.method == 0 && member.compressedSize != member.uncompressedSize {
            throw .malformed(
                archive: name, member: member.name, offset: member.localHeaderOffset,
                detail: "a stored member with compressed size \(member.compressedSize) "
                    + "and uncompressed size \(member.uncompressedSize)")
        }
        let window = 32 << 10
        let chunk = Swift.max(chunkSize, Inflater.minimumSpace)
        let data = UnsafeRawBufferPointer(start: storage.base + member.dataOffset, count: member.compressedSize)
        var inflater = Inflater(data)
        var storedPosition = 0
        // Buffers come from a pool, so a stream of many chunks allocates (and faults in) a few.
        let pool = InflatedChunkPool(keep: 8, bufferSize: window + chunk + Inflater.margin)
        var buffer = InflatedChunk(capacity: chunk + Inflater.margin, pool: pool)
        var produced = 0
        var crc = CRC32()
        while true {
            let from = buffer.count
            let end: Int
            let finished: Bool
            if member.method == 0 {
                let n = Swift.min(member.compressedSize - storedPosition, buffer.capacity - Inflater.margin - from)
                // Safe: n bytes remain in the member's data and fit in the buffer.
                (buffer.base + from).update(from: storage.base + member.dataOffset + storedPosition, count: n)
                storedPosition += n
                end = from + n
                finished = storedPosition == member.compressedSize
            } else {
                do {
                    end = try inflater.inflate(into: buffer.base, from: from, capacity: buffer.capacity)
                } catch {
                    throw .corruptData(
                        archive: name, member: member.name, offset: member.dataOffset + Swift.min(error.offset, member.compressedSize),
                        reason: error.reason)
                }
                finished = inflater.isFinished
            }
            if !checksByCaller { crc.update(buffer.base + from, count: end - from) }
            produced += end - from
            if produced > allowed {
                throw .tooLarge(archive: name, member: member.name, size: produced, compressedSize: member.compressedSize, limit: allowed)
            }
            if produced > member.uncompressedSize {
                throw .sizeMismatch(archive: name, member: member.name, expected: member.uncompressedSize, actual: produced)
            }
            buffer.count = end
            buffer.isLast = finished
            guard let keep = consume(buffer) else { return }
            if finished { break }
            // The next buffer starts with the history (32 KiB) or what the consumer keeps, if more.
            let kept = Swift.min(Swift.max(keep, 0), end - buffer.dataStart)
            let tail = Swift.min(Swift.max(window, kept), end)
            let next = InflatedChunk(capacity: tail + chunk + Inflater.margin, pool: pool)
            next.base.update(from: buffer.base + end - tail, count: tail)
            next.count = tail
            next.dataStart = tail - kept
            next.newStart = tail
            next.memberOffset = produced - kept
            buffer = next
        }
        if produced != member.uncompressedSize {
            throw .sizeMismatch(archive: name, member: member.name, expected: member.uncompressedSize, actual: produced)
        }
        if !checksByCaller { try checkChecksum(member, crc.value) }
    }

    /// Checks `value`, the CRC-32 of the member's uncompressed bytes, against the recorded one
    /// (for `stream(_:limits:chunkSize:checksByCaller:_:)` with `checksByCaller`).
    /// - Throws: `ZipError.checksumMismatch` naming the member.
    package func checkChecksum(_ member: ZipMember, _ value: UInt32) throws(ZipError) {
        if value != member.crc32 {
            throw .checksumMismatch(archive: name, member: member.name, expected: member.crc32, actual: value)
        }
    }
}
