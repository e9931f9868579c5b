// fuzz-modules: Colonnade DataLinkFormat
//
// The zip reader (end of central directory, ZIP64 record and locator, central and local headers,
// data descriptors, stored and deflate members, CRC-32 and size checks, bomb limits). The input is
// an archive. Oracle: a member extracted whole and the same member streamed in the smallest chunks
// the reader allows (every inflate call resumes across a buffer end) give the same bytes or the
// same error; streamed chunks tile the member (`memberOffset`); what extracts is at most the
// limit. A member that extracts is then decoded as `import` decodes an export's CSV.
@testable import Colonnade
import DataLinkFormat

/// Small limits, so a bomb is refused (as it must be) long before the 2 GiB RSS limit.
let limits = ZipLimits(maximumRatio: 200, maximumSize: 16 << 20, ratioFloor: 1 << 20)

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    _ = buildOnce { importBase.rowCount }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = ZipArchive.looksLikeZip(UnsafeRawBufferPointer(start: data, count: size))
    let archive: ZipArchive
    do {
        archive = try ZipArchive(bytes: bytes, name: "fuzz.zip")
    } catch {
        _ = "\(error)"
        return 0
    }
    for member in archive.members.prefix(8) where !member.isDirectory {
        let whole: Result<[UInt8], ZipError>
        do { whole = .success(try archive.extract(member, limits: limits)) } catch { whole = .failure(error) }

        var streamed = [UInt8]()
        var streamError: ZipError?
        do {
            try archive.stream(member, limits: limits, chunkSize: Inflater.minimumSpace) { chunk in
                precondition(chunk.memberOffset == streamed.count, "chunk at \(chunk.memberOffset), expected \(streamed.count)")
                streamed += chunk.data
                return 0
            }
        } catch {
            streamError = error
        }
        switch whole {
        case .success(let out):
            precondition(streamError == nil, "extract succeeded, stream failed: \(streamError.map { "\($0)" } ?? "")")
            precondition(out == streamed, "extract and stream differ (\(out.count) and \(streamed.count) bytes)")
            precondition(out.count == member.uncompressedSize && out.count <= limits.allowedSize(compressedSize: member.compressedSize))
            if let response = try? QuoteDecoder.decode(out, fallbackTicker: "FUZZ", source: member.name) {
                exerciseImported(response.table)
            }
        case .failure(let error):
            _ = "\(error)"
            precondition(streamError != nil, "extract failed (\(error)), stream succeeded")
        }
    }
    return 0
}
