/// Constants of the Arrow IPC format (`format/Schema.fbs`, `Message.fbs`, `File.fbs` in apache/arrow).
/// Field numbers are the slot numbers of each flatbuffer table.
enum ArrowIPCFormat {
    /// `ARROW1` followed by two bytes of padding opens and (without the padding) closes a file.
    static let magic: [UInt8] = Array("ARROW1".utf8)
    /// The continuation marker before every encapsulated message.
    static let continuation: UInt32 = 0xFFFF_FFFF
    /// MetadataVersion.V5.
    static let metadataVersion: Int16 = 4

    /// `MessageHeader` union members.
    enum Header: UInt8 { case schema = 1, dictionaryBatch = 2, recordBatch = 3 }

    /// `Type` union members this code writes or reads.
    enum TypeID: UInt8 {
        case null = 1, int = 2, floatingPoint = 3, binary = 4, utf8 = 5, bool = 6, decimal = 7, date = 8, time = 9
        case timestamp = 10, interval = 11, list = 12, structType = 13, union = 14, fixedSizeBinary = 15
        case fixedSizeList = 16, map = 17, duration = 18, largeBinary = 19, largeUtf8 = 20, largeList = 21
        case runEndEncoded = 22, binaryView = 23, utf8View = 24, listView = 25, largeListView = 26
    }

    // Slots of the tables.
    enum Message { static let version = 0, headerType = 1, header = 2, bodyLength = 3, customMetadata = 4 }
    enum Schema { static let endianness = 0, fields = 1, customMetadata = 2, features = 3 }
    enum Field { static let name = 0, nullable = 1, typeType = 2, type = 3, dictionary = 4, children = 5, customMetadata = 6 }
    enum DictionaryEncoding { static let id = 0, indexType = 1, isOrdered = 2, kind = 3 }
    enum KeyValue { static let key = 0, value = 1 }
    enum RecordBatch { static let length = 0, nodes = 1, buffers = 2, compression = 3, variadicBufferCounts = 4 }
    enum DictionaryBatch { static let id = 0, data = 1, isDelta = 2 }
    enum Footer { static let version = 0, schema = 1, dictionaries = 2, recordBatches = 3, customMetadata = 4 }
    enum BodyCompression { static let codec = 0, method = 1 }

    /// Name of a `Type` union member, for messages.
    static func typeName(_ id: UInt8) -> String {
        guard let t = TypeID(rawValue: id) else { return "Arrow type #\(id)" }
        return "\(t)"
    }
}
