/// Reads a Zstandard backward bitstream (FSE and Huffman streams, RFC 8878 §4.1.1 and §4.2.2): the
/// stream's last byte holds a final 1-bit above 0-7 padding zeros, and fields are read from there
/// towards the stream's first byte, each as a little-endian value.
///
/// The reader keeps eight bytes of the stream in `container` (the stream's last unread bytes, the
/// newest at the top) and counts the bits used from the top in `consumed`. `reload()` moves the
/// window down by whole bytes; near the stream's first byte it stops moving and `consumed` grows
/// past 64, which `isOverflowed` reports (reads then give meaningless, but bounded, values, as the
/// reference decoder's do). A stream is read exactly when `isFinished`: every bit used, no more.
struct ZstdBackwardBitReader {
    /// The input the stream lies in.
    let base: UnsafeRawPointer
    /// The offset of the stream's first byte in the input.
    let start: Int
    /// The offset in the input of `container`'s lowest byte.
    private(set) var position: Int
    /// Eight bytes of the stream, loaded little-endian from `position`.
    private(set) var container: UInt64
    /// Bits of `container` already read, counted from its top.
    private(set) var consumed: Int

    /// A reader of the stream `start ..< end` of `base`.
    /// - Throws: `malformed` for an empty stream or a last byte of 0 (no final 1-bit).
    /// - Precondition: `0 <= start <= end` and `end` is within the input `base` points into.
    init(base: UnsafeRawPointer, start: Int, end: Int) throws(ZstdError) {
        guard end > start else { throw .malformed(offset: start, detail: "an empty bitstream") }
        self.base = base
        self.start = start
        // Safe: start <= end - 1 lies inside the input.
        let last = base.load(fromByteOffset: end - 1, as: UInt8.self)
        guard last != 0 else {
            throw .malformed(offset: end - 1, detail: "a bitstream whose last byte is 0 (it must end with a 1-bit)")
        }
        let size = end - start
        if size >= 8 {
            position = end - 8
            // Safe: end - 8 >= start, eight bytes up to end.
            container = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: end - 8, as: UInt64.self))
            consumed = last.leadingZeroBitCount + 1
        } else {
            position = start
            var value: UInt64 = 0
            for i in 0 ..< size {
                // Safe: start + i < end.
                value |= UInt64(base.load(fromByteOffset: start + i, as: UInt8.self)) << (8 * i)
            }
            container = value
            consumed = 8 * (8 - size) + last.leadingZeroBitCount + 1
        }
    }

    /// The next `count` bits (0...56 after a reload) as a value, without using them.
    @inline(__always)
    func peek(_ count: Int) -> UInt64 {
        ((container &<< UInt64(consumed & 63)) &>> 1) &>> UInt64((63 - count) & 63)
    }

    /// Uses `count` bits.
    @inline(__always)
    mutating func skip(_ count: Int) { consumed &+= count }

    /// The next `count` bits (0...56 after a reload) as a value.
    @inline(__always)
    mutating func read(_ count: Int) -> UInt64 {
        let value = peek(count)
        consumed &+= count
        return value
    }

    /// Refills `container` so at least 56 bits are unread, or as many as the stream has left.
    @inline(__always)
    mutating func reload() {
        guard consumed <= 64 else { return }
        let step = consumed >> 3
        if position - step >= start {
            if step == 0 { return }
            position -= step
            consumed &= 7
        } else {
            let available = position - start
            if available == 0 { return }
            position = start
            consumed -= available * 8
        }
        // Safe: start <= position, and position + 8 <= end (positions only move down from end - 8;
        // a stream shorter than 8 bytes starts at `start` and never moves).
        container = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt64.self))
    }

    /// Moves to the eight bytes at `position` with `consumed` (0...7) of their bits used: how a
    /// decoding loop that kept the state in its own form hands it back.
    /// - Precondition: `start <= position` and `position + 8` is at most the stream's end.
    @inline(__always)
    mutating func resume(at position: Int, consumed: Int) {
        self.position = position
        self.consumed = consumed
        // Safe: the caller's precondition.
        container = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt64.self))
    }

    /// Reads have gone past the stream's first bit.
    var isOverflowed: Bool { consumed > 64 }

    /// Every bit of the stream has been read, and no more.
    var isFinished: Bool { position == start && consumed == 64 }
}
