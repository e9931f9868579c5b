import Colonnade
import Foundation
import Testing

/// `log`, `restore`, `compact`, `gc`, `--at-version`, `--at-time` and the version an import
/// commits, through the built `colonnade` (docs/SNAPSHOT_FORMAT.md, *Stores*).
@Suite struct VersionCommandTests {
    func count(_ snapshot: String, _ extra: [String] = []) throws -> String {
        let r = try runBuiltColonnade(["filter", "--snapshot", snapshot, "--count"] + extra)
        #expect(r.status == 0, "\(r.standardError)")
        return r.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func importAppendsVersionsThatLogRestoreCompactAndGCManage() throws {
        let dir = try EndToEndFixture.scratchDirectory("versions")
        defer { try? FileManager.default.removeItem(at: dir) }
        let snapshot = dir.appendingPathComponent("q.snapshot").path
        let day1 = dir.appendingPathComponent("day1.csv").path, day2 = dir.appendingPathComponent("day2.csv").path
        #expect(try runBuiltColonnade(["generate", "--tickers", "5", "--days", "100", "--snapshot", snapshot]).status == 0)
        #expect(
            try runBuiltColonnade(["generate", "--tickers", "5", "--days", "1", "--seed", "9", "--start", "2001-01-02", "--csv", day1])
                .status == 0)
        #expect(
            try runBuiltColonnade(["generate", "--tickers", "7", "--days", "1", "--seed", "8", "--start", "2001-01-09", "--csv", day2])
                .status == 0)
        let before = try count(snapshot)
        let imported = try runBuiltColonnade(["import", day1, "--snapshot", snapshot, "--api-key", "SECRETsecret1234567890"])
        // --api-key is not an import option: the usage error must not leak it either way.
        #expect(imported.status == 2)
        let first = try runBuiltColonnade(["import", day1, "--snapshot", snapshot])
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardError.contains("version 2: append of 5 rows"))
        let second = try runBuiltColonnade(["import", day2, "--snapshot", snapshot])
        #expect(second.status == 0, "\(second.standardError)")
        #expect(try count(snapshot) == "\(Int(before)! + 12)")
        #expect(try count(snapshot, ["--at-version", "1"]) == before)
        #expect(try count(snapshot, ["--at-version", "2"]) == "\(Int(before)! + 5)")
        // --at-time far in the future is the current version; before the first, refused.
        #expect(try count(snapshot, ["--at-time", "9999-01-01 00:00Z"]) == "\(Int(before)! + 12)")
        let tooEarly = try runBuiltColonnade(["filter", "--snapshot", snapshot, "--count", "--at-time", "1999-01-01 00:00+02:00"])
        #expect(tooEarly.status == 1)
        let badTime = try runBuiltColonnade(["filter", "--snapshot", snapshot, "--count", "--at-time", "yesterday"])
        #expect(badTime.status == 2)
        let missing = try runBuiltColonnade(["filter", "--snapshot", snapshot, "--count", "--at-version", "9"])
        #expect(missing.status == 1)
        #expect(missing.standardError.contains("no version 9"))

        let log = try runBuiltColonnade(["log", "--snapshot", snapshot])
        #expect(log.status == 0)
        #expect(log.standardOutput.contains("version 3 (current)  append"))
        #expect(log.standardOutput.contains("colonnade import \(day2) --snapshot \(snapshot)"))
        #expect(log.standardOutput.contains(" UTC)"))
        let json = try runBuiltColonnade(["log", "--snapshot", snapshot, "--format", "json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any]
        #expect((object?["versions"] as? [Any])?.count == 3)

        let restore = try runBuiltColonnade(["restore", "1", "--snapshot", snapshot])
        #expect(restore.status == 0, "\(restore.standardError)")
        #expect(restore.standardError.contains("'colonnade restore 3' undoes it"))
        #expect(try count(snapshot) == before)
        #expect(try runBuiltColonnade(["restore", "3", "--snapshot", snapshot]).status == 0)
        let compact = try runBuiltColonnade(["compact", "--snapshot", snapshot])
        #expect(compact.status == 0, "\(compact.standardError)")
        #expect(try count(snapshot) == "\(Int(before)! + 12)")
        let info = try runBuiltColonnade(["info", "--snapshot", snapshot])
        #expect(info.standardOutput.contains("versions    6 (current: 6, 1 file)"))
        #expect(try runBuiltColonnade(["gc", "--snapshot", snapshot]).status == 1)
        let gc = try runBuiltColonnade(["gc", "--keep", "1", "--snapshot", snapshot])
        #expect(gc.status == 0, "\(gc.standardError)")
        #expect(gc.standardError.contains("removed 5 versions (1, 2, 3, 4, 5)"))
        let verify = try runBuiltColonnade(["verify", "--snapshot", snapshot])
        #expect(verify.status == 0, "\(verify.standardError)")
        #expect(try count(snapshot) == "\(Int(before)! + 12)")
        #expect(try runBuiltColonnade(["filter", "--snapshot", snapshot, "--count", "--at-version", "1"]).status == 1)
    }

    @Test func generateForceCommitsAVersionThatRestoreUndoes() throws {
        let dir = try EndToEndFixture.scratchDirectory("versions-force")
        defer { try? FileManager.default.removeItem(at: dir) }
        let snapshot = dir.appendingPathComponent("q.snapshot").path
        #expect(try runBuiltColonnade(["generate", "--tickers", "3", "--days", "50", "--snapshot", snapshot]).status == 0)
        let forced = try runBuiltColonnade(["generate", "--tickers", "4", "--days", "60", "--snapshot", snapshot, "--force"])
        #expect(forced.status == 0, "\(forced.standardError)")
        #expect(forced.standardError.contains("as version 2; 'colonnade restore 1' undoes it"))
        #expect(try count(snapshot) == "240")
        #expect(try runBuiltColonnade(["restore", "1", "--snapshot", snapshot]).status == 0)
        #expect(try count(snapshot) == "150")
    }
}
