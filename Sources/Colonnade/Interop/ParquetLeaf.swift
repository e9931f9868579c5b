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

    var width: Int {
        switch physical {
        case .int32, .float: 4
        case .int64, .double: 8
        case .int96: 12
        default: 0
        }
    }

    /// For a DECIMAL on INT32 or INT64: its scale (the value is the integer times 10^−scale).
    var decimalScale: Int?

    /// The leaf described by `element`, with its role decided by name and type.
    /// - Throws: `InteropError.unsupportedColumn` naming the column when it is neither.
    /// The leaf described by `element` (inside the group `group`, when nested). A column that
    /// cannot be a ticker, a date or a number is skipped (with a note), unless it claims to be the
    /// ticker or the date, or the caller is `strict`.
    static func make(_ element: [Int16: ThriftValue], file: String, strict: Bool = false, nestedIn group: String? = nil) throws(InteropError) -> ParquetLeaf {
        let name = (group.map { $0 + "." } ?? "") + (element[4]?.string ?? "")
        do throws(InteropError) {
            return try ParquetLeaf(name: name, element, file: file, nested: group != nil)
        } catch {
            guard !strict, case let .unsupportedColumn(_, _, type) = error else { throw error }
            let id = ColumnDescriptor.identifier(for: name)
            if group == nil && (id == "ticker" || id == "symbol" || id == "date") { throw error }
            return ParquetLeaf(skipped: name, physical: ParquetFormat.PhysicalType(rawValue: element[1]?.int32 ?? -1) ?? .byteArray, type: type)
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
        if logical?[5] != nil || converted == 5 {
            // DECIMAL(precision, scale): the logical type's fields, else the schema element's.
            let scale = Int(clamping: logical?[5]?.fields?[1]?.int ?? element[7]?.int ?? 0)
            let precision = Int(clamping: logical?[5]?.fields?[2]?.int ?? element[8]?.int ?? 38)
            guard physical == .int32 || physical == .int64 else {
                throw unsupported("type DECIMAL(\(precision), \(scale)) on \(physical), which Colonnade does not read yet (it reads DECIMAL on INT32 and INT64)")
            }
            guard scale >= 0, scale <= 38 else { throw unsupported("type DECIMAL with scale \(scale)") }
            // Whole numbers that fit stay integers; others become Float64, correctly rounded.
            decimalScale = scale
            role = .value(element: scale == 0 && precision <= 18 ? .int64 : .float64, unsignedSource: false)
            return
        }
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
