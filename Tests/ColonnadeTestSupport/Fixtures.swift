import Foundation

/// Locates the shared, read-only response fixtures that live beside the package
/// (`<package root>/../shared/fixtures/…`). They are never copied into the project.
public enum Fixtures {
    /// `<package root>/../shared/fixtures/quandl`, found from this source file's location.
    public static let quandlDirectory: URL = packageRoot()
        .deletingLastPathComponent()
        .appendingPathComponent("shared/fixtures/quandl", isDirectory: true)

    /// The bytes of `quandlDirectory/name`, or nil when the file (or the whole directory) is absent.
    public static func quandl(_ name: String) -> Data? {
        try? Data(contentsOf: quandlDirectory.appendingPathComponent(name))
    }

    /// A sentence for a skipped test: which fixture is missing and where it was looked for.
    public static func missingMessage(_ name: String) -> String {
        "fixture \(name) not found in \(quandlDirectory.path) — skipped (fixtures live in ../shared/fixtures/quandl beside the package)"
    }

    /// The package root: two levels above this file (`Tests/ColonnadeTestSupport/Fixtures.swift`).
    static func packageRoot(file: StaticString = #filePath) -> URL {
        URL(fileURLWithPath: "\(file)")
            .deletingLastPathComponent()  // ColonnadeTestSupport
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // package root
    }
}
