import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A fresh empty directory under /tmp, removed by `remove()`.
struct ScratchDirectory {
    let path: String

    init(_ label: String = #function) {
        let name = label.filter { $0.isLetter || $0.isNumber }
        path = NSTemporaryDirectory() + "/colonnade-\(name)-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

func readBytes(_ path: String) -> [UInt8] { [UInt8](FileManager.default.contents(atPath: path) ?? Data()) }

func writeBytes(_ bytes: [UInt8], to path: String) {
    _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
}

/// Whether two byte arrays are equal (memcmp: fast in debug builds too).
func sameBytes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    a.count == b.count
        && (a.isEmpty || a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in memcmp(pa.baseAddress!, pb.baseAddress!, a.count) == 0 } })
}

/// The name of an error's case, so tests assert the case and not just "throws".
func caseName(_ error: SnapshotError?) -> String {
    guard let error else { return "no error" }
    switch error {
    case .noSuchFile: return "noSuchFile"
    case .permissionDenied: return "permissionDenied"
    case .isADirectory: return "isADirectory"
    case .ioError: return "ioError"
    case .notASnapshot: return "notASnapshot"
    case .unsupportedVersion: return "unsupportedVersion"
    case .truncated: return "truncated"
    case .checksumMismatch: return "checksumMismatch"
    case .offsetOutOfRange: return "offsetOutOfRange"
    case .malformedHeader: return "malformedHeader"
    case .malformedFooter: return "malformedFooter"
    case .unsupportedSection: return "unsupportedSection"
    case .inconsistentData: return "inconsistentData"
    case .notARegularFile: return "notARegularFile"
    case .danglingSymlink: return "danglingSymlink"
    case .readOnly: return "readOnly"
    case .locked: return "locked"
    case .unsavable: return "unsavable"
    case .versionUnavailable: return "versionUnavailable"
    }
}

/// The error `load` throws, or nil.
func loadError(_ path: String, verify: Bool = true) -> SnapshotError? {
    do {
        _ = try QuoteTable.load(from: path, verify: verify)
        return nil
    } catch {
        return error
    }
}

/// A snapshot file's bytes, with the surgery corruption tests need: rewrite the footer (fixing its
/// checksum, the trailer and the header), or a payload (fixing its checksum), so that the check
/// under test — not a checksum — is what catches the damage.
struct SnapshotImage {
    var bytes: [UInt8]

    init(_ path: String) { bytes = readBytes(path) }

    func write(to path: String) { writeBytes(bytes, to: path) }

    func getUInt64LE(at offset: Int) -> UInt64 {
        bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
    }

    mutating func setUInt64LE(_ v: UInt64, at offset: Int) {
        withUnsafeBytes(of: v.littleEndian) { for i in 0 ..< 8 { bytes[offset + i] = $0[i] } }
    }

    var footerOffset: Int { Int(getUInt64LE(at: 32)) }
    var footerLength: Int { Int(getUInt64LE(at: bytes.count - 16)) }

    var footer: SnapshotFooter {
        bytes.withUnsafeBytes { b in
            try! SnapshotFooter.decode(
                UnsafeRawBufferPointer(rebasing: b[footerOffset ..< footerOffset + footerLength]),
                file: "test", rowLimit: bytes.count)
        }
    }

    /// Payloads with their names, dates first.
    var payloads: [(name: String, payload: SnapshotPayload)] {
        let f = footer
        var out = [(String, SnapshotPayload)]()
        for (i, c) in f.columns.enumerated() {
            out.append((f.columnName(i), c.values))
            if let v = c.validity { out.append((f.columnName(i) + ".validity", v)) }
        }
        return out
    }

    /// Recomputes the header checksum.
    mutating func fixHeaderChecksum() {
        setUInt64LE(0, at: 56)
        setUInt64LE(SnapshotChecksum.hash(Array(bytes[0 ..< 4096]), seed: 0), at: 56)
    }

    /// Replaces the footer with `footer` encoded, and fixes trailer, file length and header checksum.
    mutating func replaceFooter(_ footer: SnapshotFooter) {
        let encoded = footer.encoded()
        let offset = footerOffset
        bytes.removeSubrange(offset...)
        bytes += encoded
        var trailer = SnapshotByteWriter()
        trailer.writeUInt64LE(SnapshotChecksum.hash(encoded, seed: UInt64(offset)))
        trailer.writeUInt64LE(UInt64(encoded.count))
        trailer.bytes += SnapshotFormat.magic
        bytes += trailer.bytes
        setUInt64LE(UInt64(bytes.count), at: 16)
        fixHeaderChecksum()
    }

    /// Edits the footer and writes it back.
    mutating func editFooter(_ edit: (inout SnapshotFooter) -> Void) {
        var f = footer
        edit(&f)
        replaceFooter(f)
    }

    /// Recomputes every payload checksum in the footer (after editing payload bytes).
    mutating func fixPayloadChecksums() {
        let image = self
        editFooter { f in
            func sum(_ p: SnapshotPayload) -> UInt64 {
                SnapshotChecksum.hash(Array(image.bytes[p.offset ..< p.offset + p.paddedLength]), seed: UInt64(p.offset))
            }
            for i in f.columns.indices {
                f.columns[i].values.checksum = sum(f.columns[i].values)
                if let v = f.columns[i].validity { f.columns[i].validity!.checksum = sum(v) }
            }
        }
    }

    /// Offsets where a part of the file begins or ends: header fields, each payload, each footer
    /// section, the trailer's fields.
    var boundaries: [Int] {
        var out = [0, 1, 7, 8, 12, 16, 32, 56, 63, 64, 4095, 4096]
        for (_, p) in payloads { out += [p.offset, p.offset + p.length, p.offset + p.paddedLength] }
        var o = footerOffset
        while o < bytes.count - 24 {
            out += [o, o + 16]
            o += 16 + SnapshotFormat.align(Int(getUInt64LE(at: o + 8)), 8)
        }
        let n = bytes.count
        out += [n - 24, n - 16, n - 8, n - 1]
        return Array(Set(out.filter { $0 >= 0 && $0 < n })).sorted()
    }
}

/// A small table with every element type and nulls, deterministic.
func sampleTestTable(rows: Int = 5_000, tickers: Int = 7, seed: UInt64 = 11) -> QuoteTable {
    TestTables.random(rows: rows, tickers: tickers, seed: seed)
}
