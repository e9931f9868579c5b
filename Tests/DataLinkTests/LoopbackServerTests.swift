import ColonnadeTestSupport
import Foundation
import Glibc
import Testing

/// The test server itself, checked without the client (whose behaviour could hide server bugs).
@Suite struct LoopbackServerTests {
    @Test func parsesRequests() {
        let request = LoopbackHTTPRequest.parse(
            head: "GET /a%2Fb/c?x=1&y=a%26b&z=a+b&flag HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Token:  k \r\n", sequenceNumber: 0)
        #expect(request?.path == "/a%2Fb/c")
        #expect(request?.decodedPath == "/a/b/c")
        #expect(request?.queryDictionary == ["x": "1", "y": "a&b", "z": "a b", "flag": ""])
        #expect(request?.header("x-api-token") == "k")
    }

    @Test func stopsPromptlyEvenWithAHangingConnection() async throws {
        let server = try LoopbackHTTPServer { _ in .hang }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = server.port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(connected == 0)
        let request = Array("GET /x HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        #expect(await server.waitForRequests(1))
        #expect(server.requests.map(\.path) == ["/x"])
        server.stop()
        #expect(server.isStopped)
        // Counted, not timed: every server thread has ended once stop() returns (none was left
        // to its grace period), and the hanging connection was closed by the server: the client
        // reads its end (0 bytes) at once.
        #expect(server.allThreadsEnded, "a server thread outlived stop()")
        var byte: UInt8 = 0
        #expect(recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) == 0, "the server did not close the hanging connection: errno \(errno)")
    }
}
