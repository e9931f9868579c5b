/// One leaf column of a Parquet schema and what Colonnade makes of it.
struct ParquetLeaf {
    enum Role {
        case ticker
        /// Days from INT32 DATE (`unitsPerDay` 1) or INT64 timestamps (units per day).
        case date(unitsPerDay: Int64)
        /// A value column of `element` type, read from `physical` values (with a conversion for
        /// unsigned or narrow integers).
        case value(element: ElementType, unsignedSource: Bool)
    }

    var name: String
    var physical: ParquetFormat.PhysicalType
    var optional: Bool
    var role: Role

    var width: Int {
        switch physical {
        case .int32, .float: 4
        case .int64, .double: 8
        default: 0
        }
    }

    /// The leaf described by `element`, with its role decided by name and type.
    /// - Throws: `InteropError.unsupportedColumn` naming the column when it is neither.
    init(_ element: [Int16: ThriftValue], file: String) throws(InteropError) {
        let name = element[4]?.string ?? ""
        self.name = name
        let typeCode = element[1]?.int32 ?? -1
        guard let physical = ParquetFormat.PhysicalType(rawValue: typeCode) else {
            throw .unsupportedColumn(file: file, column: name, type: "Parquet physical type #\(typeCode)")
        }
        self.physical = physical
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
            if physical == .int64 {
                if let ts = logical?[8]?.fields, let unit = ts[2]?.fields {
                    if unit[1] != nil { role = .date(unitsPerDay: 86_400_000); return }
                    if unit[2] != nil { role = .date(unitsPerDay: 86_400_000_000); return }
                    if unit[3] != nil { role = .date(unitsPerDay: 86_400_000_000_000); return }
                }
                if converted == ParquetFormat.Converted.timestampMillis { role = .date(unitsPerDay: 86_400_000); return }
                if converted == ParquetFormat.Converted.timestampMicros { role = .date(unitsPerDay: 86_400_000_000); return }
            }
            throw unsupported("type \(typeName): a date column must be DATE or TIMESTAMP")
        }
        // Decimals, strings and booleans are not numbers Colonnade stores.
        if logical?[5] != nil || converted == 5 { throw unsupported("type DECIMAL, which Colonnade does not read yet") }
        var unsignedSource = false
        var element: ElementType
        switch physical {
        case .int32:
            element = .int32
            if let c = converted, c == ParquetFormat.Converted.uint32 { element = .int64; unsignedSource = true }
            if let i = logical?[10]?.fields, i[2]?.bool == false, (i[1]?.int ?? 32) == 32 { element = .int64; unsignedSource = true }
        case .int64:
            element = .int64
            if converted == ParquetFormat.Converted.uint64 || logical?[10]?.fields?[2]?.bool == false { unsignedSource = true }
            if logical?[8] != nil || converted == ParquetFormat.Converted.timestampMillis || converted == ParquetFormat.Converted.timestampMicros {
                throw unsupported("type TIMESTAMP: only the date column may be a timestamp")
            }
        case .float: element = .float32
        case .double: element = .float64
        default: throw unsupported("type \(typeName), which is not a ticker, a date or a number")
        }
        role = .value(element: element, unsignedSource: unsignedSource)
    }
}
