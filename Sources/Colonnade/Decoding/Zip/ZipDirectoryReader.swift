/// Reads a zip archive's structure (APPNOTE.TXT 6.3): the end-of-central-directory record, the
/// ZIP64 end record through its locator, the central directory, and each member's local header
/// and data descriptor. Every read is bounds-checked against the archive's size.
struct ZipDirectoryReader {
    let storage: ZipStorage
    let archive: String

    enum Signature {
        static let localHeader = 0x0403_4B50
        static let centralHeader = 0x0201_4B50
        static let endOfCentralDirectory = 0x0605_4B50
        static let zip64End = 0x0606_4B50
        static let zip64Locator = 0x0706_4B50
        static let dataDescriptor = 0x0807_4B50
    }

    private var count: Int { storage.count }

    private func need(_ offset: Int, _ length: Int, _ what: String, member: String? = nil) throws(ZipError) {
        guard offset >= 0, length >= 0, offset <= count - length else {
            throw .truncated(archive: archive, member: member, offset: Swift.min(Swift.max(offset, 0), count), expected: what)
        }
    }

    func readMembers() throws(ZipError) -> [ZipMember] {
        let end = try findEndRecord()
        var entryCount = storage.getUInt16LE(at: end + 10)
        var directorySize = storage.getUInt32LE(at: end + 12)
        var directoryOffset = storage.getUInt32LE(at: end + 16)
        let disk = storage.getUInt16LE(at: end + 4), directoryDisk = storage.getUInt16LE(at: end + 6)
        var directoryEnd = end

        // ZIP64: a locator just before the end record points at the ZIP64 end record.
        let locator = end - 20
        if locator >= 0 && storage.getUInt32LE(at: locator) == Signature.zip64Locator {
            let recordOffset64 = storage.getUInt64LE(at: locator + 8)
            guard recordOffset64 <= UInt64(count) else {
                throw .malformed(
                    archive: archive, member: nil, offset: locator, detail: "the ZIP64 locator points past the end of the file")
            }
            let record = Int(recordOffset64)
            try need(record, 56, "a ZIP64 end-of-central-directory record")
            guard storage.getUInt32LE(at: record) == Signature.zip64End else {
                throw .malformed(
                    archive: archive, member: nil, offset: record,
                    detail: "no ZIP64 end-of-central-directory record where the locator points")
            }
            guard storage.getUInt32LE(at: record + 16) == 0, storage.getUInt32LE(at: record + 20) == 0 else {
                throw .malformed(
                    archive: archive, member: nil, offset: record, detail: "a split (multi-disk) archive, which colonnade cannot read")
            }
            let entries64 = storage.getUInt64LE(at: record + 32)
            let size64 = storage.getUInt64LE(at: record + 40)
            let offset64 = storage.getUInt64LE(at: record + 48)
            guard entries64 <= UInt64(count), size64 <= UInt64(count), offset64 <= UInt64(count) else {
                throw .malformed(archive: archive, member: nil, offset: record, detail: "ZIP64 sizes larger than the file")
            }
            entryCount = Int(entries64)
            directorySize = Int(size64)
            directoryOffset = Int(offset64)
            directoryEnd = record
        } else if disk != 0 || directoryDisk != 0 {
            throw .malformed(
                archive: archive, member: nil, offset: end, detail: "a split (multi-disk) archive, which colonnade cannot read")
        }
        guard directoryOffset <= directoryEnd, directorySize <= directoryEnd - directoryOffset else {
            throw .malformed(
                archive: archive, member: nil, offset: end,
                detail: "the central directory (\(directorySize) bytes at \(directoryOffset)) does not fit before its end record")
        }

        var members: [ZipMember] = []
        members.reserveCapacity(Swift.min(entryCount, directorySize / 46 + 1))
        var p = directoryOffset
        let directoryStop = directoryOffset + directorySize
        for _ in 0 ..< entryCount {
            members.append(try readCentralHeader(at: &p, stop: directoryStop))
        }
        try refuseOverlaps(members)
        return members
    }

    /// Members may not share bytes: each one's local header, data and data descriptor lie apart
    /// from every other's (as Info-ZIP requires). A directory that lists one member many times —
    /// a few kilobytes that would inflate to gigabytes, each copy within the per-member limits —
    /// is refused, naming both members.
    /// - Complexity: O(m log m) for m members.
    private func refuseOverlaps(_ members: [ZipMember]) throws(ZipError) {
        guard members.count > 1 else { return }
        let order = members.indices.sorted { members[$0].localHeaderOffset < members[$1].localHeaderOffset }
        var previous = order[0]
        for i in order.dropFirst() {
            let end = extentEnd(members[previous]), start = members[i].localHeaderOffset
            if start < end {
                throw .malformed(
                    archive: archive, member: members[i].name, offset: start,
                    detail: "its local header at byte \(start) lies inside the bytes of member '\(members[previous].name)' "
                        + "(\(members[previous].localHeaderOffset) ..< \(end)): members of an archive may not overlap")
            }
            previous = i
        }
    }

    /// The offset after a member's data and, when it has one, its data descriptor (at most 24
    /// bytes: a signature, the CRC-32 and two 8-byte sizes; fewer when the file ends sooner).
    private func extentEnd(_ member: ZipMember) -> Int {
        let dataEnd = member.dataOffset + member.compressedSize
        return member.hasDataDescriptor ? Swift.min(count, dataEnd + 12) : dataEnd
    }

    /// The offset of the end-of-central-directory record: searched backwards over the last
    /// 64 KiB + 22 bytes (the record plus the longest comment).
    private func findEndRecord() throws(ZipError) -> Int {
        guard count >= 22 else {
            throw .notAZip(archive: archive, detail: "\(count) bytes, too short for an end-of-central-directory record")
        }
        let lowest = Swift.max(0, count - 22 - 0xFFFF)
        var p = count - 22
        var fallback: Int?
        while p >= lowest {
            if storage.base[p] == 0x50 && storage.getUInt32LE(at: p) == Signature.endOfCentralDirectory {
                let commentLength = storage.getUInt16LE(at: p + 20)
                if p + 22 + commentLength == count { return p }
                if fallback == nil && p + 22 + commentLength <= count { fallback = p }
            }
            p -= 1
        }
        if let fallback { return fallback }
        throw .notAZip(archive: archive, detail: "no end-of-central-directory record (the file may be cut off)")
    }

    private func readCentralHeader(at p: inout Int, stop: Int) throws(ZipError) -> ZipMember {
        let at = p
        guard at <= stop - 46 else {
            throw .truncated(archive: archive, member: nil, offset: at, expected: "a central directory header")
        }
        try need(at, 46, "a central directory header")
        guard storage.getUInt32LE(at: at) == Signature.centralHeader else {
            throw .malformed(archive: archive, member: nil, offset: at, detail: "no central directory header signature")
        }
        let madeBy = storage.getUInt16LE(at: at + 4)
        let external = UInt32(truncatingIfNeeded: storage.getUInt32LE(at: at + 38))
        let flags = storage.getUInt16LE(at: at + 8)
        let method = storage.getUInt16LE(at: at + 10)
        let crc = UInt32(storage.getUInt32LE(at: at + 16))
        var compressed = storage.getUInt32LE(at: at + 20)
        var uncompressed = storage.getUInt32LE(at: at + 24)
        let nameLength = storage.getUInt16LE(at: at + 28)
        let extraLength = storage.getUInt16LE(at: at + 30)
        let commentLength = storage.getUInt16LE(at: at + 32)
        var diskStart = storage.getUInt16LE(at: at + 34)
        var localOffset = storage.getUInt32LE(at: at + 42)
        let variable = nameLength + extraLength + commentLength
        guard at + 46 + variable <= stop else {
            throw .truncated(
                archive: archive, member: nil, offset: at, expected: "the name, extra field and comment of a central directory header")
        }
        let name = String(decoding: UnsafeBufferPointer(start: storage.base + at + 46, count: nameLength), as: UTF8.self)

        // ZIP64 extended information (0x0001): 8-byte values for each field saturated above.
        var e = at + 46 + nameLength
        let extraEnd = e + extraLength
        while e + 4 <= extraEnd {
            let id = storage.getUInt16LE(at: e), size = storage.getUInt16LE(at: e + 2)
            let body = e + 4
            guard body + size <= extraEnd else {
                throw .malformed(archive: archive, member: name, offset: e, detail: "an extra field runs past its header")
            }
            if id == 0x0001 {
                var q = body
                func next64(_ what: String) throws(ZipError) -> Int {
                    guard q + 8 <= body + size else {
                        throw .malformed(archive: archive, member: name, offset: q, detail: "the ZIP64 extra field lacks the \(what)")
                    }
                    let v = storage.getUInt64LE(at: q)
                    q += 8
                    guard v <= UInt64(Int.max / 2) else {
                        throw .malformed(archive: archive, member: name, offset: q - 8, detail: "a ZIP64 \(what) of \(v)")
                    }
                    return Int(v)
                }
                if uncompressed == 0xFFFF_FFFF { uncompressed = try next64("uncompressed size") }
                if compressed == 0xFFFF_FFFF { compressed = try next64("compressed size") }
                if localOffset == 0xFFFF_FFFF { localOffset = try next64("local header offset") }
                if diskStart == 0xFFFF {
                    guard q + 4 <= body + size else {
                        throw .malformed(archive: archive, member: name, offset: q, detail: "the ZIP64 extra field lacks the disk number")
                    }
                    diskStart = storage.getUInt32LE(at: q)
                }
            }
            e = body + size
        }
        guard diskStart == 0 else {
            throw .malformed(archive: archive, member: name, offset: at, detail: "the member is on disk \(diskStart) of a split archive")
        }
        p = at + 46 + variable

        // The local header: its own name and extra field decide where the data starts.
        let local = localOffset
        try need(local, 30, "a local header", member: name)
        guard storage.getUInt32LE(at: local) == Signature.localHeader else {
            throw .malformed(
                archive: archive, member: name, offset: local, detail: "no local header signature where the central directory points")
        }
        let localMethod = storage.getUInt16LE(at: local + 8)
        let localName = storage.getUInt16LE(at: local + 26), localExtra = storage.getUInt16LE(at: local + 28)
        guard localMethod == method else {
            throw .malformed(
                archive: archive, member: name, offset: local + 8,
                detail: "the local header says method \(localMethod), the central directory \(method)")
        }
        try need(local + 30, localName + localExtra, "the local header's name and extra field", member: name)
        let localNameMatches =
            localName == nameLength
            && (0 ..< nameLength).allSatisfy { storage.base[local + 30 + $0] == storage.base[at + 46 + $0] }
        guard localNameMatches else {
            throw .malformed(archive: archive, member: name, offset: local + 30, detail: "the local header names a different file")
        }
        let dataOffset = local + 30 + localName + localExtra
        try need(dataOffset, compressed, "\(compressed) bytes of compressed data", member: name)

        // Version made by: the high byte is the host system, 3 = Unix (APPNOTE 4.4.2).
        let member = ZipMember(
            name: name, method: method, flags: flags, crc32: crc, compressedSize: compressed,
            uncompressedSize: uncompressed, localHeaderOffset: local, dataOffset: dataOffset,
            unixMode: madeBy >> 8 == 3 ? external >> 16 : nil)
        if member.hasDataDescriptor && !member.isEncrypted {
            try checkDataDescriptor(of: member)
        }
        return member
    }

    /// A data descriptor after the data: optional signature, CRC-32, then sizes. Only its CRC is
    /// compared (its sizes may be 4 or 8 bytes); the central directory's values are the ones used.
    private func checkDataDescriptor(of member: ZipMember) throws(ZipError) {
        var d = member.dataOffset + member.compressedSize
        try need(d, 4, "a data descriptor", member: member.name)
        if storage.getUInt32LE(at: d) == Signature.dataDescriptor {
            d += 4
            try need(d, 4, "a data descriptor", member: member.name)
        }
        let crc = UInt32(storage.getUInt32LE(at: d))
        guard crc == member.crc32 else {
            throw .malformed(
                archive: archive, member: member.name, offset: d,
                detail: "the data descriptor's CRC-32 differs from the central directory's")
        }
    }
}
