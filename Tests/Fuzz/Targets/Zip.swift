// fuzz-modules: Colonnade DataLinkFormat ColonnadeIngest
//
// The zip reader (end of central directory, ZIP64 record and locator, central and local headers,
// data descriptors, stored and deflate members, CRC-32 and size checks, bomb limits). The input is
// an archive. Oracle: a member extracted whole and the same member streamed in the smallest chunks
// the reader allows (every inflate call resumes across a buffer end) give the same bytes or the
// same error; streamed chunks tile the member (`memberOffset`); what extracts is at most the
// limit. With the checksum left to the caller, the chunks' new bytes tile the member and their
// joined CRC-32s pass exactly when extract succeeds. A member that extracts is then decoded as
// `import` decodes an export's CSV; and the import pipeline (inflating on one thread, decoding
// pieces of 1 KiB on others) gives the same table, or the same error, as decoding it whole.
@testable import Colonnade
@testable import DataLinkFormat
@testable import ColonnadeIngest

/// Small limits, so a bomb is refused (as it must be) long before the 2 GiB RSS limit.
let limits = ZipLimits(maximumRatio: 200, maximumSize: 16 << 20, ratioFloor: 1 << 20)

@_cdecl("LLVMFuzzerInitialize")
public func initialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
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
        var crc: UInt32 = 0
        var tiled = 0
        var callerError: ZipError?
        do {
            try archive.stream(member, limits: limits, chunkSize: Inflater.minimumSpace, checksByCaller: true) { chunk in
                precondition(chunk.memberOffset + (chunk.newStart - chunk.dataStart) == tiled, "new bytes do not tile the member")
                crc = CRC32.combine(crc, CRC32.checksum(chunk.newBytes), length: chunk.newBytes.count)
                tiled += chunk.newBytes.count
                return 0
            }
            try archive.checkChecksum(member, crc)
        } catch {
            callerError = error
        }
        precondition((callerError == nil) == (streamError == nil), "caller-checked stream and stream disagree")
        comparePipeline(member, of: archive)
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

/// The member through the import pipeline in small pieces and decoded whole: the same table
/// (summaries aside) or the same error.
func comparePipeline(_ member: ZipMember, of archive: ZipArchive) {
    let options = ArchiveImporter.Options(limits: limits, threads: 2, chunkSize: Inflater.minimumSpace)
    let piped: Result<QuoteTable, ResponseError>
    do { piped = .success(try ArchiveImporter.importMember(member, of: archive, options: options)) } catch { piped = .failure(error) }
    let whole: Result<QuoteTable, ResponseError>
    do { whole = .success(try ArchiveImporter.decodeWhole(member, of: archive, options: options)) } catch { whole = .failure(error) }
    switch (piped, whole) {
    case (.success(var a), .success(var b)):
        a.computeSummaries()
        b.computeSummaries()
        precondition(a == b, "the pipeline's table differs from the whole member's")
    case (.failure(let a), .failure(let b)):
        precondition(a == b, "the pipeline's error (\(a)) differs from the whole member's (\(b))")
    default:
        preconditionFailure("pipeline \(piped), whole \(whole)")
    }
}
