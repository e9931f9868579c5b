/// Little-endian byte building for the footer. `write…` appends.
struct SnapshotByteWriter {
    var bytes: [UInt8] = []

    mutating func writeUInt8(_ v: UInt8) { bytes.append(v) }
    mutating func writeUInt16LE(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func writeUInt32LE(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func writeUInt64LE(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    /// A string: UInt32 LE byte count, then its UTF-8 bytes.
    mutating func writeString(_ s: String) {
        let utf8 = Array(s.utf8)
        writeUInt32LE(UInt32(utf8.count))
        bytes.append(contentsOf: utf8)
    }
    /// A value's raw bytes (little-endian on the little-endian hosts snapshots support).
    mutating func writeRaw<T: BitwiseCopyable>(_ v: T) { withUnsafeBytes(of: v) { bytes.append(contentsOf: $0) } }
    mutating func padToAlignment(_ alignment: Int) {
        let n = SnapshotFormat.align(bytes.count, alignment) - bytes.count
        bytes.append(contentsOf: repeatElement(0, count: n))
    }
    /// Overwrites 8 bytes at `offset` (does not move the end).
    mutating func setUInt64LE(_ v: UInt64, at offset: Int) {
        withUnsafeBytes(of: v.littleEndian) { src in
            for i in 0 ..< 8 { bytes[offset + i] = src[i] }
        }
    }
}

/// A bounds-checked little-endian cursor over footer bytes. `read…` moves the cursor and throws
/// `malformedFooter` naming `section` instead of reading past the end. What is read is described
/// for the message (`what`) only when a read fails: a footer holds tens of thousands of fields.
struct SnapshotByteReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0
    let file: String
    let section: String

    init(_ bytes: UnsafeRawBufferPointer, file: String, section: String) {
        self.bytes = bytes
        self.file = file
        self.section = section
    }

    var remaining: Int { bytes.count - offset }

    func fail(_ detail: String) -> SnapshotError { .malformedFooter(file: file, section: section, detail: detail) }

    mutating func need(_ n: Int, _ what: @autoclosure () -> String) throws(SnapshotError) {
        if n < 0 || n > remaining { throw fail("\(what()) at byte \(offset) needs \(n) bytes, \(remaining) left") }
    }

    mutating func readUInt8(_ what: @autoclosure () -> String) throws(SnapshotError) -> UInt8 {
        try need(1, what())
        defer { offset += 1 }
        return bytes[offset]
    }
    mutating func readUInt16LE(_ what: @autoclosure () -> String) throws(SnapshotError) -> UInt16 {
        try need(2, what())
        defer { offset += 2 }
        // Safe: need(2) checked the range.
        return UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }
    mutating func readUInt32LE(_ what: @autoclosure () -> String) throws(SnapshotError) -> UInt32 {
        try need(4, what())
        defer { offset += 4 }
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    mutating func readUInt64LE(_ what: @autoclosure () -> String) throws(SnapshotError) -> UInt64 {
        try need(8, what())
        defer { offset += 8 }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
    /// A UInt64 that must fit a non-negative Int no larger than `limit`.
    mutating func readCount64(_ what: @autoclosure () -> String, limit: Int) throws(SnapshotError) -> Int {
        let v = try readUInt64LE(what())
        guard v <= UInt64(limit) else { throw fail("\(what()) \(v) exceeds \(limit)") }
        return Int(v)
    }
    /// A UInt32 count of items of at least `minimumItemBytes` each, checked against what is left.
    mutating func readCount32(_ what: @autoclosure () -> String, minimumItemBytes: Int) throws(SnapshotError) -> Int {
        let v = Int(try readUInt32LE(what()))
        if v * max(minimumItemBytes, 1) > remaining { throw fail("\(what()) \(v) cannot fit in \(remaining) bytes") }
        return v
    }
    mutating func readString(_ what: @autoclosure () -> String) throws(SnapshotError) -> String {
        let n = Int(try readUInt32LE("\(what()) length"))
        try need(n, what())
        defer { offset += n }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset ..< offset + n])
        // ASCII (every symbol, most names) is valid UTF-8 as it is; the generic validating
        // initializer costs several times more per string than this check, in a footer of
        // thousands of symbols.
        if !slice.contains(where: { $0 >= 0x80 }) { return String(decoding: slice, as: UTF8.self) }
        guard let s = String(validating: slice, as: UTF8.self) else {
            throw fail("\(what()) at byte \(offset) is not valid UTF-8")
        }
        return s
    }
    /// Steps over a string (UInt32 LE byte count, then its bytes) without decoding it.
    mutating func skipString(_ what: @autoclosure () -> String) throws(SnapshotError) {
        let n = Int(try readUInt32LE("\(what()) length"))
        try need(n, what())
        offset += n
    }
    mutating func readRaw<T: BitwiseCopyable>(_ type: T.Type, _ what: @autoclosure () -> String) throws(SnapshotError) -> T {
        try need(MemoryLayout<T>.size, what())
        defer { offset += MemoryLayout<T>.size }
        return bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
    }
    /// `count` values copied in one go (little-endian in the file, as on every supported host).
    mutating func readArray<T: BitwiseCopyable>(_ count: Int, _ what: @autoclosure () -> String) throws(SnapshotError) -> [T] {
        guard count > 0 else { return [] }
        let bytes = count * MemoryLayout<T>.stride
        try need(bytes, what())
        // Safe: need() checked that `bytes` > 0 bytes remain, so the buffer has a base address.
        let source = self.bytes.baseAddress! + offset
        defer { offset += bytes }
        return [T](unsafeUninitializedCapacity: count) { out, initialized in
            UnsafeMutableRawPointer(out.baseAddress!).copyMemory(from: source, byteCount: bytes)
            initialized = count
        }
    }

    mutating func expectEnd() throws(SnapshotError) {
        if remaining != 0 { throw fail("\(remaining) unexpected bytes at the end") }
    }
}
