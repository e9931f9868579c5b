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
// Release builds of this package also target the CPU they are built on (`-target-cpu native`):
// the range kernels then use AVX2 where the machine has it (docs/MEASUREMENTS.md, *Native code*).
// The kernels live in the `Colonnade` library, so the flag has to be on the library targets for
// the `colonnade` and `colonnade-bench` executables to get native kernels. It is on only when this
// package is the one being built: a package that depends on Colonnade (its checkout lives under
// `.build/checkouts/` or Xcode's `SourcePackages/checkouts/`) compiles the libraries for the
// target's baseline CPU, so an app that ships a binary built with Colonnade does not inherit
// `-target-cpu native` without knowing (README, *Portable binaries*). Override either way:
// `COLONNADE_PORTABLE=1` (no native code, for binaries copied to other machines) or
// `COLONNADE_NATIVE=1` (native code even as a dependency, for a binary run where it is built).
func flag(_ name: String) -> Bool? { Context.environment[name].map { !$0.isEmpty && $0 != "0" } }
let isDependency = ["/.build/checkouts/", "/SourcePackages/checkouts/"].contains { Context.packageDirectory.contains($0) }
let native = flag("COLONNADE_PORTABLE") == true ? false : (flag("COLONNADE_NATIVE") ?? !isDependency)
let releaseFlags = ["-enforce-exclusivity=unchecked"] + (native ? ["-target-cpu", "native"] : [])

let engineSettings: [SwiftSetting] = [
    .unsafeFlags(releaseFlags, .when(configuration: .release))
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
        .library(name: "DataLinkURLSession", targets: ["DataLinkURLSession"]),
        .library(name: "ColonnadeIngest", targets: ["ColonnadeIngest"]),
        .executable(name: "colonnade", targets: ["colonnade"]),
        .executable(name: "colonnade-transfer", targets: ["colonnade-transfer"]),
        .executable(name: "colonnade-bench", targets: ["ColonnadeBenchmarks"]),
    ],
    targets: [
        // MARK: Implementation
        // Dependencies point one way: Colonnade ← DataLinkFormat ← DataLink ← ColonnadeIngest ← ColonnadeCLI ← colonnade,
        // and DataLink ← DataLinkURLSession ← colonnade-transfer. See docs/ARCHITECTURE.md.
        //
        // The engine: columns, bitmasks, kernels, queries, snapshots, number and date parsing, the
        // JSON/CSV byte scanners, the generator. Knows nothing of Nasdaq Data Link.
        .target(name: "Colonnade", swiftSettings: engineSettings),
        // Nasdaq Data Link (Quandl) response shapes → tables: dataset, dataset_data, datatables,
        // error bodies, cursors, ticker codes; the generator's response files.
        .target(name: "DataLinkFormat", dependencies: ["Colonnade"], swiftSettings: engineSettings),
        // Nasdaq Data Link (Quandl) HTTP client. Knows nothing of the CLI. Does not link
        // FoundationNetworking: requests go through an `HTTPTransport`, a child process or…
        .target(name: "DataLink", dependencies: ["Colonnade", "DataLinkFormat"]),
        // …URLSession, in this process (`HTTPTransport.urlSession`), and the child's side
        // (`TransferProcessServer`). The only module that imports FoundationNetworking, whose
        // libcurl and its ~35 libraries would otherwise load at every start of `colonnade`.
        .target(name: "DataLinkURLSession", dependencies: ["Colonnade", "DataLink"]),
        // Getting data in: every way quotes come in (files, directories, zips, standard input,
        // Arrow/Parquet, fetch with datasets, tables, bulk and --update) and every write policy
        // (the fast path, the lock, upsert, save); progress through callbacks, never printing.
        .target(name: "ColonnadeIngest", dependencies: ["Colonnade", "DataLinkFormat", "DataLink"], swiftSettings: engineSettings),
        // Argument parsing and the commands, as a library so tests can call them.
        .target(name: "ColonnadeCLI", dependencies: ["Colonnade", "DataLinkFormat", "DataLink", "ColonnadeIngest"]),
        .executableTarget(name: "colonnade", dependencies: ["ColonnadeCLI"]),
        // The program `colonnade fetch` sends each request from (`TransferProcess`). Not a
        // dependency of `colonnade`: SwiftPM would link its modules, FoundationNetworking with
        // them, into `colonnade` too. `swift build` builds both; `swift run colonnade` only the one.
        .executableTarget(name: "colonnade-transfer", dependencies: ["DataLinkURLSession"]),

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
        .target(
            name: "DecodingTestSupport", dependencies: ["Colonnade", "DataLinkFormat", "ColonnadeTestSupport"],
            path: "Tests/DecodingTestSupport"),
        .testTarget(name: "DataLinkFormatTests", dependencies: ["DataLinkFormat", "DecodingTestSupport"]),
        .testTarget(name: "ColonnadeIngestTests", dependencies: ["ColonnadeIngest", "DataLinkFormat", "DecodingTestSupport"]),
        .testTarget(
            name: "DataLinkTests", dependencies: ["Colonnade", "DataLink", "DataLinkURLSession", "DataLinkFormat", "ColonnadeTestSupport"]),
        .testTarget(
            name: "ColonnadeCLITests", dependencies: ["ColonnadeCLI", "ColonnadeIngest", "DataLinkURLSession", "ColonnadeTestSupport"]),
        // A child process for tests that stop a writer at a chosen point (the shipped binary has no
        // test-only switches): saves to one path in a loop until killed; imports holding the lock.
        .executableTarget(name: "SnapshotCrashWriter", dependencies: ["Colonnade", "ColonnadeIngest"], path: "Tests/SnapshotCrashWriter"),
    ]
)
