import Foundation

/// How a ``DataLinkClient`` sends its HTTP requests: each in a child process
/// (``childProcess(_:)``), or in this process through URLSession (`HTTPTransport.urlSession`,
/// in the `DataLinkURLSession` module).
///
/// ```swift
/// import DataLink
/// import DataLinkURLSession
///
/// let client = DataLinkClient(configuration: DataLinkConfiguration(transport: .urlSession, apiKey: key))
/// ```
///
/// Why this module holds no URLSession code: linking FoundationNetworking loads libcurl and the
/// libraries it needs (TLS, Kerberos, LDAP, about 35 in all) at every start of a program, whether
/// it sends a request or not. The symbol lookups of that loading were 14 ms of `colonnade`'s
/// 28 ms start (docs/MEASUREMENTS.md, *Start of a process*). `colonnade` sends its requests from
/// a child program, `colonnade-transfer`, which is the only executable that links
/// FoundationNetworking.
public struct HTTPTransport: Sendable {
    /// One GET whose body is held in memory: an idle `timeout`, a whole-request `deadline`, a
    /// body `limit`, and the header that carries the key (`keyHeader`, dropped on a redirect to
    /// another scheme, host or port).
    package typealias Get =
        @Sendable (
            _ request: HTTPRequest, _ timeout: Duration, _ deadline: ContinuousClock.Instant, _ limit: Int, _ keyHeader: String?
        ) async -> Result<TransferResult, TransferFailure>
    /// One GET streamed into the file `fd` from `offset` on (see ``DownloadWriter``), with an
    /// idle `timeout`.
    package typealias Download =
        @Sendable (
            _ request: HTTPRequest, _ fd: Int32, _ offset: Int, _ timeout: Duration
        ) async -> Result<DownloadResult, TransferFailure>

    /// What the transport is, for messages: `URLSession in this process`, or the child's program.
    public let name: String
    package let get: Get
    package let download: Download

    package init(name: String, get: @escaping Get, download: @escaping Download) {
        self.name = name
        self.get = get
        self.download = download
    }

    /// Each exchange in a child process running `process` (see ``TransferProcess``): a hostile
    /// response can neither end this process (FoundationNetworking traps on a `Content-Length`
    /// near 2^63) nor fill its memory past ``DataLinkConfiguration/maximumResponseSize``
    /// (FoundationNetworking queues body pieces without backpressure). Export downloads run
    /// there too, streamed back and written to their file here.
    public static func childProcess(_ process: TransferProcess) -> HTTPTransport {
        HTTPTransport(
            name: process.executable,
            get: { request, timeout, deadline, limit, keyHeader in
                await process.get(request, timeout: timeout, deadline: deadline, limit: limit, keyHeader: keyHeader)
            },
            download: { request, fd, offset, timeout in
                await process.download(request, into: fd, offset: offset, timeout: timeout)
            })
    }
}

/// One GET request as a transport sends it: the URL and the header fields, sent as given.
package struct HTTPRequest: Sendable {
    package var url: URL
    /// Header fields by name; one value each.
    package var headers: [String: String]

    package init(url: URL, headers: [String: String] = [:]) {
        self.url = url
        self.headers = headers
    }

    /// A download of `url` into a file from byte `offset` on: the bytes as stored (a
    /// transparently decompressed body would not match a byte range), a `Range` past 0.
    package static func download(_ url: URL, headers: [String: String], offset: Int) -> HTTPRequest {
        var request = HTTPRequest(url: url, headers: headers)
        request.headers["Accept-Encoding"] = "identity"
        if offset > 0 { request.headers["Range"] = "bytes=\(offset)-" }
        return request
    }
}

/// The raw outcome of one HTTP exchange, before it is judged.
package struct TransferResult: Sendable {
    package var status: Int
    /// Header names lower-cased.
    package var headers: [String: String]
    package var body: Data
    package var url: URL?

    package init(status: Int, headers: [String: String], body: Data, url: URL?) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
    }
}

/// Why one HTTP exchange produced no response.
package enum TransferFailure: Error, Sendable {
    case urlError(code: Int, reason: String)
    /// Past the size limit: by the declared length (before the body), or when the bytes
    /// delivered passed it (`received`: how many had arrived then).
    case tooLarge(declaredLength: Int?, received: Int?)
    /// An unusable `Content-Length` (see ``ContentLength``), or a transfer process that died.
    case malformed(String)
    /// The whole-request deadline passed (bytes may still have been arriving).
    case deadline
    case cancelled
}
