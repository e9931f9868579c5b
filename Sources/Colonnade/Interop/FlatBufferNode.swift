/// A flatbuffer object to serialize: a table, a string, or a vector.
///
/// Built as a tree and laid out front to back by `FlatBufferNode.serialized()`: the root offset,
/// then each table's vtable immediately before the table, then its children. Every `uoffset`
/// therefore points forward (as the format requires) and every vtable precedes its table.
/// Field slots follow the declaration order of the `.fbs` schema (a union takes two slots: its
/// type, then its value).
indirect enum FlatBufferNode {
    /// A table; `slots[i]` is field `i`, nil when absent.
    case table([FlatBufferSlot?])
    /// A UTF-8 string (length-prefixed and NUL-terminated).
    case string(String)
    /// A vector of tables.
    case tables([FlatBufferNode])
    /// A vector of fixed-size structs or scalars: their little-endian bytes, `count` elements,
    /// each aligned to `alignment`.
    case structs([UInt8], count: Int, alignment: Int)

    /// The serialized buffer with this node as its root table.
    func serialized() -> [UInt8] {
        var out = FlatBufferByteArray()
        out.appendUInt32LE(0)
        let root = out.place(self)
        out.setUInt32LE(UInt32(root), at: 0)
        return out.bytes
    }
}

/// One field of a flatbuffer table.
enum FlatBufferSlot {
    case bool(Bool)
    case uint8(UInt8)
    case int16(Int16)
    case int32(Int32)
    case int64(Int64)
    /// An offset to another object.
    case node(FlatBufferNode)

    var size: Int {
        switch self {
        case .bool, .uint8: 1
        case .int16: 2
        case .int32, .node: 4
        case .int64: 8
        }
    }
}

/// The growing byte array the serializer writes into.
struct FlatBufferByteArray {
    var bytes: [UInt8] = []

    mutating func align(_ alignment: Int) {
        while bytes.count % alignment != 0 { bytes.append(0) }
    }
    mutating func appendUInt16LE(_ v: UInt16) {
        bytes.append(UInt8(v & 0xFF))
        bytes.append(UInt8(v >> 8))
    }
    mutating func appendUInt32LE(_ v: UInt32) { for i in 0 ..< 4 { bytes.append(UInt8((v >> (8 * UInt32(i))) & 0xFF)) } }
    mutating func appendUInt64LE(_ v: UInt64) { for i in 0 ..< 8 { bytes.append(UInt8((v >> (8 * UInt64(i))) & 0xFF)) } }
    mutating func setUInt32LE(_ v: UInt32, at offset: Int) {
        for i in 0 ..< 4 { bytes[offset + i] = UInt8((v >> (8 * UInt32(i))) & 0xFF) }
    }
    mutating func setUInt16LE(_ v: UInt16, at offset: Int) {
        bytes[offset] = UInt8(v & 0xFF)
        bytes[offset + 1] = UInt8(v >> 8)
    }

    /// Writes `node` (and everything it refers to) and returns the position a `uoffset` refers to.
    mutating func place(_ node: FlatBufferNode) -> Int {
        switch node {
        case .string(let s):
            align(4)
            let at = bytes.count
            let utf8 = Array(s.utf8)
            appendUInt32LE(UInt32(utf8.count))
            bytes.append(contentsOf: utf8)
            bytes.append(0)
            return at
        case .structs(let raw, let count, let alignment):
            // The elements, after the 4-byte count, must be aligned.
            let a = max(4, alignment)
            while (bytes.count + 4) % a != 0 { bytes.append(0) }
            let at = bytes.count
            appendUInt32LE(UInt32(count))
            bytes.append(contentsOf: raw)
            return at
        case .tables(let children):
            align(4)
            let at = bytes.count
            appendUInt32LE(UInt32(children.count))
            let first = bytes.count
            for _ in children { appendUInt32LE(0) }
            for (i, child) in children.enumerated() {
                let slot = first + 4 * i
                let target = place(child)
                setUInt32LE(UInt32(target - slot), at: slot)
            }
            return at
        case .table(let slots):
            // Inline layout: the soffset at 0, then fields by descending size, each aligned.
            var offsets = [Int](repeating: 0, count: slots.count)
            var cursor = 4
            let present = slots.enumerated().compactMap { i, slot in slot.map { (index: i, slot: $0) } }
            let order = present.sorted { ($0.slot.size, -$0.index) > ($1.slot.size, -$1.index) }
            for (i, slot) in order {
                let size = slot.size
                cursor = (cursor + size - 1) / size * size
                offsets[i] = cursor
                cursor += size
            }
            let tableSize = (cursor + 3) / 4 * 4
            // The vtable, then the table at the next multiple of 8.
            align(2)
            let vtable = bytes.count
            appendUInt16LE(UInt16(4 + 2 * slots.count))
            appendUInt16LE(UInt16(tableSize))
            for i in slots.indices { appendUInt16LE(UInt16(slots[i] == nil ? 0 : offsets[i])) }
            align(8)
            let table = bytes.count
            bytes.append(contentsOf: [UInt8](repeating: 0, count: tableSize))
            let soffset = UInt32(truncatingIfNeeded: Int32(table - vtable))
            setUInt32LE(soffset, at: table)
            var children: [(at: Int, node: FlatBufferNode)] = []
            for (i, slot) in order {
                let at = table + offsets[i]
                switch slot {
                case .bool(let v): bytes[at] = v ? 1 : 0
                case .uint8(let v): bytes[at] = v
                case .int16(let v): setUInt16LE(UInt16(bitPattern: v), at: at)
                case .int32(let v): setUInt32LE(UInt32(bitPattern: v), at: at)
                case .int64(let v):
                    let u = UInt64(bitPattern: v)
                    setUInt32LE(UInt32(u & 0xFFFF_FFFF), at: at)
                    setUInt32LE(UInt32(u >> 32), at: at + 4)
                case .node(let child): children.append((at, child))
                }
            }
            for (at, child) in children {
                let target = place(child)
                setUInt32LE(UInt32(target - at), at: at)
            }
            return table
        }
    }
}
