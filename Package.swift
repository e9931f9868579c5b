// swift-tools-version: 6.2
//
// Colonnade — an in-memory columnar analytics engine for daily stock quotes.
// No package dependencies: only the toolchain (stdlib, Foundation, Dispatch, Glibc, Swift Testing).
import PackageDescription

// Release builds of the engine are what users measure. `-enforce-exclusivity=unchecked`
// removes the runtime exclusivity checks that would otherwise sit inside hot loops that
// touch class-owned buffers; the engine never relies on them (its buffers are reached
// through `withUnsafe…` closures that cannot overlap).
//
// Release builds also target the CPU they are built on (`-target-cpu native`): the range kernels
// then use AVX2 where the machine has it, measured 1.8 → 2.6 G rows/s for `80 < x < 83` on the
// AMD EPYC (Zen 3) we develop on. `swift build -c release` and `swift run -c release` build on the
// machine that runs the result, so this is safe there; a binary copied to an older CPU could
// stop with an illegal instruction. Build portable binaries with `COLONNADE_PORTABLE=1 swift build -c release`.
let portable = Context.environment["COLONNADE_PORTABLE"].map { !$0.isEmpty && $0 != "0" } ?? false
let releaseFlags = ["-enforce-exclusivity=unchecked"] + (portable ? [] : ["-target-cpu", "native"])

let engineSettings: [SwiftSetting] = [
    .unsafeFlags(releaseFlags, .when(configuration: .release)),
    // Expensive invariant checks (query-mask padding bits, sortedness and index tiling after every
    // upsert; see InternalChecks.swift). Turn on with `swift test -Xswiftc -DCOLONNADE_INTERNAL_CHECKS`;
    // colonnade-bench refuses to report numbers from such a build.
]

let package = Package(
    name: "Colonnade",
    platforms: [.macOS(.v15)],
    // MARK: Public products
    products: [
        .library(name: "Colonnade", targets: ["Colonnade"]),
        .library(name: "DataLinkFormat", targets: ["DataLinkFormat"]),
        .library(name: "DataLink", targets: ["DataLink"]),
        .library(name: "ColonnadeIngest", targets: ["ColonnadeIngest"]),
        .executable(name: "colonnade", targets: ["colonnade"]),
        .executable(name: "colonnade-bench", targets: ["ColonnadeBenchmarks"]),
    ],
    targets: [
        // MARK: Implementation
        // Dependencies point one way: Colonnade ← DataLinkFormat ← DataLink ← ColonnadeIngest ← ColonnadeCLI ← colonnade.
        // See docs/ARCHITECTURE.md.
        //
        // The engine: columns, bitmasks, kernels, queries, snapshots, number and date parsing, the
        // JSON/CSV byte scanners, the generator. Knows nothing of Nasdaq Data Link.
        .target(name: "Colonnade", swiftSettings: engineSettings),
        // Nasdaq Data Link (Quandl) response shapes → tables: dataset, dataset_data, datatables,
        // error bodies, cursors, ticker codes; the generator's response files.
        .target(name: "DataLinkFormat", dependencies: ["Colonnade"], swiftSettings: engineSettings),
        // Nasdaq Data Link (Quandl) HTTP client. Knows nothing of the CLI.
        .target(name: "DataLink", dependencies: ["Colonnade", "DataLinkFormat"]),
        // Getting data in: every way quotes come in (files, directories, zips, standard input,
        // Arrow/Parquet, fetch with datasets, tables, bulk and --update) and every write policy
        // (the fast path, the lock, upsert, save); progress through callbacks, never printing.
        .target(name: "ColonnadeIngest", dependencies: ["Colonnade", "DataLinkFormat", "DataLink"], swiftSettings: engineSettings),
        // Argument parsing and the commands, as a library so tests can call them.
        .target(name: "ColonnadeCLI", dependencies: ["Colonnade", "DataLinkFormat", "DataLink", "ColonnadeIngest"]),
        .executableTarget(name: "colonnade", dependencies: ["ColonnadeCLI"]),

        // MARK: Benchmarks
        .executableTarget(
            name: "ColonnadeBenchmarks",
            dependencies: ["Colonnade", "DataLinkFormat", "ColonnadeIngest"],
            path: "Benchmarks/ColonnadeBenchmarks",
            swiftSettings: engineSettings
        ),

        // MARK: Tests
        // Seeded data, obviously-correct references, fixture lookup, a loopback HTTP server.
        .target(name: "ColonnadeTestSupport", dependencies: ["Colonnade"], path: "Tests/ColonnadeTestSupport"),
        .testTarget(name: "ColonnadeTests", dependencies: ["Colonnade", "ColonnadeTestSupport"]),
        // Reference readers and decoding helpers shared by the format's and the ingest layer's tests.
        .target(name: "DecodingTestSupport", dependencies: ["Colonnade", "DataLinkFormat", "ColonnadeTestSupport"],
                path: "Tests/DecodingTestSupport"),
        .testTarget(name: "DataLinkFormatTests", dependencies: ["DataLinkFormat", "DecodingTestSupport"]),
        .testTarget(name: "ColonnadeIngestTests", dependencies: ["ColonnadeIngest", "DataLinkFormat", "DecodingTestSupport"]),
        .testTarget(name: "DataLinkTests", dependencies: ["Colonnade", "DataLink", "DataLinkFormat", "ColonnadeTestSupport"]),
        .testTarget(name: "ColonnadeCLITests", dependencies: ["ColonnadeCLI", "ColonnadeIngest", "ColonnadeTestSupport"]),
        // A child process for the snapshot crash test: saves to one path in a loop until killed.
        .executableTarget(name: "SnapshotCrashWriter", dependencies: ["Colonnade"], path: "Tests/SnapshotCrashWriter"),
    ]
)
