@testable import Colonnade
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `readdir` entries are read in place: an entry that ends right before an unmapped page is
/// read without touching that page (copying the whole `dirent` struct crashed the test run
/// once, removing stale temporaries in a large /tmp).
@Suite struct DirectoryEntryTests {
    @Test(arguments: ["a", "short.tmp", ".quotes.snapshot.tmp-123-0123456789abcdef", String(repeating: "n", count: 200)])
    func anEntryEndingAtAnUnmappedPageIsReadInPlace(name: String) throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let mapping = try #require(mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        try #require(mapping != MAP_FAILED)
        defer { munmap(mapping, 2 * page) }
        try #require(mprotect(mapping + page, page, PROT_NONE) == 0, "a guard page after the entry")
        // The entry as glibc lays it out: header, name, NUL, padded to 8 bytes — ending exactly at
        // the guard page, far shorter than MemoryLayout<dirent>.size for short names.
        let nameOffset = try #require(MemoryLayout<dirent>.offset(of: \dirent.d_name))
        let recordLength = (nameOffset + name.utf8.count + 1 + 7) / 8 * 8
        let entry = mapping + page - recordLength
        memset(entry, 0, recordLength)
        entry.storeBytes(of: UInt16(recordLength), toByteOffset: MemoryLayout<dirent>.offset(of: \dirent.d_reclen) ?? 16, as: UInt16.self)
        for (i, byte) in name.utf8.enumerated() { entry.storeBytes(of: byte, toByteOffset: nameOffset + i, as: UInt8.self) }
        #expect(DirectoryEntry.name(entry.assumingMemoryBound(to: dirent.self)) == name)
    }

    @Test func namesOfARealDirectoryAreReadWhole() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("colonnade-dirent-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let names = (1 ... 300).map { String(repeating: "x", count: $0 % 250 + 1) + "-\($0)" }
        for name in names { _ = FileManager.default.createFile(atPath: directory + "/" + name, contents: nil) }
        let dir = try #require(opendir(directory))
        defer { closedir(dir) }
        var seen: [String] = []
        while let entry = readdir(dir) { seen.append(DirectoryEntry.name(entry)) }
        #expect(Set(seen) == Set(names + [".", ".."]))
    }
}
