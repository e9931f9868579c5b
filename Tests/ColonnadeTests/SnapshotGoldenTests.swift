import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// The bundled sample, `snapshots/sample.snapshot`, is a golden file: it must load, verify, equal a
/// freshly generated table with the same parameters, and equal byte for byte what this build writes.
/// If the format changes on purpose, bump the version and regenerate it with
/// `snapshots/regenerate-sample.sh` (snapshots/README.md).
@Suite struct SnapshotGoldenTests {
    /// The sample's parameters (also in snapshots/README.md).
    static let generator = QuoteGenerator(tickers: 20, days: 2_520, seed: 42)

    static var packageRoot: String {
        // This file is Tests/ColonnadeTests/SnapshotGoldenTests.swift.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    static var samplePath: String { packageRoot + "/snapshots/sample.snapshot" }

    @Test func bundledSampleLoadsVerifiesAndEqualsAFreshlyGeneratedTable() throws {
        let loaded = try QuoteTable.load(from: Self.samplePath)
        let fresh = Self.generator.makeTable()
        #expect(loaded == fresh)
        #expect(loaded.rowCount == 50_400 && loaded.tickers.count == 20)
        #expect(loaded.metadata["source"] == "synthetic sample")
        #expect(loaded.ticker("FDX")?.metadata["name"] == "FDX Synthetic Corp (FDX) Prices, Dividends, Splits and Trading Volume")
        #expect(
            try loaded.select(where: "80 < high < 83 and 78 < low < 82").rows()
                == fresh.select(where: "80 < high < 83 and 78 < low < 82").rows())
        let report = QuoteTable.verifySnapshot(at: Self.samplePath)
        #expect(report.isValid, "\(report.problems)")
        #expect(report.info?.formatVersion == "1.0")
    }

    @Test func thisBuildWritesTheSampleByteForByte() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        try Self.generator.makeTable().save(to: dir.file("sample.snapshot"), durable: false)
        #expect(
            sameBytes(readBytes(dir.file("sample.snapshot")), readBytes(Self.samplePath)),
            "the writer's output changed: if intended, bump the format version and regenerate snapshots/sample.snapshot")
    }
}
