import Foundation

/// Locates the real API responses the tests read, kept in the package itself
/// (`Tests/Fixtures/quandl` and `Tests/Fixtures/quandl-export`; provenance in each folder's
/// `SOURCES.md`), so a fresh clone with nothing beside it passes `swift test`.
///
/// A missing fixture is a broken checkout, not a reason to skip: every accessor here fails
/// the test that asks for it.
public enum Fixtures {
    /// `Tests/Fixtures`, found from this source file's location.
    public static let directory: URL = packageRoot().appendingPathComponent("Tests/Fixtures", isDirectory: true)

    /// Real Nasdaq Data Link responses (`Tests/Fixtures/quandl`).
    public static let quandlDirectory: URL = directory.appendingPathComponent("quandl", isDirectory: true)

    /// A real whole-table export zip, standard-tool zips and export-status bodies (`Tests/Fixtures/quandl-export`).
    public static let exportDirectory: URL = directory.appendingPathComponent("quandl-export", isDirectory: true)

    /// The bytes of `quandlDirectory/name`.
    public static func quandl(_ name: String) throws -> Data {
        try Data(contentsOf: quandlDirectory.appendingPathComponent(name))
    }

    /// The path of `quandlDirectory/name`.
    public static func quandlPath(_ name: String) -> String {
        quandlDirectory.appendingPathComponent(name).path
    }

    /// Every response fixture's file name in `quandlDirectory` (not SOURCES.md), sorted; throws
    /// when the folder cannot be read.
    public static func quandlNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: quandlDirectory.path)
            .filter { $0 != "SOURCES.md" }.sorted()
    }

    /// The package root: two levels above this file (`Tests/ColonnadeTestSupport/Fixtures.swift`).
    static func packageRoot(file: StaticString = #filePath) -> URL {
        URL(fileURLWithPath: "\(file)")
            .deletingLastPathComponent()  // ColonnadeTestSupport
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // package root
    }
}
