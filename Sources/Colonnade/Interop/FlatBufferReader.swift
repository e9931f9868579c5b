/// Bounds-checked reading of one flatbuffer (a root table and what it refers to).
///
/// Every access checks its bytes lie inside the buffer and throws `InteropError.malformed` or
/// `.truncated` with the absolute file offset otherwise, so a hostile buffer can never make the
/// reader touch memory outside it. Nesting is bounded by the callers (Arrow's types are flat).
struct FlatBufferReader {
    let bytes: UnsafeRawBufferPointer
    /// The buffer's offset in the file, for messages.
    let fileOffset: Int
    let file: String

    /// The root table.
    func root() throws(InteropError) -> FlatBufferTable {
        try table(at: 0, indirect: true)
    }

    /// Checks `count` bytes at `offset` lie in the buffer. Callers reach `offset` through
    /// ``target(of:)``, which refuses offsets outside, so the error names a byte of the input.
    func need(_ offset: Int, _ count: Int) throws(InteropError) {
        if offset < 0 || count < 0 || offset > bytes.count || bytes.count - offset < count {
            throw .truncated(file: file, offset: fileOffset + min(max(offset, 0), bytes.count), needed: count)
        }
    }

    /// Where the uoffset stored at `pointer` points: refused, at the pointer's own offset, when
    /// that lies outside the buffer (a lying offset, not a short input).
    func target(of pointer: Int) throws(InteropError) -> Int {
        let value = Int(try uint32(at: pointer))
        let target = pointer + value
        guard target < bytes.count else {
            throw .malformed(
                file: file, offset: fileOffset + pointer,
                detail: "flatbuffer offset \(value) points past the end of its \(bytes.count)-byte buffer")
        }
        return target
    }

    func uint8(at o: Int) throws(InteropError) -> UInt8 {
        try need(o, 1)
        // Safe: checked above.
        return bytes[o]
    }
    func uint16(at o: Int) throws(InteropError) -> UInt16 {
        try need(o, 2)
        // Safe: checked above.
        return UInt16(bytes[o]) | UInt16(bytes[o + 1]) << 8
    }
    func uint32(at o: Int) throws(InteropError) -> UInt32 {
        try need(o, 4)
        var v: UInt32 = 0
        // Safe: checked above.
        for i in 0 ..< 4 { v |= UInt32(bytes[o + i]) << (8 * UInt32(i)) }
        return v
    }
    func uint64(at o: Int) throws(InteropError) -> UInt64 {
        try need(o, 8)
        var v: UInt64 = 0
        // Safe: checked above.
        for i in 0 ..< 8 { v |= UInt64(bytes[o + i]) << (8 * UInt64(i)) }
        return v
    }

    /// The table at `offset` (or, when `indirect`, at the uoffset stored at `offset`).
    func table(at offset: Int, indirect: Bool = false) throws(InteropError) -> FlatBufferTable {
        let position = indirect ? try target(of: offset) : offset
        let soffset = Int(Int32(bitPattern: try uint32(at: position)))
        let vtable = position - soffset
        guard vtable >= 0, vtable < bytes.count else {
            throw .malformed(
                file: file, offset: fileOffset + position,
                detail: "flatbuffer vtable offset \(soffset) points outside its \(bytes.count)-byte buffer")
        }
        let vtableSize = Int(try uint16(at: vtable))
        if vtableSize < 4 || vtableSize % 2 != 0 {
            throw .malformed(file: file, offset: fileOffset + vtable, detail: "flatbuffer vtable of \(vtableSize) bytes")
        }
        try need(vtable, vtableSize)
        let tableSize = Int(try uint16(at: vtable + 2))
        try need(position, tableSize)
        return FlatBufferTable(reader: self, position: position, vtable: vtable, vtableSize: vtableSize, tableSize: tableSize)
    }
}

/// One table inside a `FlatBufferReader`'s buffer.
struct FlatBufferTable {
    let reader: FlatBufferReader
    let position: Int
    let vtable: Int
    let vtableSize: Int
    let tableSize: Int

    /// The position of field `slot`, or nil when absent.
    func fieldPosition(_ slot: Int) throws(InteropError) -> Int? {
        let entry = 4 + 2 * slot
        guard entry + 2 <= vtableSize else { return nil }
        let o = Int(try reader.uint16(at: vtable + entry))
        if o == 0 { return nil }
        if o + 1 > tableSize {
            throw .malformed(
                file: reader.file, offset: reader.fileOffset + vtable + entry,
                detail: "flatbuffer field offset \(o) past its table of \(tableSize) bytes")
        }
        return position + o
    }

    func bool(_ slot: Int, default value: Bool = false) throws(InteropError) -> Bool {
        guard let p = try fieldPosition(slot) else { return value }
        return try reader.uint8(at: p) != 0
    }
    func uint8(_ slot: Int, default value: UInt8 = 0) throws(InteropError) -> UInt8 {
        guard let p = try fieldPosition(slot) else { return value }
        return try reader.uint8(at: p)
    }
    func int16(_ slot: Int, default value: Int16 = 0) throws(InteropError) -> Int16 {
        guard let p = try fieldPosition(slot) else { return value }
        return Int16(bitPattern: try reader.uint16(at: p))
    }
    func int32(_ slot: Int, default value: Int32 = 0) throws(InteropError) -> Int32 {
        guard let p = try fieldPosition(slot) else { return value }
        return Int32(bitPattern: try reader.uint32(at: p))
    }
    func int64(_ slot: Int, default value: Int64 = 0) throws(InteropError) -> Int64 {
        guard let p = try fieldPosition(slot) else { return value }
        return Int64(bitPattern: try reader.uint64(at: p))
    }

    /// The table field `slot` refers to, or nil.
    func table(_ slot: Int) throws(InteropError) -> FlatBufferTable? {
        guard let p = try fieldPosition(slot) else { return nil }
        return try reader.table(at: p, indirect: true)
    }

    /// The string field `slot` refers to, or nil.
    func string(_ slot: Int) throws(InteropError) -> String? {
        guard let p = try fieldPosition(slot) else { return nil }
        let s = try reader.target(of: p)
        let count = Int(try reader.uint32(at: s))
        try reader.need(s + 4, count)
        return String(decoding: UnsafeRawBufferPointer(rebasing: reader.bytes[(s + 4) ..< (s + 4 + count)]), as: UTF8.self)
    }

    /// The vector field `slot` refers to: the position of its first element and its count.
    func vector(_ slot: Int, elementSize: Int) throws(InteropError) -> (start: Int, count: Int)? {
        guard let p = try fieldPosition(slot) else { return nil }
        let v = try reader.target(of: p)
        let count = Int(try reader.uint32(at: v))
        let (total, overflow) = count.multipliedReportingOverflow(by: elementSize)
        if overflow { throw .malformed(file: reader.file, offset: reader.fileOffset + v, detail: "flatbuffer vector of \(count) elements") }
        try reader.need(v + 4, total)
        return (v + 4, count)
    }

    /// The tables of the vector field `slot` (empty when absent).
    func tables(_ slot: Int) throws(InteropError) -> [FlatBufferTable] {
        guard let (start, count) = try vector(slot, elementSize: 4) else { return [] }
        var out: [FlatBufferTable] = []
        out.reserveCapacity(count)
        for i in 0 ..< count { out.append(try reader.table(at: start + 4 * i, indirect: true)) }
        return out
    }
}
