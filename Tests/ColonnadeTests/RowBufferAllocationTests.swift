import Testing
@testable import Colonnade

/// The decoders' row buffers report an allocation that fails as `DecodeError.outOfMemory`
/// instead of stopping the process. Sizes here are beyond any 64-bit address space (2^59 bytes,
/// or an overflowing multiplication), so `malloc` fails whatever the machine's memory and
/// overcommit setting; the CLI test (`OutOfMemoryTests`) makes a real allocation fail under a
/// data-segment limit.
@Suite struct RowBufferAllocationTests {
    @Test func anEstimateThatCannotBeAllocatedThrowsNamingTheInput() {
        #expect(throws: DecodeError.outOfMemory(source: "huge.csv", rows: 1 << 56, bytes: 1 << 59)) {
            _ = try RowBuffers(columnCount: 3, estimatedRows: 1 << 56, withTickers: true, source: "huge.csv")
        }
        let error = DecodeError.outOfMemory(source: "huge.csv", rows: 1 << 56, bytes: 1 << 59)
        #expect(error.description == "huge.csv: out of memory: cannot allocate 536870912.0 GiB for 72057594037927936 decoded rows")
    }

    @Test func aSizeThatOverflowsIsOutOfMemoryToo() {
        #expect(throws: DecodeError.outOfMemory(source: "x.json", rows: Int.max / 4, bytes: Int.max)) {
            _ = try RowBuffers(columnCount: 1, estimatedRows: Int.max / 4, withTickers: false, source: "x.json")
        }
        #expect(DecodeError.outOfMemory(source: "x.json", rows: 7, bytes: Int.max).description
            == "x.json: out of memory: cannot allocate more bytes than an address space holds for 7 decoded rows")
    }

    @Test func sizesAreWrittenInReadableUnits() {
        #expect(DecodeError.sizeText(512) == "512 bytes")
        #expect(DecodeError.sizeText(3 << 19) == "1.5 MiB")
        #expect(DecodeError.sizeText(5 << 30) == "5.0 GiB")
    }

    /// A failed growth keeps every row written so far; the buffers stay usable at the old size.
    @Test func growthThatCannotBeAllocatedThrowsAndKeepsTheRows() throws {
        let buffers = try RowBuffers(columnCount: 2, estimatedRows: 16, withTickers: true, source: "grow.csv")
        for row in 0 ..< 16 {
            try buffers.reserve(rows: row + 1)
            buffers.values[0][row] = Double(row)
            buffers.values[1][row] = Double(row) / 2
            buffers.dates[row] = Int32(row)
            buffers.tickerCodes![row] = 0
        }
        buffers.values[1][3] = 0
        try buffers.setNull(column: 1, row: 3)
        buffers.count = 16
        #expect(throws: DecodeError.outOfMemory(source: "grow.csv", rows: 1 << 56, bytes: 1 << 59)) {
            try buffers.reserve(rows: 1 << 56)
        }
        #expect(buffers.capacity == 16)
        try buffers.reserve(rows: 17)
        #expect(buffers.capacity >= 17)
        let first = buffers.takeColumn(0, order: nil)
        let second = buffers.takeColumn(1, order: nil)
        #expect((0 ..< 16).map { first.value(at: $0) } == (0 ..< 16).map { Double?(Double($0)) })
        #expect((0 ..< 16).map { second.value(at: $0) } == (0 ..< 16).map { $0 == 3 ? nil : Double?(Double($0) / 2) })
    }
}
