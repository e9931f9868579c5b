import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `GuardedFileMapping`: a file read through a mapping, truncated by someone else meanwhile,
/// reads zeros past its new end and says so, instead of ending the process with SIGBUS.
@Suite struct GuardedFileMappingTests {
    /// A file of `size` bytes, byte i = i % 251 + 1 (never zero), open read-write.
    static func file(size: Int, in dir: ScratchDirectory) -> (path: String, fd: Int32) {
        let path = dir.file("mapped.bin")
        let bytes = (0 ..< size).map { UInt8($0 % 251 + 1) }
        writeBytes(bytes, to: path)
        return (path, open(path, O_RDWR))
    }

    @Test func mapsTheFileAsItIs() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let (_, fd) = Self.file(size: 70_000, in: dir)
        defer { close(fd) }
        let mapping = try #require(GuardedFileMapping(fileDescriptor: fd, count: 70_000))
        #expect(mapping.bytes.count == 70_000)
        #expect(mapping.bytes.enumerated().allSatisfy { $0.element == UInt8($0.offset % 251 + 1) })
        #expect(!mapping.lostPages)
        #expect(GuardedFileMapping(fileDescriptor: fd, count: 0) == nil)
    }

    @Test func aFileTruncatedWhileMappedReadsZerosPastItsEndAndSaysSo() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let size = 16 * page + 100
        let (_, fd) = Self.file(size: size, in: dir)
        defer { close(fd) }
        let mapping = try #require(GuardedFileMapping(fileDescriptor: fd, count: size))
        // Another writer cuts the file to 3 pages and a bit while it is mapped.
        let kept = 3 * page + 10
        #expect(ftruncate(fd, off_t(kept)) == 0)
        var sum = 0
        var nonZeroPastEnd = 0
        for i in 0 ..< size {
            sum &+= Int(mapping.bytes[i])
            if i >= 4 * page && mapping.bytes[i] != 0 { nonZeroPastEnd += 1 }
        }
        #expect(sum > 0)
        #expect(nonZeroPastEnd == 0, "pages wholly past the new end read as zeros")
        #expect((0 ..< kept).allSatisfy { mapping.bytes[$0] == UInt8($0 % 251 + 1) }, "the bytes still in the file are its own")
        #expect(mapping.lostPages)
        // Another mapping of the now shorter file is not marked.
        let again = try #require(GuardedFileMapping(fileDescriptor: fd, count: kept))
        #expect(again.bytes[kept - 1] == UInt8((kept - 1) % 251 + 1) && !again.lostPages)
    }

    @Test func manyMappingsAtOnceEachKeepTheirOwnMark() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        var mappings: [GuardedFileMapping] = []
        var fds: [Int32] = []
        defer { fds.forEach { close($0) } }
        for k in 0 ..< 8 {
            let path = dir.file("f\(k)")
            writeBytes([UInt8](repeating: 7, count: 4 * page), to: path)
            let fd = open(path, O_RDWR)
            fds.append(fd)
            mappings.append(try #require(GuardedFileMapping(fileDescriptor: fd, count: 4 * page)))
        }
        // Only the odd files shrink, and only their reads past the end are marked.
        for k in stride(from: 1, to: 8, by: 2) { #expect(ftruncate(fds[k], off_t(page)) == 0) }
        // The sums are checked, so the reads happen (unused, a release build drops them).
        let sums = mappings.map { m in m.bytes.reduce(0) { $0 &+ Int($1) } }
        #expect(sums == (0 ..< 8).map { $0 % 2 == 1 ? 7 * page : 7 * 4 * page }, "cut files read zeros past one page")
        #expect(mappings.map(\.lostPages) == (0 ..< 8).map { $0 % 2 == 1 })
    }
}

/// A zip archive file that shrinks while its member streams: an error naming the archive and the
/// member, never SIGBUS.
@Suite struct ZipFileShrinkingTests {
    @Test(arguments: ["WIKI-PRICES.2014.stored.zip", "WIKI-PRICES.2014.infozip-9.zip"])
    func anArchiveCutWhileStreamingIsAnError(fixture: String) throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file(fixture)
        writeBytes(readBytes(Fixtures.exportDirectory.appendingPathComponent(fixture).path), to: path)
        let archive = try ZipArchive(contentsOfFile: path)
        let member = try #require(archive.members.first { !$0.isDirectory })
        // Intact, it streams.
        #expect(try archive.extract(member).count == member.uncompressedSize)
        // Cut to a quarter after it was opened (its directory read), then streamed.
        let size = readBytes(path).count
        #expect(truncate(path, off_t(size / 4)) == 0)
        var caught: ZipError?
        do { _ = try archive.extract(member) } catch { caught = error }
        let error = try #require(caught)
        #expect("\(error)".contains("shrank while it was being read") && "\(error)".contains(member.name), "\(error)")
    }
}

/// A snapshot file cut shorter by someone else while it is loaded, or while its columns (views
/// of its mapping) are read: a truncated-file error, or zeros, never SIGBUS.
@Suite struct SnapshotFileShrinkingTests {
    @Test(arguments: [true, false])
    func aSnapshotCutWhileLoadingIsTruncated(verify: Bool) throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("s.snapshot")
        try sampleTestTable(rows: 20_000).save(to: path, durable: false)
        let size = readBytes(path).count
        let reader = try SnapshotReader(path: path)  // header, trailer and footer read and mapped
        // The footer is cached; cut into the payloads.
        #expect(truncate(path, off_t(size / 3)) == 0)
        var caught: SnapshotError?
        do {
            let table = try QuoteTable.load(reader, verify: verify)
            // Without verification nothing may have read the lost pages yet: reading the
            // columns must not crash either.
            #expect(!verify)
            // Most payload bytes lie past the cut: those values read as 0.0.
            var zeros = 0
            for case .float64(let c) in table.columns { for r in 0 ..< c.count where c.value(at: r) == 0 { zeros += 1 } }
            #expect(zeros >= table.rowCount, "\(zeros) zero values")
        } catch {
            caught = error
        }
        if verify {
            let error = try #require(caught)
            #expect(error == .truncated(file: path, expected: size, actual: size / 3), "\(error)")
        }
    }
}
