import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing

@Suite("Zip archives")
struct ZipReaderTests {
    static let zipNames = [
        "WIKI-PRICES.export.zip", "WIKI-PRICES.2014.infozip-9.zip",
        "WIKI-PRICES.2014.stored.zip", "WIKI-PRICES.2014.zip64.zip",
    ]

    static func path(_ name: String) -> String { Fixtures.exportDirectory.appendingPathComponent(name).path }
    static func bytes(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path(name)))) }
    static func csv() throws -> [UInt8] { [UInt8](try Fixtures.quandl("WIKI-PRICES.datatable.2014.csv")) }

    @Test func crc32MatchesTheCheckValueAndABitwiseReference() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
        var rng = SplitMix64(seed: 32)
        for count in [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4097] {
            let bytes = (0 ..< count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            var reference: UInt32 = 0xFFFF_FFFF
            for b in bytes {
                reference ^= UInt32(b)
                for _ in 0 ..< 8 { reference = reference & 1 != 0 ? 0xEDB8_8320 ^ (reference >> 1) : reference >> 1 }
            }
            #expect(CRC32.checksum(bytes) == ~reference, "count \(count)")
            // Split anywhere: the same value.
            let cut = count / 3
            var crc = CRC32()
            bytes[..<cut].withUnsafeBytes { crc.update($0) }
            bytes[cut...].withUnsafeBytes { crc.update($0) }
            #expect(crc.value == ~reference)
        }
    }

    /// Checksums of pieces joined with `CRC32.combine` equal the whole's, at every cut of
    /// small inputs and at random cuts of large ones (lengths past 2^16 use many powers).
    @Test func crc32CombineJoinsPiecesAtEveryCut() {
        var rng = SplitMix64(seed: 33)
        for count in [0, 1, 2, 9, 64, 200] {
            let bytes = (0 ..< count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let whole = CRC32.checksum(bytes)
            for cut in 0 ... count {
                let joined = CRC32.combine(CRC32.checksum(bytes[..<cut]), CRC32.checksum(bytes[cut...]), length: count - cut)
                #expect(joined == whole, "count \(count), cut \(cut)")
            }
        }
        let big = (0 ..< 300_000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        for _ in 0 ..< 20 {
            var cuts = [0, big.count]
            for _ in 0 ..< 4 { cuts.append(rng.below(big.count + 1)) }
            cuts.sort()
            var crc: UInt32 = 0
            for k in 0 ..< cuts.count - 1 {
                crc = CRC32.combine(crc, CRC32.checksum(big[cuts[k] ..< cuts[k + 1]]), length: cuts[k + 1] - cuts[k])
            }
            #expect(crc == CRC32.checksum(big), "cuts \(cuts)")
        }
    }

    /// With `checksByCaller`, the chunks' new bytes tile the member exactly once (whatever the
    /// consumer keeps), so their joined checksums are the member's; a wrong one is refused.
    @Test(arguments: zipNames)
    func newBytesTileTheMemberAndTheCallerChecksIt(_ name: String) throws {
        let archive = try ZipArchive(contentsOfFile: Self.path(name))
        let member = try #require(archive.members.first { !$0.isDirectory })
        for (chunkSize, keep) in [(1024, 0), (1024, 700), (5000, 33_000), (1 << 20, 10)] {
            var crc: UInt32 = 0
            var total = 0
            var joined: [UInt8] = []
            try archive.stream(member, chunkSize: chunkSize, checksByCaller: true) { chunk in
                crc = CRC32.combine(crc, CRC32.checksum(chunk.newBytes), length: chunk.newBytes.count)
                total += chunk.newBytes.count
                joined.append(contentsOf: chunk.newBytes)
                #expect(chunk.memberOffset + (chunk.newStart - chunk.dataStart) == total - chunk.newBytes.count)
                return Swift.min(keep, chunk.data.count)
            }
            #expect(total == member.uncompressedSize && crc == member.crc32, "chunks of \(chunkSize), keeping \(keep)")
            #expect(joined == (try archive.extract(member)))
            try archive.checkChecksum(member, crc)
        }
        #expect(throws: ZipError.self) { try archive.checkChecksum(member, member.crc32 ^ 1) }
    }

    @Test(arguments: zipNames)
    func everyFixtureZipHoldsTheCSVExactly(_ name: String) throws {
        let archive = try ZipArchive(contentsOfFile: Self.path(name))
        #expect(archive.members.count == 1)
        let member = try #require(archive.members.first)
        #expect(member.crc32 == 0xE759_631F)
        #expect(member.uncompressedSize == 109_607)
        #expect(try archive.extract(member) == Self.csv())
        // The same from memory, through the fuzz entry point.
        let all = try ZipArchive.extractAll(Self.bytes(name))
        #expect(all.map(\.name) == [member.name])
        #expect(try all.first?.bytes == Self.csv())
    }

    @Test(arguments: zipNames)
    func streamingInSmallChunksKeepsWhatTheConsumerAsksFor(_ name: String) throws {
        let archive = try ZipArchive(contentsOfFile: Self.path(name))
        let member = try #require(archive.members.first)
        let csv = try Self.csv()
        // Consume whole lines only; keep the partial last line for the next chunk.
        var lines: [UInt8] = []
        var chunks = 0
        try archive.stream(member, chunkSize: 1500) { chunk in
            chunks += 1
            let data = chunk.data
            #expect(Array(csv[chunk.memberOffset ..< chunk.memberOffset + data.count]) == Array(data))
            guard !chunk.isLast, let lastNewline = data.lastIndex(of: UInt8(ascii: "\n")) else {
                lines += data
                return 0
            }
            lines += data[...lastNewline]
            return data.count - lastNewline - 1
        }
        #expect(chunks > 60)
        #expect(lines == csv)
    }

    @Test func zip64DescriptorsAndCommentsBuiltByHandAreRead() throws {
        let csv = try Self.csv()
        let text = try #require(DeflateCase.all.first { $0.name == "text level 9" })
        for descriptor in [ZipBuilder.Member.Descriptor.none, .withSignature, .withoutSignature] {
            for zip64 in [false, true] {
                var a = ZipBuilder.Member.stored("a/PRICES.csv", csv)
                a.descriptor = descriptor
                a.zip64 = zip64
                var b = ZipBuilder.Member.deflated("b.txt", stream: text.stream, original: text.output)
                b.descriptor = descriptor
                b.zip64 = zip64
                var builder = ZipBuilder([.stored("a/", []), a, b], zip64End: zip64)
                builder.comment = Array("a comment".utf8)
                let archive = try ZipArchive(bytes: builder.bytes(), name: "built.zip")
                #expect(archive.members.map(\.name) == ["a/", "a/PRICES.csv", "b.txt"])
                #expect(archive.members[0].isDirectory)
                #expect(try archive.extract(archive.members[1]) == csv)
                #expect(try archive.extract(archive.members[2]) == text.output)
            }
        }
    }

    // MARK: Failures, one test per class

    static func expectZipError(_ bytes: [UInt8], limits: ZipLimits = .standard, _ check: (ZipError) -> Bool) {
        do {
            _ = try ZipArchive.extractAll(bytes, limits: limits)
            Issue.record("no error")
        } catch {
            #expect(check(error), "\(error)")
        }
    }

    @Test func unsupportedMethodsAreNamed() {
        for (method, label) in [(9, "Deflate64"), (12, "bzip2"), (14, "LZMA"), (93, "Zstandard")] {
            var m = ZipBuilder.Member.stored("x.csv", Array("a,b\n".utf8))
            m.method = method
            Self.expectZipError(ZipBuilder([m]).bytes()) { error in
                guard case .unsupportedMethod(_, "x.csv", 0, method) = error else { return false }
                return error.description.contains(label) && error.description.contains("method \(method)")
            }
        }
    }

    @Test func encryptedMembersAreRefused() {
        var m = ZipBuilder.Member.stored("secret.csv", Array("a,b\n".utf8))
        m.flags = 1
        Self.expectZipError(ZipBuilder([m]).bytes()) { error in
            if case .encrypted(_, "secret.csv", 0) = error { return true }
            return false
        }
    }

    @Test func aCRCMismatchIsCaught() throws {
        var bytes = try Self.bytes("WIKI-PRICES.2014.stored.zip")
        let archive = try ZipArchive(bytes: bytes, name: "x")
        bytes[try #require(archive.members.first).dataOffset + 500] ^= 0x01
        Self.expectZipError(bytes) { error in
            if case .checksumMismatch(_, "WIKI_PRICES.csv", 0xE759_631F, _) = error { return true }
            return false
        }
    }

    @Test func aRecordedSizeThatDiffersFromTheDataIsCaught() throws {
        let text = try #require(DeflateCase.all.first { $0.name == "text level 6" })
        var smaller = ZipBuilder.Member.deflated("t", stream: text.stream, original: text.output)
        smaller.uncompressedSize -= 1
        Self.expectZipError(ZipBuilder([smaller]).bytes()) { error in
            if case .sizeMismatch(_, "t", text.output.count - 1, _) = error { return true }
            return false
        }
        var larger = ZipBuilder.Member.deflated("t", stream: text.stream, original: text.output)
        larger.uncompressedSize += 1
        Self.expectZipError(ZipBuilder([larger]).bytes()) { error in
            if case .sizeMismatch(_, "t", text.output.count + 1, text.output.count) = error { return true }
            return false
        }
    }

    @Test func aZipBombIsStoppedByRatioAndByAbsoluteSize() throws {
        let run = try #require(DeflateCase.all.first { $0.name.hasPrefix("run of one byte") })  // 20000 bytes from ~50
        let bomb = ZipBuilder([.deflated("bomb.csv", stream: run.stream, original: run.output)]).bytes()
        let limits = ZipLimits(maximumRatio: 10, ratioFloor: 1000)
        Self.expectZipError(bomb, limits: limits) { error in
            if case let .tooLarge(_, "bomb.csv", 20000, compressed, limit) = error { return limit == max(1000, compressed * 10) }
            return false
        }
        // A member that understates its size is stopped while inflating, not after.
        var liar = ZipBuilder.Member.deflated("bomb.csv", stream: run.stream, original: run.output)
        liar.uncompressedSize = 10
        Self.expectZipError(ZipBuilder([liar]).bytes()) { error in
            if case .sizeMismatch(_, "bomb.csv", 10, _) = error { return true }
            return false
        }
        Self.expectZipError(bomb, limits: ZipLimits(maximumRatio: 1000, maximumSize: 5000)) { error in
            if case .tooLarge(_, _, _, _, 5000) = error { return true }
            return false
        }
        // Raised limits let it through.
        #expect(try ZipArchive.extractAll(bomb, limits: ZipLimits(maximumRatio: 1000, ratioFloor: 0)).first?.bytes == run.output)
    }

    @Test func corruptDeflateDataNamesTheMemberAndTheArchiveByte() throws {
        var bytes = try Self.bytes("WIKI-PRICES.export.zip")
        let member = try #require(try ZipArchive(bytes: bytes, name: "x").members.first)
        // A reserved block type at the first block header.
        bytes[member.dataOffset] |= 0x06
        Self.expectZipError(bytes) { error in
            if case let .corruptData(_, name, offset, _) = error { return name == member.name && offset == member.dataOffset }
            return false
        }
    }

    @Test func notAZipTruncatedAndMalformedStructuresAreNamed() throws {
        Self.expectZipError(Array("date,close\n".utf8)) {
            if case .notAZip = $0 { return true }
            return false
        }
        Self.expectZipError([]) {
            if case .notAZip = $0 { return true }
            return false
        }
        let whole = try Self.bytes("WIKI-PRICES.2014.infozip-9.zip")
        // Cut before the end record: not found.
        Self.expectZipError(Array(whole[..<(whole.count - 10)])) {
            if case .notAZip = $0 { return true }
            return false
        }
        // Central directory offset pointing past its end record.
        var moved = whole
        let end = whole.count - 22
        moved[end + 16] = 0xFF
        moved[end + 17] = 0xFF
        Self.expectZipError(moved) {
            if case .malformed = $0 { return true }
            return false
        }
        // Local header signature damaged.
        var local = whole
        local[0] = 0
        Self.expectZipError(local) { error in
            if case .malformed(_, _, 0, let detail) = error { return detail.contains("local header") }
            return false
        }
    }

    /// Seeded single-byte changes and truncations of every fixture: never a crash, always an error
    /// or exactly the CSV.
    @Test(arguments: zipNames)
    func mutationsAreAnErrorOrTheRightAnswer(_ name: String) throws {
        let original = try Self.bytes(name)
        let csv = try Self.csv()
        var rng = SplitMix64(seed: 0x2116)
        var errors = 0, right = 0
        for trial in 0 ..< 400 {
            var bytes = original
            if trial % 4 == 3 {
                bytes = Array(bytes[..<Int(rng.next() % UInt64(bytes.count))])
            } else {
                // Half of the changes hit the structures at either end, where a change is most likely to matter.
                let i: Int
                switch trial % 4 {
                case 0: i = Int(rng.next() % UInt64(min(200, bytes.count)))
                case 1: i = bytes.count - 1 - Int(rng.next() % UInt64(min(200, bytes.count)))
                default: i = Int(rng.next() % UInt64(bytes.count))
                }
                bytes[i] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
            }
            do {
                let out = try ZipArchive.extractAll(bytes)
                #expect(out.count == 1 && out.first?.bytes == csv, "\(name) trial \(trial)")
                right += 1
            } catch {
                errors += 1
            }
        }
        #expect(errors > 100)
    }
}

/// A hostile-input probe: a 2.4 MB zip whose central directory lists one member 300 times passed
/// the per-member limits and reached 3.6 GB of memory on import. Members may not overlap, and all
/// members together are bounded by the archive's size.
@Suite struct ZipOverlapTests {
    /// `archive` with its central directory's single entry repeated `times` times.
    static func repeatingTheEntry(_ archive: [UInt8], times: Int) -> [UInt8] {
        let end = archive.count - 22
        let directorySize = Int(archive[end + 12]) | Int(archive[end + 13]) << 8 | Int(archive[end + 14]) << 16
        let directoryOffset = Int(archive[end + 16]) | Int(archive[end + 17]) << 8 | Int(archive[end + 18]) << 16
        let entry = Array(archive[directoryOffset ..< directoryOffset + directorySize])
        var out = Array(archive[..<directoryOffset])
        for _ in 0 ..< times { out += entry }
        let size = directorySize * times
        out += [0x50, 0x4B, 0x05, 0x06, 0, 0, 0, 0]
        out += [UInt8(times & 0xFF), UInt8(times >> 8), UInt8(times & 0xFF), UInt8(times >> 8)]
        out += [UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 24)]
        out += [UInt8(directoryOffset & 0xFF), UInt8(directoryOffset >> 8 & 0xFF), UInt8(directoryOffset >> 16 & 0xFF), 0, 0, 0]
        return out
    }

    @Test func aDirectoryListingOneMemberManyTimesIsRefusedNamingBoth() throws {
        let member = ZipBuilder.Member.stored("WIKI_PRICES.csv", Array("ticker,date,close\nA,2014-01-02,1\n".utf8))
        let once = ZipBuilder([member]).bytes()
        #expect(try ZipArchive(bytes: once, name: "once.zip").members.count == 1)
        for times in [2, 300] {
            let bytes = Self.repeatingTheEntry(once, times: times)
            do {
                let archive = try ZipArchive(bytes: bytes, name: "bomb.zip")
                Issue.record("opened with \(archive.members.count) members")
            } catch {
                guard case let .malformed(archive, member, offset, detail) = error else {
                    Issue.record("\(error)")
                    continue
                }
                #expect(archive == "bomb.zip" && member == "WIKI_PRICES.csv" && offset == 0, "\(error)")
                #expect(detail.contains("members of an archive may not overlap"), "\(detail)")
            }
        }
    }

    @Test func membersOverlappingAnotherMembersDataOrDescriptorAreRefused() throws {
        let a = Array(repeating: UInt8(ascii: "a"), count: 300), b = Array(repeating: UInt8(ascii: "b"), count: 50)
        var first = ZipBuilder.Member.stored("a.csv", a)
        first.descriptor = .withSignature
        let bytes = ZipBuilder([first, .stored("b.csv", b)]).bytes()
        #expect(try ZipArchive(bytes: bytes, name: "ok.zip").members.map(\.name) == ["a.csv", "b.csv"])
        // Point b's central entry at a byte inside a's data, where a copy of b's local header and
        // data is planted (a's CRC then fails too, but the overlap is found first).
        var forged = bytes
        let bHeader = 30 + 5 + 300 + 16  // a's header, name, data, descriptor
        let planted = 30 + 5 + 40
        forged.replaceSubrange(planted ..< planted + 30 + 5 + 50, with: Array(bytes[bHeader ..< bHeader + 30 + 5 + 50]))
        // The last central entry's local-header offset field (at entry + 42).
        let end = forged.count - 22
        let directoryOffset = Int(forged[end + 16]) | Int(forged[end + 17]) << 8
        let secondEntry = directoryOffset + 46 + 5
        forged[secondEntry + 42] = UInt8(planted & 0xFF)
        forged[secondEntry + 43] = UInt8(planted >> 8)
        #expect(throws: ZipError.self) { try ZipArchive(bytes: forged, name: "forged.zip") }
        do {
            _ = try ZipArchive(bytes: forged, name: "forged.zip")
        } catch {
            #expect(error.description.contains("lies inside the bytes of member 'a.csv'"), "\(error)")
        }
    }

    @Test func allMembersTogetherAreBoundedByTheArchivesSize() throws {
        let members = (0 ..< 3).map { ZipBuilder.Member.stored("m\($0).csv", Array(repeating: UInt8(ascii: "x"), count: 1_000)) }
        let archive = try ZipArchive(bytes: ZipBuilder(members).bytes(), name: "three.zip")
        #expect(archive.totalUncompressedSize == 3_000)
        // Each member is within its own limit (ratio 1, stored), the three together are not.
        let limits = ZipLimits(maximumRatio: 1, maximumSize: 1 << 20, ratioFloor: 0, maximumTotalSize: 2_500)
        #expect(limits.allowedTotalSize(archiveSize: 10_000) == 2_500)
        do {
            _ = try archive.extract(archive.members[0], limits: limits)
            Issue.record("extracted past the archive's total")
        } catch {
            guard case let .tooLarge(name, member, size, _, limit) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(name == "three.zip" && member == "(all 3 members)" && size == 3_000 && limit == 2_500)
        }
        #expect(
            try archive.extract(archive.members[0], limits: ZipLimits(maximumRatio: 1, ratioFloor: 0, maximumTotalSize: 3_000)).count
                == 1_000)
    }
}
