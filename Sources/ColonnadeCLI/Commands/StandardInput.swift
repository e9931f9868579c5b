#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's standard input, for `import -` (which decodes it while reading it:
/// `QuoteImporter.importStream`).
enum StandardInput {
    /// Why standard input could not be read.
    struct Failure: Error, CLIReportableError {
        var reason: String
        var message: String { "standard input: cannot read: \(reason)" }
        var hint: String? {
            reason == "it is a terminal" ? "pipe a response into it, for example: unzip -p export.zip | colonnade import -" : nil
        }
    }

    /// Refuses a terminal (nothing would arrive until Ctrl-D).
    static func checkReadable(fd: Int32 = STDIN_FILENO) throws(Failure) {
        if isatty(fd) != 0 { throw Failure(reason: "it is a terminal") }
    }
}
