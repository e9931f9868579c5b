/// One field of an Arrow schema, as far as Colonnade reads it.
struct ArrowField {
    var name: String
    var type: UInt8
    /// Int: bit width and signedness; FloatingPoint: 16, 32 or 64.
    var bitWidth = 0
    var isSigned = true
    /// Date: 0 days, 1 milliseconds. Timestamp: 0 s, 1 ms, 2 µs, 3 ns.
    var unit: Int16 = 0
    var timezone: String?
    /// Dictionary encoding: the dictionary id and the index type.
    var dictionaryID: Int64?
    var indexBitWidth = 32
    var indexIsSigned = true
    /// Decimal: precision and scale (bit width in `bitWidth`: 32, 64, 128 or 256).
    var precision = 0
    var scale = 0
    /// Union: 0 sparse, 1 dense.
    var unionMode: Int16 = 0
    /// The child fields of a nested type (list, struct, map, …), read to pass over their buffers.
    var children: [ArrowField] = []
    var childCount: Int { children.count }

    /// The deepest nesting of fields read (a schema is a tree; this bounds its walk).
    static let maximumDepth = 64

    /// A readable type name for messages.
    var typeDescription: String {
        var t = ArrowIPCFormat.typeName(type)
        switch ArrowIPCFormat.TypeID(rawValue: type) {
        case .int: t = (isSigned ? "int" : "uint") + "\(bitWidth)"
        case .floatingPoint: t = "float\(bitWidth)"
        case .decimal: t = "decimal\(bitWidth)(\(precision), \(scale))"
        case .timestamp:
            let units = ["s", "ms", "us", "ns"][Int(Swift.max(0, Swift.min(3, unit)))]
            t = "timestamp[" + units + (timezone.map { ", tz=" + $0 } ?? "") + "]"
        default: break
        }
        return dictionaryID == nil ? t : "dictionary<\(t)>"
    }

    var isString: Bool {
        let t = ArrowIPCFormat.TypeID(rawValue: type)
        return t == .utf8 || t == .largeUtf8 || t == .utf8View
    }

    var isNumeric: Bool {
        switch ArrowIPCFormat.TypeID(rawValue: type) {
        case .int: return bitWidth == 8 || bitWidth == 16 || bitWidth == 32 || bitWidth == 64
        case .floatingPoint: return bitWidth == 16 || bitWidth == 32 || bitWidth == 64
        case .decimal: return [32, 64, 128, 256].contains(bitWidth) && scale >= 0 && scale <= 76
        default: return false
        }
    }

    /// A binary or string view type (its data sits in variadic buffers).
    var isView: Bool {
        let t = ArrowIPCFormat.TypeID(rawValue: type)
        return dictionaryID == nil && (t == .utf8View || t == .binaryView)
    }

    var isDate: Bool {
        let t = ArrowIPCFormat.TypeID(rawValue: type)
        return t == .date || t == .timestamp
    }

    /// The element type a numeric field becomes: integers keep an integer type (wider when needed).
    var elementType: ElementType {
        if ArrowIPCFormat.TypeID(rawValue: type) == .floatingPoint { return bitWidth <= 32 ? .float32 : .float64 }
        if ArrowIPCFormat.TypeID(rawValue: type) == .decimal { return scale == 0 && precision <= 18 ? .int64 : .float64 }
        if bitWidth < 32 || (bitWidth == 32 && isSigned) { return .int32 }
        return .int64
    }

    /// Units of the date or timestamp per day.
    var unitsPerDay: Int64 {
        if ArrowIPCFormat.TypeID(rawValue: type) == .date { return unit == 0 ? 1 : 86_400_000 }
        switch unit {
        case 0: return 86_400
        case 1: return 86_400_000
        case 2: return 86_400_000_000
        default: return 86_400_000_000_000
        }
    }

    /// Bytes per date or timestamp value.
    var dateWidth: Int {
        ArrowIPCFormat.TypeID(rawValue: type) == .date && unit == 0 ? 4 : 8
    }

    /// Decodes a field table of a schema, with its children.
    init(_ t: FlatBufferTable) throws(InteropError) {
        var budget = Self.maximumFieldCount
        try self.init(t, depth: 0, budget: &budget)
    }

    /// The most fields (with every nested child) one field's tree may have: flatbuffers can point
    /// many children at one table, so a small schema could otherwise describe a huge tree.
    static let maximumFieldCount = 10_000

    /// Decodes a field table of a schema at `depth`, taking one from `budget` per field.
    init(_ t: FlatBufferTable, depth: Int, budget: inout Int) throws(InteropError) {
        name = try t.string(ArrowIPCFormat.Field.name) ?? ""
        type = try t.uint8(ArrowIPCFormat.Field.typeType)
        if let typeTable = try t.table(ArrowIPCFormat.Field.type) {
            switch ArrowIPCFormat.TypeID(rawValue: type) {
            case .int:
                bitWidth = Int(try typeTable.int32(0))
                isSigned = try typeTable.bool(1)
            case .floatingPoint:
                bitWidth = [16, 32, 64][Int(max(0, min(2, try typeTable.int16(0))))]
            case .date:
                unit = try typeTable.int16(0, default: 1)
            case .timestamp:
                unit = try typeTable.int16(0)
                timezone = try typeTable.string(1)
            case .decimal:
                precision = Int(try typeTable.int32(0))
                scale = Int(try typeTable.int32(1))
                bitWidth = Int(try typeTable.int32(2, default: 128))
            case .union:
                unionMode = try typeTable.int16(0)
            default:
                break
            }
        }
        if let d = try t.table(ArrowIPCFormat.Field.dictionary) {
            dictionaryID = try d.int64(ArrowIPCFormat.DictionaryEncoding.id)
            if let index = try d.table(ArrowIPCFormat.DictionaryEncoding.indexType) {
                indexBitWidth = Int(try index.int32(0))
                indexIsSigned = try index.bool(1)
            }
        }
        let childTables = try t.tables(ArrowIPCFormat.Field.children)
        budget -= 1
        if !childTables.isEmpty && (depth >= Self.maximumDepth || budget < childTables.count) {
            throw .unsupportedColumn(
                file: t.reader.file, column: name,
                type: "nested fields more than \(Self.maximumDepth) levels deep or more than \(Self.maximumFieldCount) in all")
        }
        for c in childTables { children.append(try ArrowField(c, depth: depth + 1, budget: &budget)) }
    }
}
