import Colonnade
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How one download attempt ended.
package struct DownloadResult: Sendable {
    /// The HTTP status.
    package var status: Int
    /// Response headers, names lower-cased.
    package var headers: [String: String]
    /// The file's size after the attempt (what is on disk, from offset 0).
    package var fileSize: Int
    /// The start of a refused answer's body (at most 64 KiB), for the error message.
    package var errorBody: Data
    /// Whether the body arrived whole (its declared length, when there was one).
    package var complete: Bool
}

/// The state of one download into a file: where the next byte goes, what was declared, the
/// start of a refused answer's body. Shared by the in-process transport (under its mutex) and
/// the transfer process's sink (on its reader thread).
///
/// The file is written from `offset` on (the request is a `Range` request when it is not 0,
/// ``HTTPRequest/download(_:headers:offset:)``), each piece with `pwrite` as it arrives; no body is
/// held in memory. A `206` with a `Content-Range` starting at `offset` appends; a `200` (the
/// server ignored the range) starts the file over; any other status is not written to the file
/// (its first bytes are kept for the error). A connection that drops mid-body is not an error
/// here: the result says how far the file got, and the caller resumes. A `Content-Length` that
/// is unparsable, overflowing or contradictory is a malformed response (see ``ContentLength``).
package struct DownloadWriter {
    package let fd: Int32
    package let offset: Int
    package private(set) var headers: [String: String] = [:]
    package private(set) var status: Int?
    /// Where the next byte goes; nil when the body is not written (an error status).
    private var position: Int?
    private var expectedEnd: Int?
    private var errorBody = Data()
    private var writeError: String?

    package init(fd: Int32, offset: Int) {
        self.fd = fd
        self.offset = offset
    }

    /// Why writing stopped, once ``write(_:)`` returned false.
    package var failure: TransferFailure? {
        writeError.map { .urlError(code: NSURLErrorCannotWriteToFile, reason: "cannot write the download: \($0)") }
    }

    /// The response head (header names lower-cased); a malformed `Content-Length` refuses it.
    package mutating func begin(status: Int, headers: [String: String]) -> TransferFailure? {
        self.status = status
        self.headers = headers
        // The header as sent, read strictly: Foundation's `expectedContentLength` shows a value
        // past 2^63 - 1 as unknown, and a download taken as complete without its length would
        // be a truncated zip.
        let length: Int?
        switch ContentLength.parse(headers["content-length"]) {
        case .success(let declared): length = declared
        case .failure(let problem): return .malformed(problem.reason)
        }
        switch status {
        case 206 where offset > 0 && Self.rangeStart(headers["content-range"]) == offset:
            position = offset
            expectedEnd = length.map { offset + $0 }
        case 200:
            // The whole body again (a server that ignores ranges): start the file over.
            if ftruncate(fd, 0) != 0 { writeError = String(cString: strerror(errno)) }
            position = 0
            expectedEnd = length
        default:
            position = nil
        }
        return nil
    }

    /// The first byte of `bytes a-b/n`.
    static func rangeStart(_ value: String?) -> Int? {
        guard let value, value.hasPrefix("bytes ") else { return nil }
        let range = value.dropFirst(6).split(separator: "/").first ?? ""
        return Int(range.split(separator: "-").first ?? "")
    }

    /// Writes a piece at the current position (or keeps the start of an error body); false
    /// when the file cannot be written (see ``failure``).
    package mutating func write(_ data: Data) -> Bool {
        guard writeError == nil else { return false }
        guard let position else {
            if errorBody.count < 64 * 1024 { errorBody.append(data.prefix(64 * 1024 - errorBody.count)) }
            return true
        }
        let fd = self.fd
        let failed = data.withUnsafeBytes { raw -> String? in
            let code = SystemCall.writeAll(fd, raw.baseAddress, raw.count, at: position)
            return code == 0 ? nil : String(cString: strerror(code))
        }
        if let failed {
            writeError = failed
            return false
        }
        self.position = position + data.count
        return true
    }

    /// The outcome once the transfer ended (`error`: the transport's, if any). A dropped
    /// connection after a good start is not a failure: the result says how far the file got.
    package func finish(error: (code: Int, reason: String)?) -> Result<DownloadResult, TransferFailure> {
        if let failure { return .failure(failure) }
        if let error {
            if error.code == NSURLErrorCancelled { return .failure(.cancelled) }
            if status == nil || position == nil { return .failure(.urlError(code: error.code, reason: error.reason)) }
        }
        guard let status else { return .failure(.urlError(code: NSURLErrorBadServerResponse, reason: "no HTTP response")) }
        var info = stat()
        let size = fstat(fd, &info) == 0 ? Int(info.st_size) : 0
        let complete = error == nil && (expectedEnd.map { position == $0 } ?? true)
        return .success(DownloadResult(status: status, headers: headers, fileSize: size, errorBody: errorBody, complete: complete))
    }
}
