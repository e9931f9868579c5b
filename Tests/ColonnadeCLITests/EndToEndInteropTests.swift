import Colonnade
import ColonnadeTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// End-to-end: `export --format arrow|arrows|parquet` and `import FILE.arrow|.parquet|DIR` with the
/// built `colonnade`, as processes — round trips through files, outputs replaced the safe way
/// (never onto the snapshot being read, read-only files refused, permissions kept), and damaged
/// or foreign input refused with the file, the byte offset and a non-zero exit.
@Suite struct EndToEndInteropTests {
    static func mode(_ path: String) -> mode_t {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_mode & 0o7777 : 0
    }

    @Test(arguments: [
        ["--format", "arrow"], ["--format", "arrows"], ["--format", "parquet"],
        ["--format", "parquet", "--compression", "snappy", "--row-group-rows", "1000"],
    ])
    func exportThenImportGivesTheSameTable(format: [String]) throws {
        let fx = try EndToEndFixture.get()
        let directory = try EndToEndFixture.scratchDirectory("interop-rt")
        let file = directory.appendingPathComponent(format[1] == "parquet" ? "q.parquet" : "q.\(format[1])").path
        let export = try fx.run(["export", "--snapshot", fx.snapshot, "--output", file] + format)
        #expect(export.status == 0, "\(export.standardError)")
        let snapshot = directory.appendingPathComponent("back.snapshot").path
        let back = try fx.run(["import", file, "--snapshot", snapshot])
        #expect(back.status == 0, "\(back.standardError)")
        #expect(try QuoteTable.load(from: snapshot) == fx.table)
        // Only the output, the snapshot and its lock file are left: no temporaries.
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(left == [(file as NSString).lastPathComponent, "back.snapshot", "back.snapshot.lock"].sorted(), "\(left)")
    }

    @Test func partitionedExportImportsBackAsADirectory() throws {
        let fx = try EndToEndFixture.get()
        let directory = try EndToEndFixture.scratchDirectory("interop-parts")
        let parts = directory.appendingPathComponent("quotes").path
        let export = try fx.run(["export", "--snapshot", fx.snapshot, "--format", "parquet", "--partition-by", "year", "--output", parts])
        #expect(export.status == 0, "\(export.standardError)")
        let years = try FileManager.default.contentsOfDirectory(atPath: parts).sorted()
        #expect(!years.isEmpty && years.allSatisfy { $0.hasPrefix("year=") })
        for year in years {
            #expect(try FileManager.default.contentsOfDirectory(atPath: parts + "/" + year) == ["part-00000.parquet"])
        }
        let snapshot = directory.appendingPathComponent("back.snapshot").path
        let back = try fx.run(["import", parts, "--snapshot", snapshot])
        #expect(back.status == 0, "\(back.standardError)")
        #expect(try QuoteTable.load(from: snapshot) == fx.table)
    }

    @Test(arguments: ["arrow", "parquet"])
    func exportOntoTheSnapshotItReadsIsRefused(format: String) throws {
        let fx = try EndToEndFixture.get()
        let snapshot = try copyOfFile(fx.snapshot, named: "self-\(format).snapshot")
        let original = try Data(contentsOf: URL(fileURLWithPath: snapshot))
        let run = try fx.run(["export", "--snapshot", snapshot, "--format", format, "--output", snapshot])
        #expect(run.status == 1, "\(run.standardError)")
        #expect(run.standardError.contains("is the snapshot being exported"), "\(run.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: snapshot)) == original)
    }

    @Test func aReadOnlyOutputIsRefusedAndAReplacedFileKeepsItsMode() throws {
        let fx = try EndToEndFixture.get()
        let directory = try EndToEndFixture.scratchDirectory("interop-modes")
        let readOnly = directory.appendingPathComponent("ro.parquet").path
        try Data("keep me\n".utf8).write(to: URL(fileURLWithPath: readOnly))
        chmod(readOnly, 0o444)
        let refused = try fx.run(["export", "--snapshot", fx.snapshot, "--format", "parquet", "--output", readOnly])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("\(readOnly): is read-only (mode 0444); not replacing it"), "\(refused.standardError)")
        #expect(try String(contentsOfFile: readOnly, encoding: .utf8) == "keep me\n")

        let privateFile = directory.appendingPathComponent("private.arrow").path
        try Data("old\n".utf8).write(to: URL(fileURLWithPath: privateFile))
        chmod(privateFile, 0o600)
        let replaced = try fx.run(["export", "--snapshot", fx.snapshot, "--format", "arrow", "--output", privateFile])
        #expect(replaced.status == 0, "\(replaced.standardError)")
        #expect(Self.mode(privateFile) == 0o600)
        #expect(try InteropReader.read(path: privateFile) == fx.table)
    }

    @Test func aDamagedFileIsRefusedWithItsOffsetAndNoSnapshotIsWritten() throws {
        let fx = try EndToEndFixture.get()
        let directory = try EndToEndFixture.scratchDirectory("interop-damaged")
        let file = directory.appendingPathComponent("q.parquet").path
        #expect(try fx.run(["export", "--snapshot", fx.snapshot, "--format", "parquet", "--output", file]).status == 0)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        bytes.removeLast(3)  // a file cut short: no closing PAR1
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let snapshot = directory.appendingPathComponent("s.snapshot").path
        let run = try fx.run(["import", file, "--snapshot", snapshot])
        #expect(run.status == 1)
        #expect(run.standardError.contains("\(file): malformed at byte \(bytes.count - 4): no PAR1 at the end"), "\(run.standardError)")
        #expect(run.standardError.contains("hint: "), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: snapshot))
    }

    /// Polars' default Parquet (ZSTD) imports; BROTLI is refused naming the codec and how to
    /// re-export, and nothing is written.
    @Test func zstdImportsAndBrotliIsRefusedNamingTheCodecAndHowToReExport() throws {
        let fx = try EndToEndFixture.get()
        let directory = try EndToEndFixture.scratchDirectory("interop-zstd")
        let snapshot = directory.appendingPathComponent("s.snapshot").path
        let zstd = Fixtures.directory.appendingPathComponent("interop/polars-default.parquet").path
        let imported = try fx.run(["import", zstd, "--snapshot", snapshot])
        #expect(imported.status == 0, "\(imported.standardError)")
        #expect(imported.standardOutput.contains("imported 9 rows for 3 tickers"), "\(imported.standardOutput)")
        let brotli = Fixtures.directory.appendingPathComponent("interop/pyarrow-brotli.parquet").path
        let other = directory.appendingPathComponent("b.snapshot").path
        let run = try fx.run(["import", brotli, "--snapshot", other])
        #expect(run.status == 1)
        #expect(run.standardError.contains("compressed with BROTLI"), "\(run.standardError)")
        #expect(run.standardError.contains("compression='zstd'"), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: other))
    }
}
