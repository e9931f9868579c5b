/// An FSE table for one of the three sequence fields (RFC 8878 §3.1.1.3.2), each state's code
/// already turned into the value's baseline and its count of extra bits.
struct ZstdSequenceTable: Sendable {
    /// One state: the next state is `nextBase + read(bitCount)`; the field's value is
    /// `baseValue + read(extraBits)`.
    struct Entry {
        var baseValue: UInt32
        var nextBase: UInt16
        var bitCount: UInt8
        var extraBits: UInt8
    }

    /// Which field a table decodes.
    enum Field {
        case literalLength, matchLength, offset

        /// The largest code; an offset code `n` means `1 << n` plus `n` extra bits, and 31 is
        /// the largest that fits in 32 bits (offsets past the window are refused later anyway).
        var maximumSymbol: Int {
            switch self {
            case .literalLength: 35
            case .matchLength: 52
            case .offset: 31
            }
        }

        /// The largest accuracy log a table description may declare.
        var maximumAccuracyLog: Int { self == .offset ? 8 : 9 }

        /// The baseline and extra bit count of `code`.
        func code(_ code: Int) -> (base: UInt32, bits: UInt8) {
            switch self {
            case .literalLength: (Self.literalLengthBase[code], Self.literalLengthBits[code])
            case .matchLength: (Self.matchLengthBase[code], Self.matchLengthBits[code])
            case .offset: (UInt32(1) << UInt32(code), UInt8(code))
            }
        }

        static let literalLengthBase: [UInt32] = [
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
            16, 18, 20, 22, 24, 28, 32, 40, 48, 64, 128, 256, 512, 1024, 2048, 4096,
            8192, 16384, 32768, 65536,
        ]
        static let literalLengthBits: [UInt8] = [
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12,
            13, 14, 15, 16,
        ]
        static let matchLengthBase: [UInt32] = [
            3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
            19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34,
            35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259, 515, 1027, 2051,
            4099, 8195, 16387, 32771, 65539,
        ]
        static let matchLengthBits: [UInt8] = [
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11,
            12, 13, 14, 15, 16,
        ]
    }

    /// Owns the entries, so the decoding loop reads them through a plain pointer. Written only in
    /// `init`, hence safe to share between threads (the predefined tables are shared).
    final class Storage: @unchecked Sendable {
        let entries: UnsafeMutablePointer<Entry>
        let count: Int

        init(_ values: [Entry]) {
            count = values.count
            entries = .allocate(capacity: values.count)
            entries.initialize(from: values, count: values.count)
        }

        deinit { entries.deallocate() }
    }

    /// `1 << accuracyLog` entries.
    private let storage: Storage
    /// The entries, valid while this table (or a copy) exists.
    var entries: UnsafePointer<Entry> { UnsafePointer(storage.entries) }
    /// log2 of the table's size (0 for an RLE table).
    var accuracyLog: Int

    /// The sequence table of an FSE table whose symbols are `field`'s codes.
    /// - Precondition: every symbol is at most `field.maximumSymbol`.
    init(_ fse: ZstdFSETable, field: Field) {
        storage = Storage(
            fse.entries.map { e in
                let (base, bits) = field.code(Int(e.symbol))
                return Entry(baseValue: base, nextBase: e.baseline, bitCount: e.bitCount, extraBits: bits)
            })
        accuracyLog = fse.accuracyLog
    }

    /// The one-state table of RLE mode: every sequence has code `symbol`.
    init(rle symbol: Int, field: Field) {
        let (base, bits) = field.code(symbol)
        storage = Storage([Entry(baseValue: base, nextBase: 0, bitCount: 0, extraBits: bits)])
        accuracyLog = 0
    }

    /// The tables of Predefined mode (RFC 8878 §3.1.1.3.2.2).
    static let predefinedLiteralLengths = predefined(
        [4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1],
        accuracyLog: 6, field: .literalLength)
    static let predefinedMatchLengths = predefined(
        [
            1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
            1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1,
        ],
        accuracyLog: 6, field: .matchLength)
    static let predefinedOffsets = predefined(
        [1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1],
        accuracyLog: 5, field: .offset)

    private static func predefined(_ counts: [Int16], accuracyLog: Int, field: Field) -> ZstdSequenceTable {
        do {
            return ZstdSequenceTable(try ZstdFSETable(counts: counts, accuracyLog: accuracyLog, offset: 0), field: field)
        } catch {
            preconditionFailure("the predefined \(field) distribution does not fill its table: \(error)")
        }
    }
}
