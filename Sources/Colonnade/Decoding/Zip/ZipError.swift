/// Why a zip archive, or one of its members, could not be read.
///
/// Every case names the archive; cases about a member name it; `offset` is a byte offset in the
/// archive file. `description` is one line, for example:
///
///     export.zip: member 'PRICES.csv' (byte 58): compressed with bzip2 (method 12), which colonnade cannot read; use stored or deflate
public enum ZipError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No end-of-central-directory record: not a zip archive (or cut off before its end).
    case notAZip(archive: String, detail: String)
    /// The archive ends inside a structure.
    case truncated(archive: String, member: String?, offset: Int, expected: String)
    /// A structure that contradicts the format or itself (bad signature, sizes past the end, …).
    case malformed(archive: String, member: String?, offset: Int, detail: String)
    /// A compression method other than stored (0) or deflate (8).
    case unsupportedMethod(archive: String, member: String, offset: Int, method: Int)
    /// An encrypted member (traditional PKWARE, strong or WinZip AES encryption).
    case encrypted(archive: String, member: String, offset: Int)
    /// The member's compressed data is not a valid DEFLATE stream; `offset` is the archive byte.
    case corruptData(archive: String, member: String, offset: Int, reason: String)
    /// The member's CRC-32 differs from the one the archive records.
    case checksumMismatch(archive: String, member: String, expected: UInt32, actual: UInt32)
    /// The member inflated to a size other than the one the archive records.
    case sizeMismatch(archive: String, member: String, expected: Int, actual: Int)
    /// The member would inflate past the limit (`ZipLimits`): a zip bomb, or a member larger than
    /// allowed. `size` is its recorded uncompressed size, or the output reached when it was stopped.
    case tooLarge(archive: String, member: String, size: Int, compressedSize: Int, limit: Int)

    /// The archive's name.
    public var archive: String {
        switch self {
        case .notAZip(let a, _), .truncated(let a, _, _, _), .malformed(let a, _, _, _), .unsupportedMethod(let a, _, _, _),
            .encrypted(let a, _, _), .corruptData(let a, _, _, _), .checksumMismatch(let a, _, _, _),
            .sizeMismatch(let a, _, _, _), .tooLarge(let a, _, _, _, _):
            a
        }
    }

    /// The member's name, for errors about one member.
    public var member: String? {
        switch self {
        case .notAZip: nil
        case .truncated(_, let m, _, _), .malformed(_, let m, _, _): m
        case .unsupportedMethod(_, let m, _, _), .encrypted(_, let m, _), .corruptData(_, let m, _, _),
            .checksumMismatch(_, let m, _, _), .sizeMismatch(_, let m, _, _), .tooLarge(_, let m, _, _, _):
            m
        }
    }

    /// The name of a zip compression method (APPNOTE 4.4.5).
    public static func methodName(_ method: Int) -> String {
        switch method {
        case 0: "stored"
        case 1: "Shrink"
        case 2 ... 5: "Reduce"
        case 6: "Implode"
        case 8: "deflate"
        case 9: "Deflate64"
        case 10: "PKWARE DCL Implode"
        case 12: "bzip2"
        case 14: "LZMA"
        case 16: "IBM z/OS CMPSC"
        case 18: "IBM TERSE"
        case 19: "IBM LZ77"
        case 20, 93: "Zstandard"
        case 94: "MP3"
        case 95: "XZ"
        case 96: "JPEG"
        case 97: "WavPack"
        case 98: "PPMd"
        case 99: "WinZip AES encryption"
        default: "an unknown method"
        }
    }

    /// One line; control characters in names are escaped.
    public var description: String {
        var out = ""
        for scalar in message.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func place(_ archive: String, _ member: String?, _ offset: Int?) -> String {
        var text = archive
        if let member { text += ": member '\(member)'" }
        if let offset { text += " (byte \(offset))" }
        return text
    }

    private var message: String {
        switch self {
        case let .notAZip(archive, detail):
            "\(archive): not a zip archive: \(detail)"
        case let .truncated(archive, member, offset, expected):
            "\(Self.place(archive, member, offset)): the archive ends early, expected \(expected)"
        case let .malformed(archive, member, offset, detail):
            "\(Self.place(archive, member, offset)): malformed zip: \(detail)"
        case let .unsupportedMethod(archive, member, offset, method):
            "\(Self.place(archive, member, offset)): compressed with \(Self.methodName(method)) (method \(method)), "
                + "which colonnade cannot read; only stored and deflate members are supported"
        case let .encrypted(archive, member, offset):
            "\(Self.place(archive, member, offset)): the member is encrypted; colonnade does not decrypt zips"
        case let .corruptData(archive, member, offset, reason):
            "\(Self.place(archive, member, offset)): corrupt compressed data: \(reason)"
        case let .checksumMismatch(archive, member, expected, actual):
            "\(Self.place(archive, member, nil)): CRC-32 mismatch: the archive records \(Self.hex(expected)), "
                + "the data has \(Self.hex(actual))"
        case let .sizeMismatch(archive, member, expected, actual):
            "\(Self.place(archive, member, nil)): inflated to \(actual) bytes, the archive records \(expected)"
        case let .tooLarge(archive, member, size, compressedSize, limit):
            "\(Self.place(archive, member, nil)): would inflate to \(size) bytes or more from \(compressedSize) "
                + "compressed, past the limit of \(limit) bytes (a zip bomb, or a member larger than allowed)"
        }
    }

    private static func hex(_ v: UInt32) -> String {
        let digits = String(v, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
