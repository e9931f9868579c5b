import Colonnade
import ColonnadeTestSupport
import DecodingTestSupport
@testable import DataLinkFormat
@testable import ColonnadeIngest
import Foundation
import Testing

/// Reading one file on several threads (`readInPieces`, used by `withContents(ofFile:threads:)`
/// for large files): the same bytes as one `read` loop, whatever the piece size and thread count,
/// and a file that shrank after `fstat` gives the bytes that are there.
@Suite struct ParallelReadTests {
    static func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var rng = SplitMix64(seed: seed)
        return (0 ..< count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }

    @Test(arguments: [(1, 4096), (2, 4096), (3, 1000), (4, 65_536), (2, 1 << 20)])
    func piecesTileTheFile(threads: Int, piece: Int) throws {
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let bytes = Self.randomBytes(300_001, seed: UInt64(threads * 7 + piece))
        let path = dir + "/input.bin"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        for size in [bytes.count, bytes.count + 5000] {  // + 5000: the file is shorter than stated
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 64)
            defer { buffer.deallocate() }
            let (count, code) = QuoteImporter.readInPieces(fd, into: buffer, size: size, threads: threads, piece: piece)
            #expect(code == 0)
            #expect(count == bytes.count)
            #expect(Array(UnsafeRawBufferPointer(start: buffer, count: count)) == bytes)
        }
    }

    @Test func aLargeFileReadsTheSameOnOneAndThreeThreads() throws {
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let bytes = Self.randomBytes(QuoteImporter.parallelReadSize + 12_345, seed: 3)
        let path = dir + "/large.bin"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        for threads in [1, 3] {
            let same = try QuoteImporter.withContents(ofFile: path, threads: threads) { b throws(ResponseError) in
                b.count == bytes.count && b.elementsEqual(bytes)
            }
            #expect(same, "threads \(threads)")
        }
    }
}
