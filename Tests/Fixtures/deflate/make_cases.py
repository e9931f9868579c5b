#!/usr/bin/env python3
"""Writes cases.bin: raw DEFLATE streams (RFC 1951) and what they inflate to, made by zlib
(and, for the 32 KiB distance, by hand) when the tests were written. The tests read the file;
they never need Python.

Format, repeated to the end of the file (integers little-endian):
    u32 name length, name (UTF-8), u32 stream length, stream, u32 output length, output
"""
import random
import struct
import zlib

cases = []


def raw(data, level=6, strategy=zlib.Z_DEFAULT_STRATEGY, memlevel=8):
    c = zlib.compressobj(level, zlib.DEFLATED, -15, memlevel, strategy)
    return c.compress(data) + c.flush()


def add(name, stream, output):
    assert zlib.decompress(stream, -15) == output, name
    cases.append((name, stream, output))


rng = random.Random(16)
words = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 9))) for _ in range(400)]
text = b" ".join(rng.choice(words) for _ in range(30000))[:50000]
noise = bytes(rng.randrange(256) for _ in range(20000))

add("empty level 6", raw(b""), b"")
add("empty stored", raw(b"", 0), b"")
add("one byte", raw(b"A"), b"A")
add("one byte stored", raw(b"A", 0), b"A")
add("run of one byte (distance 1, 258-byte matches)", raw(b"a" * 20000, 9), b"a" * 20000)
period = bytes(rng.randrange(256) for _ in range(300))
add("258-byte matches at distance 300", raw(period * 12, 9), period * 12)
for d in range(2, 9):
    data = (bytes(rng.randrange(256) for _ in range(d)) * 200)[:1000]
    add(f"short period {d}", raw(data, 9), data)
add("text level 1", raw(text, 1), text)
add("text level 6", raw(text, 6), text)
add("text level 9", raw(text, 9), text)
add("text fixed Huffman only", raw(text, 6, zlib.Z_FIXED), text)
add("text Huffman only, no matches", raw(text, 6, zlib.Z_HUFFMAN_ONLY), text)
add("text run-length only", raw(text, 6, zlib.Z_RLE), text)
add("text small memory (many blocks)", raw(text, 6, memlevel=1), text)
add("stored, several 64 KiB blocks", raw(text * 2, 0), text * 2)
add("random bytes (stored blocks chosen)", raw(noise, 9), noise)

# A dynamic block with 15-bit codes: Fibonacci-like symbol frequencies make the optimal tree
# deeper than 15, so zlib limits it to exactly 15.
fib = [1, 1]
while len(fib) < 26:
    fib.append(fib[-1] + fib[-2])
syms = bytearray()
for i, f in enumerate(fib):
    syms += bytes([65 + i]) * f
shuffled = bytearray(syms)
rng.shuffle(shuffled)
data = bytes(shuffled[:60000])
add("dynamic block with 15-bit codes", raw(data, 6, zlib.Z_HUFFMAN_ONLY), data)

# Block boundaries at every byte of a small input: a sync flush ends the block at byte k.
small = text[:64]
for k in range(len(small) + 1):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    s = c.compress(small[:k]) + c.flush(zlib.Z_SYNC_FLUSH) + c.compress(small[k:]) + c.flush()
    add(f"block boundary at byte {k}", s, small)
    c = zlib.compressobj(6, zlib.DEFLATED, -15, 8, zlib.Z_FIXED)
    s = c.compress(small[:k]) + c.flush(zlib.Z_PARTIAL_FLUSH) + c.compress(small[k:]) + c.flush()
    add(f"fixed block boundary at byte {k}", s, small)


class Bits:
    def __init__(self):
        self.out = bytearray()
        self.acc = 0
        self.n = 0

    def put(self, value, count):  # least significant bit first
        self.acc |= value << self.n
        self.n += count
        while self.n >= 8:
            self.out.append(self.acc & 0xFF)
            self.acc >>= 8
            self.n -= 8

    def put_code(self, code, length):  # Huffman codes go most significant bit first
        for i in reversed(range(length)):
            self.put((code >> i) & 1, 1)

    def align(self):
        if self.n:
            self.put(0, 8 - self.n)

    def bytes(self):
        self.align()
        return bytes(self.out)


# Maximum distance, by hand: a stored block of 32768 bytes, then a fixed block with one
# 258-byte match 32768 bytes back (zlib's deflate never reaches back that far).
block = bytes(rng.randrange(256) for _ in range(32768))
b = Bits()
b.put(0, 1); b.put(0, 2); b.align()
b.out += struct.pack("<HH", 32768, 0xFFFF ^ 32768) + block
b.put(1, 1); b.put(1, 2)            # final, fixed
b.put_code(0b11000101, 8)           # symbol 285: length 258
b.put_code(29, 5)                   # distance code 29: 24577 + 13 extra bits
b.put(32768 - 24577, 13)
b.put_code(0, 7)                    # end of block
add("match at the maximum distance (32768)", b.bytes(), block + block[:258])

with open("cases.bin", "wb") as f:
    for name, stream, output in cases:
        n = name.encode()
        f.write(struct.pack("<I", len(n)) + n + struct.pack("<I", len(stream)) + stream + struct.pack("<I", len(output)) + output)
print(len(cases), "cases")
