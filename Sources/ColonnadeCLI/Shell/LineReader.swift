import Colonnade
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Lines from a file descriptor, read as they arrive (a pipe gives each line as soon as it is
/// written), without the line feed (or CR LF).
final class LineReader {
    private let fileDescriptor: Int32
    private var buffer: [UInt8] = []
    private var atEnd = false

    init(fileDescriptor: Int32) { self.fileDescriptor = fileDescriptor }

    /// The next line, or nil at end of input (a last line without a line feed is still a line).
    func next() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                var line = buffer[..<newline]
                if line.last == 0x0D { line = line.dropLast() }
                let text = String(decoding: line, as: UTF8.self)
                buffer.removeSubrange(...newline)
                return text
            }
            if atEnd {
                guard !buffer.isEmpty else { return nil }
                defer { buffer.removeAll() }
                return String(decoding: buffer, as: UTF8.self)
            }
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            let n = SystemCall.retryingOnInterrupt { read(fileDescriptor, &chunk, chunk.count) }
            if n > 0 { buffer += chunk[..<n] } else { atEnd = true }
        }
    }
}
