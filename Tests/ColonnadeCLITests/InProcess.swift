@testable import ColonnadeCLI
import Foundation

/// What one in-process run of `colonnade` produced.
struct Invocation {
    var status: Int32
    var standardOutput: String
    var standardError: String
}

/// Runs `colonnade arguments` in-process with captured output.
///
/// - Parameter outputLimit: Bytes of standard output accepted before the "reader" goes away
///   (writes then fail with `brokenPipe`), to test early-closed pipes without a process.
func colonnade(_ arguments: String..., outputLimit: Int? = nil) -> Invocation {
    colonnade(arguments, outputLimit: outputLimit)
}

func colonnade(_ arguments: [String], outputLimit: Int? = nil) -> Invocation {
    let output = MemoryOutputWriter(limit: outputLimit)
    let errors = MemoryOutputWriter()
    let context = CommandContext(
        standardOutput: output, standardError: errors,
        environment: [:], currentDirectory: "/tmp")
    let status = runColonnade(arguments, context: context)
    return Invocation(status: status, standardOutput: output.text, standardError: errors.text)
}

/// Runs `colonnade` with the tests' own `_selftest-output` command added (the shipped tool does
/// not have it), in-process with captured output.
func colonnadeWithSelfTest(_ arguments: [String], outputLimit: Int? = nil) -> Invocation {
    let output = MemoryOutputWriter(limit: outputLimit)
    let errors = MemoryOutputWriter()
    let context = CommandContext(
        standardOutput: output, standardError: errors,
        environment: [:], currentDirectory: "/tmp")
    let shipped = CommandLineTool.colonnade
    let tool = CommandLineTool(
        version: shipped.version, abstract: "colonnade with test commands",
        commands: shipped.commands + [SelfTestOutputCommand()])
    let status = tool.run(arguments, context: context)
    return Invocation(status: status, standardOutput: output.text, standardError: errors.text)
}

/// The usage error parsing `arguments` for `spec` throws, or `nil` if it parses.
func usageError(_ arguments: [String], for spec: CommandSpec) -> UsageError? {
    do {
        _ = try ArgumentParser.parse(arguments, for: spec)
        return nil
    } catch {
        return error
    }
}

import Testing

extension CommandSpec: CustomTestStringConvertible {
    /// Parameterized tests name the command, not its whole declaration.
    public var testDescription: String { name }
}

/// Standard output and error as one terminal sees them: one stream, in order, that says it is a
/// terminal (or, with `isTerminal` false, a file). Thread-safe: a progress line draws from its own
/// queue while the command writes.
final class TerminalCapture: OutputWriter, @unchecked Sendable {
    // Safe: `written` is touched only under `lock`.
    private let lock = NSLock()
    private var written = ""
    let isTerminal: Bool

    init(isTerminal: Bool) { self.isTerminal = isTerminal }

    var text: String { lock.withLock { written } }
    func write(_ text: String) throws(OutputError) { lock.withLock { written += text } }
    func flush() throws(OutputError) {}
}

/// Runs `colonnade arguments` in-process in `directory` with the end-to-end tests' environment,
/// its progress lines after `progressDelay` (the binary always waits a second; it has no switch
/// for this). On a terminal, standard output and error are one stream (`output`); off one, two.
func colonnadeWithProgress(
    _ arguments: [String], in directory: URL, onATerminal: Bool, progressDelay: Duration = .zero
) -> (status: Int32, output: String, standardError: String) {
    let error = TerminalCapture(isTerminal: onATerminal)
    let output = onATerminal ? error : TerminalCapture(isTerminal: false)
    var context = CommandContext(
        standardOutput: output, standardError: error, environment: EndToEndFixture.cleanEnvironment,
        currentDirectory: directory.path)
    context.tuning.progressDelay = progressDelay
    let status = runColonnade(arguments, context: context)
    return (status, output.text, error.text)
}
