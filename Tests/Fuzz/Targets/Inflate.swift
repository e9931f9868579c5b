// fuzz-modules: Colonnade
//
// The DEFLATE decoder (RFC 1951: stored, fixed and dynamic Huffman blocks), resumable into
// caller-supplied buffers. The input is a raw DEFLATE stream. Oracle: inflating through one large
// buffer and through buffers of the least room a call may have (`Inflater.minimumSpace`, keeping
// 32 KiB of history as the zip reader does) gives the same bytes, or an error in both; the bytes
// consumed agree. Output is capped at 8 MiB per input (a bomb is not a finding here; the zip
// reader's limits are).
@testable import Colonnade

let window = 32 << 10
let cap = 8 << 20

/// Inflates `input` through buffers of `room` bytes after the history; nil on an error.
func inflate(_ input: UnsafeRawBufferPointer, room: Int) -> (bytes: [UInt8], consumed: Int)? {
    let size = window + room
    let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
    defer { buffer.deallocate() }
    var out = [UInt8]()
    var inflater = Inflater(input)
    var history = 0
    do {
        while true {
            let end = try inflater.inflate(into: buffer, from: history, capacity: size)
            precondition(end >= history && end <= size, "inflate returned \(end) for a buffer of \(size) from \(history)")
            out.append(contentsOf: UnsafeBufferPointer(start: buffer + history, count: end - history))
            precondition(inflater.totalOut == out.count, "totalOut \(inflater.totalOut), produced \(out.count)")
            if inflater.isFinished { break }
            if out.count > cap { return ([], -1) }
            let keep = min(window, end)
            buffer.update(from: buffer + end - keep, count: keep)
            history = keep
        }
    } catch {
        _ = "\(error)"
        precondition(error.offset >= 0 && error.offset <= input.count, "error offset \(error.offset) outside the input")
        return nil
    }
    precondition(inflater.consumedCount <= input.count, "consumed \(inflater.consumedCount) of \(input.count)")
    return (out, inflater.consumedCount)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let large = inflate(input, room: 1 << 20)
    let small = inflate(input, room: Inflater.minimumSpace)
    switch (large, small) {
    case (nil, nil):
        break
    case let (a?, b?):
        if a.consumed >= 0 && b.consumed >= 0 {
            precondition(a.bytes == b.bytes, "large and small buffers give different bytes (\(a.bytes.count), \(b.bytes.count))")
            precondition(a.consumed == b.consumed, "consumed \(a.consumed) and \(b.consumed)")
        }
    default:
        // One hit the cap before the error the other saw is allowed; otherwise they must agree.
        if let a = large, a.consumed < 0 { break }
        if let b = small, b.consumed < 0 { break }
        preconditionFailure("large buffer \(large == nil ? "failed" : "succeeded"), small buffer \(small == nil ? "failed" : "succeeded")")
    }
    return 0
}
