/// Writes the Thrift compact protocol (the encoding of Parquet's footer and page headers).
///
/// Fields are written in ascending id order inside `structBegin`/`structEnd`; ids are delta-encoded
/// against the previous field of the same struct. Integers are zigzag varints; lists carry their
/// element type and size in one byte when shorter than 15.
struct ThriftCompactWriter {
    /// Compact-protocol type codes.
    enum TypeCode: UInt8 {
        case boolTrue = 1, boolFalse = 2, byte = 3, i16 = 4, i32 = 5, i64 = 6, double = 7, binary = 8
        case list = 9, set = 10, map = 11, structure = 12
    }

    var bytes: [UInt8] = []
    private var lastFieldIDs: [Int16] = [0]

    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func zigzag(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    mutating func fieldHeader(_ id: Int16, _ type: TypeCode) {
        let delta = Int(id) - Int(lastFieldIDs[lastFieldIDs.count - 1])
        if delta > 0 && delta <= 15 {
            bytes.append(UInt8(delta) << 4 | type.rawValue)
        } else {
            bytes.append(type.rawValue)
            zigzag(Int64(id))
        }
        lastFieldIDs[lastFieldIDs.count - 1] = id
    }

    mutating func i32(_ id: Int16, _ value: Int32) {
        fieldHeader(id, .i32)
        zigzag(Int64(value))
    }
    mutating func i64(_ id: Int16, _ value: Int64) {
        fieldHeader(id, .i64)
        zigzag(value)
    }
    mutating func bool(_ id: Int16, _ value: Bool) { fieldHeader(id, value ? .boolTrue : .boolFalse) }
    mutating func binary(_ id: Int16, _ value: [UInt8]) {
        fieldHeader(id, .binary)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }
    mutating func string(_ id: Int16, _ value: String) { binary(id, Array(value.utf8)) }

    /// A binary or string element of a list.
    mutating func binaryElement(_ value: [UInt8]) {
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// Opens a struct-valued field (`id`), or with nil a struct element of a list.
    mutating func structBegin(_ id: Int16?) {
        if let id { fieldHeader(id, .structure) }
        lastFieldIDs.append(0)
    }

    /// Closes the innermost struct (writes its stop byte).
    mutating func structEnd() {
        bytes.append(0)
        lastFieldIDs.removeLast()
    }

    /// A list-valued field's header: `count` elements of `element` type follow.
    mutating func listBegin(_ id: Int16, _ element: TypeCode, count: Int) {
        fieldHeader(id, .list)
        if count < 15 {
            bytes.append(UInt8(count) << 4 | element.rawValue)
        } else {
            bytes.append(0xF0 | element.rawValue)
            varint(UInt64(count))
        }
    }

    /// A list of i32 values (enums) as field `id`.
    mutating func i32List(_ id: Int16, _ values: [Int32]) {
        listBegin(id, .i32, count: values.count)
        for v in values { zigzag(Int64(v)) }
    }
}
