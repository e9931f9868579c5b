import Colonnade
@testable import ColonnadeCLI
import Foundation
import Testing

/// `colonnade import` into a snapshot that does not exist yet decodes straight into the new file
/// (`QuoteImporter.importDirect`): the same bytes and output as the ordinary path
/// (`TestTuning.ordinaryImport`), and all or nothing.
@Suite struct ImportDirectCommandTests {
    static let ordinary = TestTuning(ordinaryImport: true)

    /// Generated per-ticker JSON (seeded), and a file without rows among them.
    static func inputs(in scratch: Scratch, seed: Int) async throws -> [String] {
        let made = await runOffPool(
            ["generate", "--tickers", "25", "--days", "60", "--seed", "\(seed)", "--json-dir", scratch.file("json")], in: scratch)
        #expect(made.status == 0, "\(made.standardError)")
        let names = try FileManager.default.contentsOfDirectory(atPath: scratch.file("json")).sorted()
        // The generator's columns (the files must share them to be placed together), and no rows.
        let first = try String(contentsOfFile: scratch.file("json/" + names[0]), encoding: .utf8)
        let columns = first[try #require(first.firstRange(of: #/"column_names":\[[^\]]*\]/#))]
        try scratch.write(#"{"dataset_data":{\#(columns),"data":[]}}"#, to: "json/WIKI-NONE.json")
        return (names + ["WIKI-NONE.json"]).sorted().map { scratch.file("json/" + $0) }
    }

    /// The names in the scratch directory's `out` folder.
    static func outNames(_ scratch: Scratch) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: scratch.file("out")).sorted()
    }

    @Test(arguments: [7, 8])
    func writesTheSameBytesAsTheOrdinaryPathForOneToThreeThreads(seed: Int) async throws {
        let scratch = try Scratch()
        let files = try await Self.inputs(in: scratch, seed: seed)
        try FileManager.default.createDirectory(atPath: scratch.file("out"), withIntermediateDirectories: true)
        for threads in 1 ... 3 {
            let direct = scratch.file("out/direct.snapshot"), ordinary = scratch.file("out/ordinary.snapshot")
            let a = await runOffPool(["import"] + files + ["--threads", "\(threads)", "--snapshot", direct], in: scratch)
            let b = await runOffPool(
                ["import"] + files + ["--threads", "\(threads)", "--snapshot", ordinary], in: scratch,
                tuning: Self.ordinary)
            #expect(a.status == 0 && b.status == 0, "\(a.standardError) \(b.standardError)")
            #expect(a.standardOutput.replacingOccurrences(of: direct, with: ordinary) == b.standardOutput)
            let bytes = try #require(scratch.bytes("out/direct.snapshot"))
            #expect(bytes == scratch.bytes("out/ordinary.snapshot"), "threads \(threads)")
            #expect(
                try Self.outNames(scratch) == ["direct.snapshot", "direct.snapshot.lock", "ordinary.snapshot", "ordinary.snapshot.lock"],
                "threads \(threads): no temporary left")
            try FileManager.default.removeItem(atPath: direct)
            try FileManager.default.removeItem(atPath: ordinary)
        }
    }

    @Test func removesTheTemporaryOfAKilledImport() async throws {
        let scratch = try Scratch()
        let files = try await Self.inputs(in: scratch, seed: 11)
        try FileManager.default.createDirectory(atPath: scratch.file("out"), withIntermediateDirectories: true)
        // What a killed import leaves: its temporary, no longer locked by anyone.
        try scratch.write("half a snapshot", to: "out/.q.snapshot.tmp-99999-0123456789abcdef")
        let run = await runOffPool(["import"] + files + ["--snapshot", scratch.file("out/q.snapshot")], in: scratch)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(try Self.outNames(scratch) == ["q.snapshot", "q.snapshot.lock"])
        #expect(QuoteTable.verifySnapshot(at: scratch.file("out/q.snapshot")).isValid)
    }

    @Test func aSnapshotThatCannotBeCreatedFailsAsOnTheOrdinaryPath() async throws {
        let scratch = try Scratch()
        let files = try await Self.inputs(in: scratch, seed: 10)
        let target = scratch.file("none/q.snapshot")
        let direct = await runOffPool(["import"] + files + ["--snapshot", target], in: scratch)
        let ordinary = await runOffPool(["import"] + files + ["--snapshot", target], in: scratch, tuning: Self.ordinary)
        #expect(direct.status == 1 && !direct.standardError.isEmpty)
        #expect(direct.standardError == ordinary.standardError && direct.status == ordinary.status)
    }

    @Test func aFailingFileLeavesNoSnapshotAndNoTemporaryAndAnExistingOneByteIdentical() async throws {
        let scratch = try Scratch()
        var files = try await Self.inputs(in: scratch, seed: 9)
        try scratch.write(
            #"{"dataset_data":{"column_names":["Date","Open"],"data":[["2020-01-03",1.5],["2020-01-02",x]]}}"#, to: "json/WIKI-BAD.json")
        files.insert(scratch.file("json/WIKI-BAD.json"), at: 4)
        try FileManager.default.createDirectory(atPath: scratch.file("out"), withIntermediateDirectories: true)
        let target = scratch.file("out/q.snapshot")
        for threads in 1 ... 3 {
            let direct = await runOffPool(["import"] + files + ["--threads", "\(threads)", "--snapshot", target], in: scratch)
            let ordinary = await runOffPool(
                ["import"] + files + ["--threads", "\(threads)", "--snapshot", target], in: scratch,
                tuning: Self.ordinary)
            #expect(direct.status == 1 && direct.standardError.contains("WIKI-BAD.json"), "\(direct.standardError)")
            #expect(direct.standardError == ordinary.standardError && direct.status == ordinary.status)
            #expect(try Self.outNames(scratch) == ["q.snapshot.lock"], "threads \(threads): no snapshot, no temporary")
        }
        // An existing snapshot: the ordinary path, untouched by a failing import.
        let good = files.filter { !$0.hasSuffix("WIKI-BAD.json") }
        #expect(await runOffPool(["import"] + good + ["--snapshot", target], in: scratch).status == 0)
        let before = try #require(scratch.bytes("out/q.snapshot"))
        let failed = await runOffPool(["import"] + files + ["--snapshot", target], in: scratch)
        #expect(failed.status == 1)
        #expect(scratch.bytes("out/q.snapshot") == before)
        #expect(try Self.outNames(scratch) == ["q.snapshot", "q.snapshot.lock"])
    }
}
