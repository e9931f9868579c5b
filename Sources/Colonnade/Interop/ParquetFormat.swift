/// Constants of the Parquet format (`parquet.thrift` in apache/parquet-format).
enum ParquetFormat {
    static let magic: [UInt8] = Array("PAR1".utf8)

    /// Physical types.
    enum PhysicalType: Int32 {
        case boolean = 0, int32 = 1, int64 = 2, int96 = 3, float = 4, double = 5, byteArray = 6, fixedLenByteArray = 7
    }
    enum Repetition: Int32 { case required = 0, optional = 1, repeated = 2 }
    enum Encoding: Int32 {
        case plain = 0, plainDictionary = 2, rle = 3, bitPacked = 4, deltaBinaryPacked = 5
        case deltaLengthByteArray = 6, deltaByteArray = 7, rleDictionary = 8, byteStreamSplit = 9
    }
    enum Codec: Int32 { case uncompressed = 0, snappy = 1, gzip = 2, lzo = 3, brotli = 4, lz4 = 5, zstd = 6, lz4Raw = 7 }
    enum PageType: Int32 { case dataPage = 0, indexPage = 1, dictionaryPage = 2, dataPageV2 = 3 }
    /// ConvertedType values used here.
    enum Converted {
        static let utf8: Int32 = 0, date: Int32 = 6, timestampMillis: Int32 = 9, timestampMicros: Int32 = 10
        static let uint8: Int32 = 11, uint16: Int32 = 12, uint32: Int32 = 13, uint64: Int32 = 14
        static let int8: Int32 = 15, int16: Int32 = 16, int32: Int32 = 17, int64: Int32 = 18
    }

    static func codecName(_ codec: Int32) -> String {
        switch codec {
        case 2: "GZIP"
        case 3: "LZO"
        case 4: "BROTLI"
        case 5: "LZ4 (Hadoop)"
        case 6: "ZSTD"
        case 7: "LZ4_RAW"
        default: "codec #\(codec)"
        }
    }
}
