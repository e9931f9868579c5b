import Colonnade
import ColonnadeTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `export --compression zstd|zstd:LEVEL|lz4`, `--partition-by month`, `--format delta` with
/// `--mode`, and `import DIR [--delta-version N]` of a Delta table, with the built `colonnade`;
/// then (when the Python environment of Benchmarks/peers is there) pyarrow, Polars, DuckDB and
/// delta-rs reading what it wrote, with SIGKILLs and concurrent writers (Benchmarks/peers/lakehouse.py).
@Suite struct LakehouseCommandTests {
    @Test(arguments: [
        ["--format", "parquet", "--compression", "zstd"], ["--format", "parquet", "--compression", "zstd:19"],
        ["--format", "parquet", "--compression", "lz4"], ["--format", "arrow", "--compression", "zstd:1"],
        ["--format", "arrow", "--compression", "lz4"], ["--format", "arrows", "--compression", "zstd"],
    ])
    func compressedExportsImportBackExactly(format: [String]) throws {
        let fx = try EndToEndFixture.get()
        let directory = try EndToEndFixture.scratchDirectory("lake-compressed")
        let file = directory.appendingPathComponent("q.\(format[1])").path
        let export = try fx.run(["export", "--snapshot", fx.snapshot, "--output", file] + format)
        #expect(export.status == 0, "\(export.standardError)")
        let snapshot = directory.appendingPathComponent("back.snapshot").path
        let back = try fx.run(["import", file, "--snapshot", snapshot])
        #expect(back.status == 0, "\(back.standardError)")
        #expect(try QuoteTable.load(from: snapshot) == fx.table)
    }

    @Test func monthPartitionsAreHiveDirectoriesThatImportBack() throws {
        let fx = try EndToEndFixture.get()
        let directory = try EndToEndFixture.scratchDirectory("lake-month")
        let parts = directory.appendingPathComponent("quotes").path
        let export = try fx.run([
            "export", "--snapshot", fx.snapshot, "--format", "parquet", "--partition-by", "month",
            "--compression", "zstd", "--output", parts,
        ])
        #expect(export.status == 0, "\(export.standardError)")
        let years = try FileManager.default.contentsOfDirectory(atPath: parts).sorted()
        #expect(!years.isEmpty && years.allSatisfy { $0.hasPrefix("year=") })
        let months = try FileManager.default.contentsOfDirectory(atPath: parts + "/" + years[0]).sorted()
        #expect(!months.isEmpty && months.allSatisfy { $0.count == 8 && $0.hasPrefix("month=") }, "\(months)")
        let snapshot = directory.appendingPathComponent("back.snapshot").path
        let back = try fx.run(["import", parts, "--snapshot", snapshot])
        #expect(back.status == 0, "\(back.standardError)")
        #expect(try QuoteTable.load(from: snapshot) == fx.table)
    }

    @Test func deltaExportAppendOverwriteAndTimeTravelImport() throws {
        let fx = try EndToEndFixture.get()
        let directory = try EndToEndFixture.scratchDirectory("lake-delta")
        let table = directory.appendingPathComponent("quotes_delta").path
        let create = try fx.run([
            "export", "--snapshot", fx.snapshot, "--format", "delta", "--partition-by", "year",
            "--where", "date <= 2000-06-30", "-o", table,
        ])
        #expect(create.status == 0, "\(create.standardError)")
        #expect(create.standardError.contains("committed version 0"))
        // Again without a mode: refused, nothing committed.
        let again = try fx.run(["export", "--snapshot", fx.snapshot, "--format", "delta", "--partition-by", "year", "-o", table])
        #expect(again.status != 0 && again.standardError.contains("--mode append"), "\(again.standardError)")
        let append = try fx.run([
            "export", "--snapshot", fx.snapshot, "--format", "delta", "--partition-by", "year", "--mode", "append",
            "--where", "date > 2000-06-30", "-o", table,
        ])
        #expect(append.status == 0, "\(append.standardError)")
        let overwrite = try fx.run([
            "export", "--snapshot", fx.snapshot, "--format", "delta", "--partition-by", "year", "--mode", "overwrite",
            "--where", "date <= 2000-12-31", "-o", table,
        ])
        #expect(overwrite.status == 0 && overwrite.standardError.contains("removed"), "\(overwrite.standardError)")
        let current = directory.appendingPathComponent("current.snapshot").path
        #expect(try fx.run(["import", table, "--snapshot", current]).status == 0)
        #expect(try QuoteTable.load(from: current) == fx.table.subtable(try fx.table.select(where: "date >= 2000-01-01")))
        let first = directory.appendingPathComponent("v0.snapshot").path
        let v0 = try fx.run(["import", table, "--delta-version", "0", "--snapshot", first])
        #expect(v0.status == 0, "\(v0.standardError)")
        #expect(try QuoteTable.load(from: first).rowCount == fx.table.subtable(try fx.table.select(where: "date <= 2000-06-30")).rowCount)
        let missing = try fx.run([
            "import", table, "--delta-version", "9", "--snapshot", directory.appendingPathComponent("x.snapshot").path,
        ])
        #expect(missing.status != 0 && missing.standardError.contains("no version 9"), "\(missing.standardError)")
    }

    @Test(arguments: [
        (["--format", "parquet", "--compression", "zstd:0"], "--compression"),
        (["--format", "parquet", "--compression", "brotli"], "--compression"),
        (["--format", "arrow", "--compression", "snappy"], "--compression"),
        (["--format", "parquet", "--mode", "append"], "--mode"),
        (["--format", "arrow", "--partition-by", "year"], "--partition-by"),
        (["--format", "csv", "--compression", "zstd"], "--compression"),
    ])
    func optionsAFormatDoesNotTakeAreRefused(arguments: [String], naming: String) throws {
        let fx = try EndToEndFixture.get()
        let directory = try EndToEndFixture.scratchDirectory("lake-refuse")
        let result = try fx.run(["export", "--snapshot", fx.snapshot, "-o", directory.appendingPathComponent("x").path] + arguments)
        #expect(result.status == 2, "\(result.standardError)")
        #expect(result.standardError.contains(naming), "\(result.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func aKillAtEveryStepOfACommitLeavesTheLastVersion() throws {
        let fx = try EndToEndFixture.get()
        let directory = try EndToEndFixture.scratchDirectory("lake-kill")
        let table = directory.appendingPathComponent("t").path
        #expect(
            try fx.run(["export", "--snapshot", fx.snapshot, "--format", "delta", "--where", "date <= 2000-03-31", "-o", table]).status == 0
        )
        // The shipped binary has no switch to stop a commit half-way: a test helper makes the
        // same DeltaWriter call and kills itself at the step.
        let helper = try BuiltExecutable.sibling("SnapshotCrashWriter")
        var committed = 0
        for step in ["data", "temporary", "linked", "synced"] {
            let result = try BuiltExecutable.run(
                executable: helper, ["delta-append-killed-at", step, fx.snapshot, "date = 2000-04-03", table],
                environment: EndToEndFixture.cleanEnvironment)
            #expect(result.terminatedBySignal, "\(step): \(result.standardError)")
            // Linked means committed: the version is there whatever happens after.
            if step == "linked" || step == "synced" { committed += 1 }
            #expect(try DeltaTable.versions(at: table) == Array(0 ... committed), "after a kill at \(step)")
            var skipped: [InteropSkippedColumn] = []
            #expect(try DeltaTable.read(at: table, strict: false, skipped: &skipped).rowCount > 0)
        }
        // The shipped binary reads no such switch: with the retired variable set, it commits.
        var environment = EndToEndFixture.cleanEnvironment
        environment["COLONNADE_TEST_DELTA_KILL_AT"] = "data"
        let ordinary = try runBuiltColonnade(
            [
                "export", "--snapshot", fx.snapshot, "--format", "delta", "--mode", "append", "--where", "date = 2000-04-04", "-o",
                table,
            ], environment: environment)
        #expect(ordinary.status == 0 && !ordinary.terminatedBySignal, "\(ordinary.standardError)")
        #expect(try DeltaTable.versions(at: table) == Array(0 ... committed + 1))
    }

    /// The repository root (this file is `<repo>/Tests/ColonnadeCLITests/…`).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let python = root.appendingPathComponent("Benchmarks/peers/.venv/bin/python").path
    static let hasPeers: Bool = {
        guard FileManager.default.isExecutableFile(atPath: python) else { return false }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = ["-c", "import deltalake, polars, duckdb, pyarrow"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }()

    @Test(
        .enabled(
            if: hasPeers,
            "no Python environment with deltalake, polars, duckdb and pyarrow at Benchmarks/peers/.venv (run Benchmarks/peers/run.sh)"))
    func pyarrowPolarsDuckDBAndDeltaRsReadWhatWeWrite() throws {
        let fx = try EndToEndFixture.get()
        let work = try EndToEndFixture.scratchDirectory("lake-peers")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.python)
        p.arguments = [
            Self.root.appendingPathComponent("Benchmarks/peers/lakehouse.py").path, "--check-only",
            "--colonnade", try BuiltExecutable.url().path, "--snapshot", fx.snapshot, "--workdir", work.path,
        ]
        let output = Pipe()
        p.standardOutput = output
        p.standardError = output
        try p.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(text)")
        #expect(text.contains("delta-rs v3") && text.contains("all readers agree"), "\(text)")
    }
}
