/// One leaf column of a Parquet schema and what Colonnade makes of it.
struct ParquetLeaf {
    enum Role {
        case ticker
        /// Days from INT32 DATE (`unitsPerDay` 1), INT64 timestamps (units per day), or INT96
        /// timestamps (Spark's and Impala's: `unitsPerDay` 0; nanoseconds of the day, then the
        /// Julian day).
        case date(unitsPerDay: Int64)
        /// A value column of `element` type, read from `physical` values (with a conversion for
        /// unsigned or narrow integers).
        case value(element: ElementType, unsignedSource: Bool)
        /// A column that is not a quote (a string other than the ticker, a boolean, a nested
        /// column): not read; `type` says what it is, for the note.
        case skipped(type: String)
    }

    /// Whether the column is read at all.
    var isSkipped: Bool { if case .skipped = role { true } else { false } }

    var name: String
    var physical: ParquetFormat.PhysicalType
    var optional: Bool
    var role: Role

    /// Bytes per value as the table stores it (a converted column's output, else the physical
    /// width; 0 for byte arrays).
    var width: Int {
        switch conversion {
        case .float16?: return 4
        case .decimal?: return 8
        case nil: return sourceWidth
        }
    }

    /// Bytes per value in the file: FIXED_LEN_BYTE_ARRAY's type length, 0 for BYTE_ARRAY.
    var sourceWidth: Int {
        switch physical {
        case .fixedLenByteArray: typeLength
        case .byteArray, .boolean: 0
        case .int32, .float: 4
        case .int64, .double: 8
        case .int96: 12
        }
    }

    /// For a DECIMAL on INT32 or INT64: its scale (the value is the integer times 10^−scale).
    var decimalScale: Int?

    /// How FIXED_LEN_BYTE_ARRAY and BYTE_ARRAY values become numbers, as they are decoded.
    enum Conversion: Equatable {
        /// A big-endian two's-complement DECIMAL: Int64 when `integer` (scale 0, precision at
        /// most 18), else Float64 correctly rounded (`InteropDecimal`).
        case decimal(scale: Int, integer: Bool)
        /// IEEE half precision (Parquet's FLOAT16), widened exactly to Float32.
        case float16
    }
    var conversion: Conversion?
    /// FIXED_LEN_BYTE_ARRAY's length in bytes.
    var typeLength = 0

    /// The leaf described by `element` (inside the group `group`, when nested). A column that
    /// cannot be a ticker, a date or a number is skipped (with a note), unless it claims to be the
    /// ticker or the date, or the caller is `strict`.
    static func make(
        _ element: [Int16: ThriftValue], file: String, strict: Bool = false, nestedIn group: String? = nil
    ) throws(InteropError) -> ParquetLeaf {
        let name = (group.map { $0 + "." } ?? "") + (element[4]?.string ?? "")
        do throws(InteropError) {
            return try ParquetLeaf(name: name, element, file: file, nested: group != nil)
        } catch {
            guard !strict, case let .unsupportedColumn(_, _, type) = error else { throw error }
            let id = ColumnDescriptor.identifier(for: name)
            if group == nil && (id == "ticker" || id == "symbol" || id == "date") { throw error }
            return ParquetLeaf(
                skipped: name, physical: ParquetFormat.PhysicalType(rawValue: element[1]?.int32 ?? -1) ?? .byteArray, type: type)
        }
    }

    private init(skipped name: String, physical: ParquetFormat.PhysicalType, type: String) {
        self.name = name
        self.physical = physical
        self.optional = true
        self.role = .skipped(type: type)
    }

    private init(name: String, _ element: [Int16: ThriftValue], file: String, nested: Bool) throws(InteropError) {
        self.name = name
        if nested { throw .unsupportedColumn(file: file, column: name, type: "a nested column (inside a group)") }
        let typeCode = element[1]?.int32 ?? -1
        guard let physical = ParquetFormat.PhysicalType(rawValue: typeCode) else {
            throw .unsupportedColumn(file: file, column: name, type: "Parquet physical type #\(typeCode)")
        }
        self.physical = physical
        typeLength = Int(clamping: element[2]?.int ?? 0)
        let repetition = element[3]?.int ?? 0
        if repetition == 2 { throw .unsupportedColumn(file: file, column: name, type: "repeated (a list)") }
        self.optional = repetition == 1
        let converted = element[6]?.int32
        let logical = element[10]?.fields
        let id = ColumnDescriptor.identifier(for: name)
        func unsupported(_ detail: String) -> InteropError { .unsupportedColumn(file: file, column: name, type: detail) }
        let typeName = "\(physical)" + (converted.map { " (converted type #\($0))" } ?? "")

        if id == "ticker" || id == "symbol" {
            guard physical == .byteArray else { throw unsupported("type \(typeName): a ticker column must hold strings") }
            role = .ticker
            return
        }
        if id == "date" {
            if physical == .int32 && (converted == ParquetFormat.Converted.date || logical?[6] != nil) {
                role = .date(unitsPerDay: 1)
                return
            }
            if physical == .int96 {
                role = .date(unitsPerDay: 0)
                return
            }
            if physical == .int64 {
                if let ts = logical?[8]?.fields, let unit = ts[2]?.fields {
                    if unit[1] != nil {
                        role = .date(unitsPerDay: 86_400_000)
                        return
                    }
                    if unit[2] != nil {
                        role = .date(unitsPerDay: 86_400_000_000)
                        return
                    }
                    if unit[3] != nil {
                        role = .date(unitsPerDay: 86_400_000_000_000)
                        return
                    }
                }
                if converted == ParquetFormat.Converted.timestampMillis {
                    role = .date(unitsPerDay: 86_400_000)
                    return
                }
                if converted == ParquetFormat.Converted.timestampMicros {
                    role = .date(unitsPerDay: 86_400_000_000)
                    return
                }
            }
            throw unsupported("type \(typeName): a date column must be DATE or TIMESTAMP")
        }
        // Decimals, strings and booleans are not numbers Colonnade stores.
        if logical?[5] != nil || converted == 5 {
            // DECIMAL(precision, scale): the logical type's fields, else the schema element's.
            let scale = Int(clamping: logical?[5]?.fields?[1]?.int ?? element[7]?.int ?? 0)
            let precision = Int(clamping: logical?[5]?.fields?[2]?.int ?? element[8]?.int ?? 38)
            guard scale >= 0, scale <= 76 else { throw unsupported("type DECIMAL with scale \(scale)") }
            // Whole numbers that fit stay integers; others become Float64, correctly rounded.
            let integer = scale == 0 && precision <= 18
            switch physical {
            case .int32, .int64:
                decimalScale = scale
            case .fixedLenByteArray where typeLength >= 1 && typeLength <= InteropDecimal.maximumByteCount, .byteArray:
                conversion = .decimal(scale: scale, integer: integer)
            default:
                throw unsupported(
                    "type DECIMAL(\(precision), \(scale)) on \(physical)"
                        + (physical == .fixedLenByteArray
                            ? " of \(typeLength) bytes (Colonnade reads 1 to \(InteropDecimal.maximumByteCount))" : ""))
            }
            role = .value(element: integer ? .int64 : .float64, unsignedSource: false)
            return
        }
        // FLOAT16 (the logical type's field 15): two bytes, IEEE half precision.
        if logical?[15] != nil {
            guard physical == .fixedLenByteArray, typeLength == 2 else {
                throw unsupported("type FLOAT16 on \(physical) of \(typeLength) bytes")
            }
            conversion = .float16
            role = .value(element: .float32, unsignedSource: false)
            return
        }
        var unsignedSource = false
        var element: ElementType
        switch physical {
        case .int32:
            element = .int32
            if let c = converted, c == ParquetFormat.Converted.uint32 {
                element = .int64
                unsignedSource = true
            }
            if let i = logical?[10]?.fields, i[2]?.bool == false, (i[1]?.int ?? 32) == 32 {
                element = .int64
                unsignedSource = true
            }
        case .int64:
            element = .int64
            if converted == ParquetFormat.Converted.uint64 || logical?[10]?.fields?[2]?.bool == false { unsignedSource = true }
            if logical?[8] != nil || converted == ParquetFormat.Converted.timestampMillis
                || converted == ParquetFormat.Converted.timestampMicros
            {
                throw unsupported("type TIMESTAMP: only the date column may be a timestamp")
            }
        case .float: element = .float32
        case .double: element = .float64
        default: throw unsupported("type \(typeName), which is not a ticker, a date or a number")
        }
        role = .value(element: element, unsignedSource: unsignedSource)
    }
}
