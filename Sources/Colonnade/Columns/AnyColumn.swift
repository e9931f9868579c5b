/// A column of any element type.
public enum AnyColumn: Sendable, Equatable {
    case int32(Column<Int32>)
    case int64(Column<Int64>)
    case float32(Column<Float>)
    case float64(Column<Double>)

    /// Wraps a typed column.
    public init<T: ColumnElement>(_ column: Column<T>) {
        switch column {
        case let c as Column<Int32>: self = .int32(c)
        case let c as Column<Int64>: self = .int64(c)
        case let c as Column<Float>: self = .float32(c)
        case let c as Column<Double>: self = .float64(c)
        default: preconditionFailure("unsupported column element type \(T.self)")
        }
    }

    /// An empty column of `type`.
    public init(emptyOf type: ElementType) {
        switch type {
        case .int32: self = .int32(Column())
        case .int64: self = .int64(Column())
        case .float32: self = .float32(Column())
        case .float64: self = .float64(Column())
        }
    }

    /// The element type.
    public var elementType: ElementType {
        switch self {
        case .int32: .int32
        case .int64: .int64
        case .float32: .float32
        case .float64: .float64
        }
    }

    /// The number of rows.
    public var count: Int { visit(CountVisitor()) }

    /// Whether row `row` is null.
    public func isNull(_ row: Int) -> Bool {
        switch self {
        case .int32(let c): c.isNull(row)
        case .int64(let c): c.isNull(row)
        case .float32(let c): c.isNull(row)
        case .float64(let c): c.isNull(row)
        }
    }

    /// The validity bitmap, nil when no row is null.
    public var validity: Bitmask? {
        switch self {
        case .int32(let c): c.validity
        case .int64(let c): c.validity
        case .float32(let c): c.validity
        case .float64(let c): c.validity
        }
    }

    /// The value in `row` as a Double (exact except Int64 beyond 2^53), nil for a null.
    public func doubleValue(at row: Int) -> Double? {
        switch self {
        case .int32(let c): c.value(at: row).map(Double.init)
        case .int64(let c): c.value(at: row).map(Double.init)
        case .float32(let c): c.value(at: row).map(Double.init)
        case .float64(let c): c.value(at: row)
        }
    }

    /// Applies a generic operation to the typed column.
    @inlinable
    public func visit<V: ColumnVisitor>(_ visitor: V) -> V.Result {
        switch self {
        case .int32(let c): visitor.visit(c)
        case .int64(let c): visitor.visit(c)
        case .float32(let c): visitor.visit(c)
        case .float64(let c): visitor.visit(c)
        }
    }

    /// Applies a generic transformation to the typed column.
    public func map<M: ColumnMapper>(_ mapper: M) -> AnyColumn {
        switch self {
        case .int32(let c): AnyColumn(mapper.map(c))
        case .int64(let c): AnyColumn(mapper.map(c))
        case .float32(let c): AnyColumn(mapper.map(c))
        case .float64(let c): AnyColumn(mapper.map(c))
        }
    }

    /// The column converted to Float64 (exact for every type but Int64 beyond 2^53).
    public func convertedToFloat64() -> Column<Double> {
        if case .float64(let c) = self { return c }
        var out = Column<Double>()
        out.reserveCapacity(count)
        for r in 0 ..< count { out.append(doubleValue(at: r)) }
        return out
    }

    /// Computes block summaries.
    public mutating func computeSummaries() {
        switch self {
        case .int32(var c):
            c.computeSummaries()
            self = .int32(c)
        case .int64(var c):
            c.computeSummaries()
            self = .int64(c)
        case .float32(var c):
            c.computeSummaries()
            self = .float32(c)
        case .float64(var c):
            c.computeSummaries()
            self = .float64(c)
        }
    }

    /// `Column.resolvePendingValues()`.
    package func resolvePendingValues() {
        switch self {
        case .int32(let c): c.resolvePendingValues()
        case .int64(let c): c.resolvePendingValues()
        case .float32(let c): c.resolvePendingValues()
        case .float64(let c): c.resolvePendingValues()
        }
    }

    /// The plan of a deferred merge this column can still be read through unmerged
    /// (`Column.unmergedStitch`), or nil.
    var unmergedStitchPlan: StitchPlan? {
        switch self {
        case .int32(let c): c.unmergedStitch?.plan
        case .int64(let c): c.unmergedStitch?.plan
        case .float32(let c): c.unmergedStitch?.plan
        case .float64(let c): c.unmergedStitch?.plan
        }
    }

    /// Source `source`'s column of a deferred merge whose stitch was found (`unmergedStitchPlan`
    /// was not nil for this copy; another copy merging it since leaves the stitch in place).
    func stitchSource(_ source: Int) -> AnyColumn {
        func take<T: ColumnElement>(_ c: Column<T>) -> Column<T> {
            guard let stitch = c.stitch else { preconditionFailure("not a column of a deferred merge") }
            return stitch.sources[source]
        }
        switch self {
        case .int32(let c): return .int32(take(c))
        case .int64(let c): return .int64(take(c))
        case .float32(let c): return .float32(take(c))
        case .float64(let c): return .float64(take(c))
        }
    }

    /// Whether block summaries are present.
    public var hasSummaries: Bool {
        switch self {
        case .int32(let c): c.hasSummaries
        case .int64(let c): c.hasSummaries
        case .float32(let c): c.hasSummaries
        case .float64(let c): c.hasSummaries
        }
    }
}

/// A generic operation over a typed column (Swift has no generic closures).
public protocol ColumnVisitor {
    /// What the operation returns.
    associatedtype Result
    /// Performs the operation on a typed column.
    func visit<T: ColumnElement>(_ column: Column<T>) -> Result
}

/// A generic column-to-column transformation.
public protocol ColumnMapper {
    /// Returns a column of the same element type.
    func map<T: ColumnElement>(_ column: Column<T>) -> Column<T>
}

private struct CountVisitor: ColumnVisitor {
    func visit<T: ColumnElement>(_ column: Column<T>) -> Int { column.count }
}
