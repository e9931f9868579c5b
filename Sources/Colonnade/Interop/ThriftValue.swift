/// A value decoded from the Thrift compact protocol, kept generic so unknown fields are skipped
/// and known ones read by id (`parquet.thrift` field numbers).
indirect enum ThriftValue {
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case binary([UInt8])
    case list([ThriftValue])
    /// A struct's fields by id, and the absolute file offset where the struct starts.
    case structure([Int16: ThriftValue], offset: Int)
    case map

    var int: Int64? {
        if case .int(let v) = self { return v }
        return nil
    }
    var binary: [UInt8]? {
        if case .binary(let v) = self { return v }
        return nil
    }
    var string: String? { binary.map { String(decoding: $0, as: UTF8.self) } }
    var list: [ThriftValue]? {
        if case .list(let v) = self { return v }
        return nil
    }
    var fields: [Int16: ThriftValue]? {
        if case .structure(let v, _) = self { return v }
        return nil
    }
    /// Where a struct starts in the file (nil for other values).
    var offset: Int? {
        if case .structure(_, let o) = self { return o }
        return nil
    }
    /// The value as an `Int32`, nil when absent, not an integer or out of range.
    var int32: Int32? { int.flatMap { Int32(exactly: $0) } }
    var bool: Bool? {
        if case .bool(let v) = self { return v }
        return nil
    }
}

/// Reads the Thrift compact protocol from bytes, bounds-checked, nesting at most 24 deep.
struct ThriftCompactReader {
    let bytes: UnsafeRawBufferPointer
    var position: Int
    let file: String
    /// Where `bytes` starts in the file, for messages.
    let fileOffset: Int

    init(_ bytes: UnsafeRawBufferPointer, file: String, fileOffset: Int) {
        self.bytes = bytes
        self.position = 0
        self.file = file
        self.fileOffset = fileOffset
    }

    func bad(_ detail: String) -> InteropError {
        .malformed(file: file, offset: fileOffset + position, detail: "Thrift: " + detail)
    }

    mutating func byte() throws(InteropError) -> UInt8 {
        guard position < bytes.count else { throw .truncated(file: file, offset: fileOffset + position, needed: 1) }
        // Safe: checked above.
        let b = bytes[position]
        position += 1
        return b
    }

    mutating func varint() throws(InteropError) -> UInt64 {
        var v: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            if shift >= 64 { throw bad("varint longer than 10 bytes") }
            v |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return v }
            shift += 7
        }
    }

    mutating func zigzag() throws(InteropError) -> Int64 {
        let v = try varint()
        return Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1)
    }

    /// Reads one struct (up to its stop byte).
    mutating func readStruct(depth: Int = 0) throws(InteropError) -> [Int16: ThriftValue] {
        if depth > 24 { throw bad("nesting deeper than 24") }
        var fields: [Int16: ThriftValue] = [:]
        var last: Int16 = 0
        while true {
            let header = try byte()
            if header == 0 { return fields }
            let type = header & 0x0F
            let delta = header >> 4
            let id: Int16
            if delta != 0 {
                id = last &+ Int16(delta)
            } else {
                let raw = try zigzag()
                guard let v = Int16(exactly: raw) else { throw bad("field id \(raw)") }
                id = v
            }
            last = id
            switch type {
            case 1: fields[id] = .bool(true)
            case 2: fields[id] = .bool(false)
            default: fields[id] = try readValue(type: type, depth: depth + 1)
            }
        }
    }

    mutating func readValue(type: UInt8, depth: Int) throws(InteropError) -> ThriftValue {
        switch type {
        case 1, 2: return .bool(try byte() == 1)  // list elements: one byte
        case 3: return .int(Int64(Int8(bitPattern: try byte())))
        case 4, 5, 6: return .int(try zigzag())
        case 7:
            guard bytes.count - position >= 8 else { throw .truncated(file: file, offset: fileOffset + position, needed: 8) }
            // Safe: checked above.
            let v = bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self)
            position += 8
            return .double(Double(bitPattern: UInt64(littleEndian: v)))
        case 8:
            let n = try varint()
            guard n <= UInt64(bytes.count - position) else {
                throw .truncated(file: file, offset: fileOffset + position, needed: Int(clamping: n))
            }
            let v = Array(UnsafeRawBufferPointer(rebasing: bytes[position ..< position + Int(n)]))
            position += Int(n)
            return .binary(v)
        case 9, 10:
            if depth > 24 { throw bad("nesting deeper than 24") }
            let header = try byte()
            var count = Int(header >> 4)
            if count == 15 {
                let n = try varint()
                guard n <= UInt64(bytes.count - position) else { throw bad("list of \(n) elements in \(bytes.count - position) bytes") }
                count = Int(n)
            }
            let element = header & 0x0F
            var items: [ThriftValue] = []
            items.reserveCapacity(min(count, 1 << 16))
            for _ in 0 ..< count { items.append(try readValue(type: element, depth: depth + 1)) }
            return .list(items)
        case 11:
            // Maps do not occur in Parquet's metadata; skip one properly.
            let n = try varint()
            if n == 0 { return .map }
            guard n <= UInt64(bytes.count - position) else { throw bad("map of \(n) entries") }
            let types = try byte()
            for _ in 0 ..< n {
                _ = try readValue(type: types >> 4, depth: depth + 1)
                _ = try readValue(type: types & 0x0F, depth: depth + 1)
            }
            return .map
        case 12:
            let start = fileOffset + position
            return .structure(try readStruct(depth: depth + 1), offset: start)
        default:
            throw bad("unknown type \(type)")
        }
    }
}
