import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The `firsttouch` suite: how fast this machine gives fresh memory. 500 MiB of anonymous
/// memory, mapped fresh for every run (untimed), is written by `memset` twice, and a copy into
/// fresh memory is made twice (`memcpy` from a source already touched): the first pass pays a
/// page fault per page (on a VM with free page reporting, also the host's), the second does not.
/// Every path that fills new memory (anonymous columns, the page cache of a file being written)
/// runs at the first figure, not the second.
struct FirstTouchSuite {
    let recorder: Recorder

    static let bytes = 500 << 20

    func run() throws {
        let runs = 5
        let source = try Self.fresh()
        defer { munmap(source, Self.bytes) }
        memset(source, 1, Self.bytes)
        var times: [String: [Double]] = [:]
        func timed(_ key: String, _ body: () -> Void) {
            let t0 = DispatchTime.now().uptimeNanoseconds
            body()
            times[key, default: []].append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9)
        }
        for run in 0 ..< runs {
            let a = try Self.fresh()
            timed("memset first") { memset(a, Int32(run & 0x7F), Self.bytes) }
            timed("memset second") { memset(a, Int32(run & 0x7F) + 1, Self.bytes) }
            sink(Int(a.load(fromByteOffset: Self.bytes - 1, as: UInt8.self)))
            munmap(a, Self.bytes)
            let b = try Self.fresh()
            timed("memcpy first") { memcpy(b, source, Self.bytes) }
            timed("memcpy second") { memcpy(b, source, Self.bytes) }
            sink(Int(b.load(fromByteOffset: Self.bytes - 1, as: UInt8.self)))
            munmap(b, Self.bytes)
        }
        for (key, what) in [
            ("memset first", "first memset of 500 MiB fresh anonymous memory"),
            ("memset second", "second memset of the same 500 MiB"),
            ("memcpy first", "first memcpy of 500 MiB into fresh memory"),
            ("memcpy second", "second memcpy into the same 500 MiB"),
        ] {
            let sorted = (times[key] ?? []).sorted()
            guard !sorted.isEmpty else { continue }
            let median = sorted[sorted.count / 2]
            recorder.record(
                Measurement(
                    suite: "firsttouch", name: what, seconds: median,
                    spread: median > 0 ? (sorted.last! - sorted.first!) / median : 0, runs: runs,
                    items: Double(Self.bytes), unit: "B", bytes: Double(Self.bytes),
                    note: key.hasSuffix("first") ? "page faults on every page" : "pages already mapped"))
        }
    }

    /// A fresh private anonymous mapping of `bytes`.
    static func fresh() throws -> UnsafeMutableRawPointer {
        guard let p = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), p != MAP_FAILED else {
            throw BenchError("mmap of \(bytes) bytes failed: errno \(errno)")
        }
        return p
    }
}
