#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads the process's standard input whole, for `import -`.
enum StandardInput {
    /// Why standard input could not be read.
    struct Failure: Error, CLIReportableError {
        var reason: String
        var message: String { "standard input: cannot read: \(reason)" }
        var hint: String? {
            reason == "it is a terminal" ? "pipe a response into it, for example: unzip -p export.zip | colonnade import -" : nil
        }
    }

    /// Every byte until end of file. Refuses a terminal (nothing would arrive until Ctrl-D).
    static func readAll(fd: Int32 = STDIN_FILENO) throws(Failure) -> [UInt8] {
        if isatty(fd) != 0 { throw Failure(reason: "it is a terminal") }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(reason: String(cString: strerror(errno)))
            }
            if n == 0 { return bytes }
            bytes.append(contentsOf: chunk[0 ..< n])
        }
    }
}
