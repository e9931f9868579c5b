import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// Every kind of damage gives its own error case — never a crash, never a wrong table.
@Suite struct SnapshotCorruptionTests {
    /// A saved sample table (5,000 rows: not a multiple of 64, so validity has padding bits).
    struct Fixture {
        let dir = ScratchDirectory("corruption")
        let table = sampleTestTable()
        let path: String
        let image: SnapshotImage

        init() throws {
            path = dir.file("good.snapshot")
            try table.save(to: path, durable: false)
            image = SnapshotImage(path)
        }

        /// Writes `image` to a new file and returns its path.
        func write(_ image: SnapshotImage, _ name: String = "bad.snapshot") -> String {
            let p = dir.file(name)
            image.write(to: p)
            return p
        }
    }

    @Test func truncationAtEverySectionBoundaryAndRandomPointsIsReportedAsTruncated() throws {
        let f = try Fixture()
        defer { f.dir.remove() }
        var rng = SplitMix64(seed: 3)
        let size = f.image.bytes.count
        let cuts = f.image.boundaries + (0 ..< 25).map { _ in Int(rng.next() % UInt64(size)) }
        for cut in Set(cuts) where cut < size {
            var img = f.image
            img.bytes.removeSubrange(cut...)
            let p = f.write(img)
            let error = loadError(p)
            #expect(caseName(error) == "truncated", "cut at \(cut): \(String(describing: error))")
            if case let .truncated(_, expected, actual)? = error {
                #expect(actual == cut)
                #expect(expected == (cut >= 64 ? size : SnapshotFormat.minimumFileSize) || cut < 4096)
            }
            #expect(caseName(loadError(p, verify: false)) == "truncated")
            #expect(!QuoteTable.verifySnapshot(at: p).isValid)
        }
    }

    @Test func flippedBytesInTheHeaderAreCaught() throws {
        let f = try Fixture()
        defer { f.dir.remove() }
        let expectations: [(Int, String)] = [
            (0, "notASnapshot"), (5, "notASnapshot"), (8, "unsupportedVersion"), (9, "unsupportedVersion"),
            (10, "checksumMismatch"), (12, "checksumMismatch"), (16, "checksumMismatch"),
            (24, "checksumMismatch"), (32, "checksumMismatch"), (40, "checksumMismatch"),
            (56, "checksumMismatch"), (63, "checksumMismatch"), (64, "checksumMismatch"),
            (2_000, "checksumMismatch"), (4_095, "checksumMismatch"),
        ]
        for (offset, expected) in expectations {
            var img = f.image
            img.bytes[offset] ^= 0x20
            let error = loadError(f.write(img), verify: false)
            #expect(caseName(error) == expected, "byte \(offset): \(String(describing: error))")
            if expected == "checksumMismatch" {
                if case .checksumMismatch(_, "header", nil, _, _)? = error {
                } else {
                    Issue.record("byte \(offset): \(String(describing: error))")
                }
            }
        }
    }

    @Test func flippedBytesInEveryPayloadAreCaughtByItsChecksum() throws {
        let f = try Fixture()
        defer { f.dir.remove() }
        let payloads = f.image.payloads
        #expect(payloads.count == 11)  // dates + 5 columns, each with validity
        for (name, p) in payloads {
            for offset in [p.offset, p.offset + p.length / 2, p.offset + p.length - 1, p.offset + p.paddedLength - 1] {
                var img = f.image
                img.bytes[offset] ^= 0x01
                let path = f.write(img)
                let error = loadError(path)
                if case .checksumMismatch(_, "payload", name?, _, _)? = error {
                } else {
                    Issue.record("\(name) byte \(offset): \(String(describing: error))")
                }
                let report = QuoteTable.verifySnapshot(at: path)
                #expect(report.problems.contains { $0.section == "payload" && $0.column == name }, "\(name) byte \(offset)")
            }
            // Without verification, damage inside a value payload is not detected (documented).
            if !name.hasSuffix(".validity") {
                var img = f.image
                img.bytes[p.offset + 8] ^= 0x01
                #expect(loadError(f.write(img), verify: false) == nil)
            }
        }
    }

    @Test func flippedBytesInTheFooterAndTrailerAreCaught() throws {
        let f = try Fixture()
        defer { f.dir.remove() }
        let footerStart = f.image.footerOffset, n = f.image.bytes.count
        var rng = SplitMix64(seed: 9)
        let offsets =
            [footerStart, footerStart + 4, footerStart + 8, n - 25]
            + (0 ..< 30).map { _ in footerStart + Int(rng.next() % UInt64(n - 24 - footerStart)) }
        for offset in offsets {
            var img = f.image
            img.bytes[offset] ^= 0x04
            let error = loadError(f.write(img), verify: false)
            if case .checksumMismatch(_, "footer", nil, _, _)? = error {
            } else {
                Issue.record("footer byte \(offset): \(String(describing: error))")
            }
        }
        for (offset, expected) in [
            (n - 24, "checksumMismatch"), (n - 17, "checksumMismatch"), (n - 16, "offsetOutOfRange"),
            (n - 9, "offsetOutOfRange"), (n - 8, "malformedFooter"), (n - 1, "malformedFooter"),
        ] {
            var img = f.image
            img.bytes[offset] ^= 0x10
            let error = loadError(f.write(img), verify: false)
            #expect(caseName(error) == expected, "trailer byte \(offset): \(String(describing: error))")
        }
    }

    @Test func badOffsetsAndLengthsInAValidFooterAreCaughtByStructuralValidation() throws {
        let f = try Fixture()
        defer { f.dir.remove() }
        let cases: [(String, String, (inout SnapshotFooter) -> Void)] = [
            ("offset past the footer", "offsetOutOfRange", { $0.columns[1].values.offset += 64 * 1_000_000 }),
            ("offset into the header", "offsetOutOfRange", { $0.columns[1].values.offset = 0 }),
            ("misaligned offset", "offsetOutOfRange", { $0.columns[2].values.offset += 8 }),
            ("overlapping payloads", "offsetOutOfRange", { $0.columns[5].values.offset = $0.columns[4].values.offset }),
            ("length running into the footer", "offsetOutOfRange", { $0.columns[5].values.length += 1 << 20 }),
            ("huge length", "offsetOutOfRange", { $0.columns[3].validity!.length = Int.max >> 3 }),
            ("length disagreeing with the row count", "malformedFooter", { $0.columns[1].values.length -= 4 }),
            ("row count disagreeing with lengths", "malformedFooter", { $0.rowCount += 1 }),
            ("ticker index with a gap", "malformedFooter", { $0.tickers[2].firstRow += 1 }),
            ("ticker index short of the rows", "malformedFooter", { $0.tickers[6].rowCount -= 1 }),
            ("unknown required section", "unsupportedSection", { $0.unknownSections.append((SnapshotFormat.tag("ZZZZ"), 0, [1, 2, 3])) }),
        ]
        for (label, expected, edit) in cases {
            var img = f.image
            img.editFooter(edit)
            let path = f.write(img)
            for verify in [true, false] {
                let error = loadError(path, verify: verify)
                #expect(caseName(error) == expected, "\(label): \(String(describing: error))")
            }
            #expect(caseName(QuoteTable.verifySnapshot(at: path).problems.first?.error) == expected, "\(label)")
            #expect(throws: SnapshotError.self) { try QuoteTable.snapshotInfo(at: path) }
        }
    }

    @Test func unknownOptionalSectionsAreSkippedAndMinorVersionsAccepted() throws {
        let f = try Fixture()
        defer { f.dir.remove() }
        var img = f.image
        img.editFooter { $0.unknownSections.append((SnapshotFormat.tag("XTRA"), SnapshotFormat.optionalFlag, Array("hello".utf8))) }
        img.bytes[10] = 7  // minor version 1.7
        img.fixHeaderChecksum()
        let path = f.write(img)
        #expect(try QuoteTable.load(from: path) == f.table)
        #expect(try QuoteTable.snapshotInfo(at: path).formatVersion == "1.7")
        #expect(QuoteTable.verifySnapshot(at: path).isValid)
    }

    @Test func aFutureMajorVersionIsRefusedNamingBothVersions() throws {
        let f = try Fixture()
        defer { f.dir.remove() }
        // Major version 2 is a store's version log (SnapshotStoreTests); 3 is unknown to this build.
        var img = f.image
        img.bytes[8] = 3
        img.fixHeaderChecksum()
        let error = loadError(f.write(img))
        guard case let .unsupportedVersion(_, found, supported)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(found == "3.0")
        #expect(supported.hasPrefix("1."))
        #expect(error!.description.contains("version 3.0") && error!.description.contains("reads version 1."))
    }

    @Test func filesThatAreNotSnapshotsAreRecognized() throws {
        let f = try Fixture()
        defer { f.dir.remove() }
        writeBytes(Array("Date,Open,High\n2017-01-03,1,2\n".utf8), to: f.dir.file("quotes.csv"))
        #expect(caseName(loadError(f.dir.file("quotes.csv"))) == "notASnapshot")
        var img = f.image
        img.bytes[0] = UInt8(ascii: "X")
        #expect(caseName(loadError(f.write(img))) == "notASnapshot")
        writeBytes([], to: f.dir.file("empty.snapshot"))
        #expect(caseName(loadError(f.dir.file("empty.snapshot"))) == "truncated")
        var longer = f.image
        longer.bytes += [0, 0, 0]
        #expect(caseName(loadError(f.write(longer))) == "malformedHeader")
    }

    @Test func damagedDataWithValidChecksumsIsFoundByVerification() throws {
        let f = try Fixture()
        defer { f.dir.remove() }
        // Swap two dates of ticker T2, and fix the payload checksums: only the invariants catch it.
        var img = f.image
        let t2 = f.table.tickers[2]
        let dates = img.footer.columns[0].values.offset
        let a = dates + 4 * (t2.firstRow + 3), b = a + 4
        for i in 0 ..< 4 { img.bytes.swapAt(a + i, b + i) }
        // Set a validity padding bit of column f32 (entry 3).
        let validity = img.footer.columns[3].validity!
        img.bytes[validity.offset + validity.length - 1] |= 0x80
        // Make the stored block summary of f64 lie.
        img.fixPayloadChecksums()
        img.editFooter { footer in
            if case .float64(var s)? = footer.summaries?[4] {
                s.maximums[0] = 1e9
                footer.summaries?[4] = .float64(s)
            }
        }
        let path = f.write(img)
        let error = loadError(path)
        #expect(caseName(error) == "inconsistentData", "\(String(describing: error))")
        let report = QuoteTable.verifySnapshot(at: path)
        #expect(report.problems.contains { $0.column == "date" && $0.ticker == "T2" && $0.row == t2.firstRow + 4 })
        #expect(report.problems.contains { $0.column == "f32.validity" })
        #expect(report.problems.contains { $0.section == "SUMM" && $0.column == "f64" && $0.row == 0 })
        #expect(!report.problems.contains { $0.section == "payload" && caseName($0.error) == "checksumMismatch" })
    }

    @Test func verificationReportsEveryDamagedPayloadNotJustTheFirst() throws {
        let f = try Fixture()
        defer { f.dir.remove() }
        var img = f.image
        let payloads = img.payloads
        for (_, p) in payloads where p.length > 0 { img.bytes[p.offset] ^= 0xFF }
        let report = QuoteTable.verifySnapshot(at: f.write(img))
        let damaged = Set(report.problems.filter { caseName($0.error) == "checksumMismatch" }.compactMap(\.column))
        #expect(damaged == Set(payloads.map(\.name)))
        #expect(report.info?.rowCount == 5_000)
    }
}
