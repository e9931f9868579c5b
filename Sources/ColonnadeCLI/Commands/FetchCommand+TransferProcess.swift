import DataLink
import Foundation

/// `colonnade _transfer`: internal, the child process `fetch` runs each API request in (see
/// `TransferProcess`): reads one request (JSON) on standard input, writes the response as frames
/// on standard output. Run by `fetch` with its own executable, never by hand; a trap inside
/// FoundationNetworking (a `Content-Length` near 2^63) then ends this child, and `fetch` reports
/// a malformed response.
struct TransferProcessCommand: Command {
    let spec = CommandSpec(
        name: "_transfer",
        abstract: "Internal: run one HTTP request for fetch, reading it on standard input and writing framed events to standard output.",
        listing: .hidden
    )

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        TransferProcessServer.serve(input: 0, output: 1)
    }
}

extension FetchCommand {
    /// The environment variable naming the executable `fetch` runs requests in (`_transfer`).
    /// The `colonnade` executable sets it to itself (`runColonnade`); empty runs requests in
    /// process. Tests that run `fetch` in process set it to the built executable.
    static let transferExecutableVariable = "COLONNADE_TRANSFER_EXECUTABLE"

    /// The child process for API requests, when the context names an executable.
    static func transferProcess(_ context: CommandContext) -> TransferProcess? {
        guard let executable = context.environment[transferExecutableVariable], !executable.isEmpty else { return nil }
        return TransferProcess(executable: executable, arguments: ["_transfer"])
    }
}
