/// The physical type of a column's elements.
public enum ElementType: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// 32-bit signed integer; also days since 1970-01-01 for dates.
    case int32 = 1
    /// 64-bit signed integer.
    case int64 = 2
    /// IEEE 754 binary32.
    case float32 = 3
    /// IEEE 754 binary64.
    case float64 = 4

    /// Bytes per element.
    public var byteWidth: Int {
        switch self {
        case .int32, .float32: 4
        case .int64, .float64: 8
        }
    }

    /// A short lower-case name: `int32`, `int64`, `float32`, `float64`.
    public var description: String {
        switch self {
        case .int32: "int32"
        case .int64: "int64"
        case .float32: "float32"
        case .float64: "float64"
        }
    }
}

/// A type that can be stored in a `Column`: a fixed-width integer or floating-point number.
///
/// Exactly `Int32`, `Int64`, `Float` and `Double` conform (one per `ElementType`; do not add
/// conformances). Each has its hot kernels concretely (see `RangeKernels.swift`): a generic `SIMD`
/// comparison is about 30× slower than the concrete scalar loop the optimizer vectorizes
/// (docs/ARCHITECTURE.md, "Kernels"), so generic code dispatches there and never loops itself.
public protocol ColumnElement: BitwiseCopyable, Comparable, Sendable, CustomStringConvertible {
    /// The element type tag stored in schemas and snapshots.
    static var elementType: ElementType { get }
    /// The value stored in the data slot of a null (never read as a value).
    static var nullPlaceholder: Self { get }
    /// Whether the value is a floating-point NaN (always false for integers).
    var isNaNValue: Bool { get }
    /// The value as a Double (exact for Int32, Float32 and Float64; rounded for large Int64).
    var doubleValue: Double { get }
    /// Converts a Double to this type if it is exactly representable, else nil.
    init?(exactlyDouble value: Double)

    /// The typed column inside `column` if its element type is this one, else nil.
    static func unwrap(_ column: AnyColumn) -> Column<Self>?
}

extension Int32: ColumnElement {
    /// The typed column if `column` holds this element type.
    public static func unwrap(_ column: AnyColumn) -> Column<Int32>? {
        if case .int32(let c) = column { return c }
        return nil
    }
    /// The element type tag.
    @inlinable public static var elementType: ElementType { .int32 }
    /// Zero: what a null row holds in its data slot.
    public static var nullPlaceholder: Int32 { 0 }
    /// Whether the value is NaN.
    @inlinable public var isNaNValue: Bool { false }
    /// The value as a Double.
    @inlinable public var doubleValue: Double { Double(self) }
    /// The value if `value` is exactly representable.
    public init?(exactlyDouble value: Double) { self.init(exactly: value) }
}

extension Int64: ColumnElement {
    /// The typed column if `column` holds this element type.
    public static func unwrap(_ column: AnyColumn) -> Column<Int64>? {
        if case .int64(let c) = column { return c }
        return nil
    }
    /// The element type tag.
    @inlinable public static var elementType: ElementType { .int64 }
    /// Zero: what a null row holds in its data slot.
    public static var nullPlaceholder: Int64 { 0 }
    /// Whether the value is NaN.
    @inlinable public var isNaNValue: Bool { false }
    /// The value as a Double.
    @inlinable public var doubleValue: Double { Double(self) }
    /// The value if `value` is exactly representable.
    public init?(exactlyDouble value: Double) { self.init(exactly: value) }
}

extension Float: ColumnElement {
    /// The typed column if `column` holds this element type.
    public static func unwrap(_ column: AnyColumn) -> Column<Float>? {
        if case .float32(let c) = column { return c }
        return nil
    }
    /// The element type tag.
    @inlinable public static var elementType: ElementType { .float32 }
    /// Zero: what a null row holds in its data slot.
    public static var nullPlaceholder: Float { 0 }
    /// Whether the value is NaN.
    @inlinable public var isNaNValue: Bool { isNaN }
    /// The value as a Double.
    @inlinable public var doubleValue: Double { Double(self) }
    /// The value if `value` is exactly representable.
    public init?(exactlyDouble value: Double) {
        if value.isNaN {
            self = .nan
            return
        }
        self.init(exactly: value)
    }
}

extension Double: ColumnElement {
    /// The typed column if `column` holds this element type.
    public static func unwrap(_ column: AnyColumn) -> Column<Double>? {
        if case .float64(let c) = column { return c }
        return nil
    }
    /// The element type tag.
    @inlinable public static var elementType: ElementType { .float64 }
    /// Zero: what a null row holds in its data slot.
    public static var nullPlaceholder: Double { 0 }
    /// Whether the value is NaN.
    @inlinable public var isNaNValue: Bool { isNaN }
    /// The value as a Double.
    @inlinable public var doubleValue: Double { self }
    /// The value if `value` is exactly representable.
    public init?(exactlyDouble value: Double) { self = value }
}
