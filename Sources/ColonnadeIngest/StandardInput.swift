#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's standard input, for an import of `-` (which decodes it while reading it:
/// `QuoteImporter.importStream`).
public enum StandardInput {
    /// Why standard input could not be read.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// Why, for example "it is a terminal".
        public var reason: String
        public var message: String { "standard input: cannot read: \(reason)" }
        public var description: String { message }
    }

    /// Refuses a terminal (nothing would arrive until Ctrl-D).
    package static func checkReadable(fd: Int32 = STDIN_FILENO) throws(Failure) {
        if isatty(fd) != 0 { throw Failure(reason: "it is a terminal") }
    }
}
