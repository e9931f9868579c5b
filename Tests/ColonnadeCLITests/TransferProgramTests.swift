import ColonnadeTestSupport
import Foundation
import Testing

/// `colonnade` does not link FoundationNetworking (nor, through it, libcurl and the libraries
/// libcurl needs): `fetch` sends each request from `colonnade-transfer`, the program beside it.
/// Loading them was half of every command's start (docs/MEASUREMENTS.md, *Start of a process*).
@Suite struct TransferProgramTests {
    /// What glibc's dynamic loader says it looked up while `executable arguments` ran
    /// (`LD_DEBUG=libs`, on standard error).
    static func loaderTrace(_ executable: String, _ arguments: [String]) throws -> (BuiltExecutable.Result, String) {
        let scratch = try Scratch()
        let result = try BuiltExecutable.run(
            executable: executable, arguments, environment: ["HOME": scratch.path, "LD_DEBUG": "libs"])
        return (result, result.standardError)
    }

    @Test func colonnadeStartsWithoutFoundationNetworkingOrLibcurl() throws {
        let (result, trace) = try Self.loaderTrace(try BuiltExecutable.url().path, ["--version"])
        #expect(result.status == 0)
        // The trace is there (the C library is always looked up), so its silence below means something.
        #expect(trace.contains("libc.so"), "no loader trace: \(trace.prefix(300))")
        #expect(!trace.contains("libFoundationNetworking"), "colonnade loads FoundationNetworking")
        #expect(!trace.contains("libcurl"), "colonnade loads libcurl")
    }

    /// The other side: the transfer program does load them (so the check above can fail), and
    /// refuses to be run by hand.
    @Test func theTransferProgramLinksThemAndIsNotRunByHand() throws {
        let (result, trace) = try Self.loaderTrace(try BuiltExecutable.transfer(), ["--help"])
        #expect(result.status == 2)
        #expect(!result.terminatedBySignal)
        #expect(result.standardError.contains("colonnade-transfer: internal to 'colonnade fetch'"), "\(result.standardError)")
        #expect(trace.contains("libcurl"), "colonnade-transfer does not load libcurl: \(trace.prefix(300))")
    }

    /// A `colonnade` installed without its transfer program says what is missing and where it
    /// looked; nothing is created.
    @Test func fetchWithoutTheTransferProgramSaysWhereItLooked() throws {
        let scratch = try Scratch()
        let alone = scratch.file("bin/colonnade")
        try FileManager.default.createDirectory(atPath: scratch.file("bin"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try BuiltExecutable.url().path, toPath: alone)
        let result = try BuiltExecutable.run(
            executable: alone, ["fetch", "AAPL", "--base-url", "http://127.0.0.1:9", "--snapshot", scratch.snapshot],
            environment: ["HOME": scratch.path])
        #expect(result.status == 1, "\(result.standardError)")
        #expect(
            result.standardError.contains(
                "error: fetch sends its requests from the program 'colonnade-transfer', which was not found at \(scratch.file("bin/colonnade-transfer"))"
            ), "\(result.standardError)")
        #expect(result.standardError.contains("install the two files together"), "\(result.standardError)")
        #expect(scratch.bytes("quotes.snapshot") == nil)
    }
}
