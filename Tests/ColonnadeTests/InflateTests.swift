import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing

/// Raw DEFLATE streams made by zlib (and one by hand) when the tests were written
/// (`Tests/Fixtures/deflate/make_cases.py`), with what they must inflate to.
struct DeflateCase: CustomStringConvertible, Sendable {
    let name: String
    let stream: [UInt8]
    let output: [UInt8]
    var description: String { name }

    static let all: [DeflateCase] = {
        guard let data = try? Data(contentsOf: Fixtures.directory.appendingPathComponent("deflate/cases.bin")) else { return [] }
        let bytes = [UInt8](data)
        var cases: [DeflateCase] = []
        var p = 0
        func u32() -> Int {
            defer { p += 4 }
            return Int(bytes[p]) | Int(bytes[p + 1]) << 8 | Int(bytes[p + 2]) << 16 | Int(bytes[p + 3]) << 24
        }
        func take(_ n: Int) -> [UInt8] {
            defer { p += n }
            return Array(bytes[p ..< p + n])
        }
        while p < bytes.count {
            let name = String(decoding: take(u32()), as: UTF8.self)
            let stream = take(u32())
            let output = take(u32())
            cases.append(DeflateCase(name: name, stream: stream, output: output))
        }
        return cases
    }()
}

/// Inflates `stream` whole, through buffers of `capacity` bytes that keep 32 KiB of history (as
/// `ZipArchive.stream` does), so small capacities exercise the resumption at every point.
func inflateAll(_ stream: [UInt8], capacity: Int = 1 << 20) throws(InflateError) -> [UInt8] {
    var out = [UInt8]()
    let window = 32 << 10
    let size = window + capacity
    let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
    defer { buffer.deallocate() }
    var result: Result<Void, InflateError> = .success(())
    stream.withUnsafeBytes { raw in
        var inflater = Inflater(raw)
        var history = 0
        do throws(InflateError) {
            while true {
                let end = try inflater.inflate(into: buffer, from: history, capacity: size)
                out.append(contentsOf: UnsafeBufferPointer(start: buffer + history, count: end - history))
                if inflater.isFinished { break }
                let keep = min(window, end)
                (buffer).update(from: buffer + end - keep, count: keep)
                history = keep
            }
        } catch {
            result = .failure(error)
        }
    }
    try result.get()
    return out
}

@Suite("Inflate (RFC 1951)")
struct InflateTests {
    @Test func theCasesFileIsThere() {
        #expect(DeflateCase.all.count >= 150)
    }

    @Test(arguments: DeflateCase.all)
    func inflatesZlibStreamsExactly(_ c: DeflateCase) throws {
        #expect(try inflateAll(c.stream) == c.output)
    }

    @Test(arguments: DeflateCase.all.filter { $0.output.count > 2000 })
    func inflatesThroughSmallBuffersExactly(_ c: DeflateCase) throws {
        // 1024 is the least room a call may be given: every block and match straddles a buffer end.
        #expect(try inflateAll(c.stream, capacity: Inflater.minimumSpace) == c.output)
        #expect(try inflateAll(c.stream, capacity: 4099) == c.output)
    }

    @Test func maximumDistanceAndLongestMatch() throws {
        let c = try #require(DeflateCase.all.first { $0.name.contains("maximum distance") })
        let out = try inflateAll(c.stream)
        #expect(out.count == 32768 + 258)
        #expect(Array(out[32768...]) == Array(out[0 ..< 258]))
    }

    @Test func aDistanceOneBeyondTheOutputIsRefused() throws {
        // The hand-made 32 KiB case with the stored block one byte shorter.
        var stream: [UInt8] = [0x00, 0xFF, 0x7F, 0x00, 0x80]  // stored, LEN 32767
        stream += [UInt8](repeating: 7, count: 32767)
        var bits = BitWriter()
        bits.put(1, 1)
        bits.put(1, 2)
        bits.putCode(0b11000101, 8)
        bits.putCode(29, 5)
        bits.put(32768 - 24577, 13)
        bits.putCode(0, 7)
        stream += bits.bytes()
        #expect(throws: InflateError.self) { try inflateAll(stream) }
        do {
            _ = try inflateAll(stream)
        } catch {
            guard case let .distanceTooFar(_, distance, available) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(distance == 32768)
            #expect(available == 32767)
        }
    }

    @Test func everyTruncationOfEveryStreamThrowsOrIsComplete() throws {
        for c in DeflateCase.all where c.stream.count < 3000 {
            for cut in 0 ..< c.stream.count {
                let prefix = Array(c.stream[..<cut])
                if let out = try? inflateAll(prefix) {
                    // A stream may end before its last bytes only when those are padding.
                    #expect(out == c.output, "\(c.name) cut at \(cut)")
                }
            }
        }
    }

    @Test func reservedBlockTypeAndBadStoredLengthAreNamed() {
        #expect(throws: InflateError.reservedBlockType(offset: 0)) { try inflateAll([0x07]) }
        #expect(throws: InflateError.storedLengthMismatch(offset: 0, length: 5, complement: 5)) {
            try inflateAll([0x01, 0x05, 0x00, 0x05, 0x00, 1, 2, 3, 4, 5])
        }
        #expect(throws: InflateError.truncated(offset: 0)) { try inflateAll([]) }
    }

    @Test func overSubscribedAndIncompleteCodesAreRefused() {
        // Dynamic header: HLIT 0 (257), HDIST 0 (1), HCLEN 15 (19), every code-length length 1:
        // nineteen 1-bit codes, over-subscribed.
        var bits = BitWriter()
        bits.put(1, 1)
        bits.put(2, 2)
        bits.put(0, 5)
        bits.put(0, 5)
        bits.put(15, 4)
        for _ in 0 ..< 19 { bits.put(1, 3) }
        #expect(throws: InflateError.self) { try inflateAll(bits.bytes()) }
        do { _ = try inflateAll(bits.bytes()) } catch {
            guard case let .invalidCode(_, detail) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(detail.contains("over-subscribed"))
        }
        // Two code-length codes of length 2 only: incomplete.
        var incomplete = BitWriter()
        incomplete.put(1, 1)
        incomplete.put(2, 2)
        incomplete.put(0, 5)
        incomplete.put(0, 5)
        incomplete.put(0, 4)
        incomplete.put(2, 3)
        incomplete.put(2, 3)
        incomplete.put(0, 3)
        incomplete.put(0, 3)
        do {
            _ = try inflateAll(incomplete.bytes())
            Issue.record("accepted an incomplete code")
        } catch {
            guard case let .invalidCode(_, detail) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(detail.contains("incomplete"))
        }
    }

    @Test func seededBitFlipsAreRefusedOrStayWithinTheirBounds() throws {
        // A flipped bit either makes the stream fail with an `InflateError` (a typed throw:
        // nothing else can come out), or still inflates: then to no more bytes than a stream of
        // its length can expand to (RFC 1951: a 258-byte match takes at least 2 bits). Each
        // case's own stream inflates to its bytes, so a refusal is the flip's doing.
        var rng = SplitMix64(seed: 1616)
        var refused = 0, inflated = 0
        for c in DeflateCase.all where c.stream.count > 16 && c.stream.count < 60000 {
            #expect(try inflateAll(c.stream, capacity: 2048) == c.output, "\(c.name) undamaged")
            for _ in 0 ..< 20 {
                var s = c.stream
                let i = Int(rng.next() % UInt64(s.count))
                s[i] ^= UInt8(1 << (rng.next() % 8))
                do throws(InflateError) {
                    let out = try inflateAll(s, capacity: 2048)
                    inflated += 1
                    #expect(out.count <= s.count * 8 * 258, "\(c.name) byte \(i): \(out.count) bytes from \(s.count)")
                } catch {
                    refused += 1
                }
            }
        }
        // Both outcomes occur: the sweep reaches the decoder's checks, and is not all refusals.
        #expect(refused > 0 && inflated > 0, "\(refused) refused, \(inflated) inflated")
    }
}

/// Bits least significant first, Huffman codes most significant first (RFC 1951 §3.1.1).
struct BitWriter {
    private var out: [UInt8] = []
    private var acc: UInt64 = 0
    private var n = 0

    mutating func put(_ value: Int, _ count: Int) {
        acc |= UInt64(value) << UInt64(n)
        n += count
        while n >= 8 {
            out.append(UInt8(acc & 0xFF))
            acc >>= 8
            n -= 8
        }
    }

    mutating func putCode(_ code: Int, _ length: Int) {
        for i in (0 ..< length).reversed() { put((code >> i) & 1, 1) }
    }

    func bytes() -> [UInt8] {
        var copy = self
        if copy.n > 0 { copy.put(0, 8 - copy.n) }
        return copy.out
    }
}
