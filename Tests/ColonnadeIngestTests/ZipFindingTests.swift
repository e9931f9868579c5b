import Foundation
import Testing
@testable import Colonnade
@testable import DataLinkFormat
@testable import ColonnadeIngest
import ColonnadeTestSupport
import DecodingTestSupport

/// Zip fuzz finding 10 (docs/FUZZING.md): a deflate member whose recorded size (54 bytes) is
/// smaller than what inflates cleanly (1,320 bytes) before a corrupt back-reference. Sizes are
/// checked per chunk, so the import pipeline (1 KiB chunks) stopped at "inflated to 1024 bytes,
/// the archive records 54" and the whole-member path (1 MiB chunks) at the corrupt data: two
/// errors for one member. The pipeline now leaves every stream error but the limits' to the
/// whole-member path, so the error does not depend on the chunk size.
@Suite struct ZipFindingTests {
    @Test func aMemberGivesOneErrorWhateverTheChunkSize() throws {
        let bytes = [UInt8](
            try Data(contentsOf: Fixtures.directory.appendingPathComponent("fuzz/zip-size-mismatch-before-corrupt-data.zip")))
        let archive = try ZipArchive(bytes: bytes, name: "fuzz.zip")
        let limits = ZipLimits(maximumRatio: 200, maximumSize: 16 << 20, ratioFloor: 1 << 20)
        let member = try #require(archive.members.first { !$0.isDirectory })
        var wholeError: ResponseError?
        do {
            _ = try ArchiveImporter.decodeWhole(member, of: archive, options: ArchiveImporter.Options(limits: limits))
        } catch {
            wholeError = error
        }
        let expected = try #require(wholeError)
        #expect("\(expected)".contains("corrupt compressed data"), "\(expected)")
        for chunkSize in [Inflater.minimumSpace, 1_500, 4_096, 1 << 20] {
            for threads in 1 ... 3 {
                let options = ArchiveImporter.Options(limits: limits, threads: threads, chunkSize: chunkSize)
                #expect(throws: expected, "chunk \(chunkSize), threads \(threads)") {
                    try ArchiveImporter.importMember(member, of: archive, options: options)
                }
            }
        }
    }
}
