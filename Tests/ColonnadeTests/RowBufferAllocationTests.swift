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
        #expect(
            DecodeError.outOfMemory(source: "x.json", rows: 7, bytes: Int.max).description
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
            buffers.tickerNumbers![row] = 0
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
        let first = try buffers.takeColumn(0, order: nil)
        let second = try buffers.takeColumn(1, order: nil)
        #expect((0 ..< 16).map { first.value(at: $0) } == (0 ..< 16).map { Double?(Double($0)) })
        #expect((0 ..< 16).map { second.value(at: $0) } == (0 ..< 16).map { $0 == 3 ? nil : Double?(Double($0) / 2) })
    }

    /// Moving the rows into a table's columns allocates each column once more: when that fails,
    /// the error names the input and nothing is lost (the rows are still in the buffers, and a
    /// later take, with memory to spare, gives them all). The count is made absurd only for the
    /// allocation: it fails before any row is read.
    @Test func aColumnThatCannotBeAllocatedThrowsAndKeepsTheRows() throws {
        let buffers = try RowBuffers(columnCount: 1, estimatedRows: 100, withTickers: false, source: "take.csv")
        for row in 0 ..< 100 {
            buffers.values[0][row] = row % 7 == 0 ? 0 : Double(row) * 1.5
            buffers.dates[row] = Int32(row)
            if row % 7 == 0 { try buffers.setNull(column: 0, row: row) }
        }
        buffers.count = 1 << 50
        #expect(throws: DecodeError.outOfMemory(source: "take.csv", rows: 1 << 50, bytes: 1 << 53)) {
            _ = try buffers.takeColumn(0, order: nil)
        }
        #expect(throws: DecodeError.outOfMemory(source: "take.csv", rows: 1 << 50, bytes: 1 << 52)) {
            _ = try buffers.takeDates(order: nil)
        }
        buffers.count = 100
        let column = try buffers.takeColumn(0, order: nil)
        let dates = try buffers.takeDates(order: nil)
        let expected: [Double?] = (0 ..< 100).map { $0 % 7 == 0 ? nil : Double($0) * 1.5 }
        #expect((0 ..< 100).map { column.value(at: $0) } == expected)
        #expect(dates == Column<Int32>((0 ..< 100).map { Int32($0) }))
    }

    /// The failable allocations under those takes: nil for a size no machine has (2^50 bytes,
    /// which `mmap` and `posix_memalign` refuse at once whatever the overcommit setting) or one
    /// that overflows, and zeroed, 64-byte-aligned storage otherwise.
    @Test func storageThatCannotBeAllocatedIsNil() throws {
        #expect(ColumnStorage(allocatingByteCount: 1 << 50) == nil)
        #expect(ColumnStorage(allocatingByteCount: 1 << 50, mapLargeBuffers: false) == nil)
        #expect(ColumnStorage(allocatingByteCount: Int.max) == nil)
        #expect(Column<Double>(allocatingUnsafeUninitializedCount: 1 << 47) { _ in Issue.record("initializer ran") } == nil)
        #expect(Column<Int32>(allocatingUnsafeUninitializedCount: Int.max / 2) { _ in Issue.record("initializer ran") } == nil)
        #expect(Bitmask(allocatingCount: 1 << 56) == nil)
        for byteCount in [0, 1, 63, 64, 65, (1 << 20) - 1, 1 << 20, 3 << 20] {
            for mapped in [false, true] {
                let storage = try #require(ColumnStorage(allocatingByteCount: byteCount, mapLargeBuffers: mapped))
                #expect(storage.byteCapacity == ColumnStorage.paddedByteCount(byteCount))
                #expect(Int(bitPattern: storage.base) % ColumnStorage.alignment == 0)
                let bytes = UnsafeRawBufferPointer(start: storage.base, count: storage.byteCapacity)
                #expect(bytes.allSatisfy { $0 == 0 }, "\(byteCount) bytes, mapped: \(mapped)")
            }
        }
        let column = try #require(
            Column<Int32>(allocatingUnsafeUninitializedCount: 65) { out in
                for i in out.indices { out[i] = Int32(i) * 3 }
            })
        #expect(column == Column<Int32>((0 ..< 65).map { Int32($0) * 3 }))
        let mask = try #require(Bitmask(allocatingCount: 130, allSet: true))
        #expect(mask == Bitmask(count: 130, allSet: true))
    }

    /// Reusable storage (the columns file readers fill) is zeroed and aligned whether its mapping is
    /// fresh or one a freed storage left: a mapping freed with garbage in it comes back, to the next
    /// storage of its size or up to an eighth smaller, zeroed; a much smaller one gets a new
    /// mapping. (Sizes no other test uses, so the kept mapping is this test's.)
    @Test func reusableStorageIsZeroedWhenItsMappingIsReused() throws {
        #expect(ColumnStorage(reusableByteCount: 1 << 50) == nil)
        #expect(ColumnStorage(reusableByteCount: Int.max) == nil)
        for byteCount in [0, 1, 65, (1 << 20) - 1] {
            let storage = try #require(ColumnStorage(reusableByteCount: byteCount))
            #expect(UnsafeRawBufferPointer(start: storage.base, count: storage.byteCapacity).allSatisfy { $0 == 0 })
        }
        let size = (5 << 20) + 4096 * 3 + 64
        // The first storage is freed at the end of this scope, leaving its mapping to be reused.
        let address: UnsafeMutableRawPointer
        do {
            let first = try #require(ColumnStorage(reusableByteCount: size))
            address = first.base
            #expect(first.byteCapacity == ColumnStorage.paddedByteCount(size))
            first.base.initializeMemory(as: UInt8.self, repeating: 0xA5, count: first.byteCapacity)
        }
        for (byteCount, reused) in [(size, true), (size - size / 10, true), (size / 2, false)] {
            let storage = try #require(ColumnStorage(reusableByteCount: byteCount))
            #expect((storage.base == address) == reused, "\(byteCount) bytes")
            #expect(storage.byteCapacity >= ColumnStorage.paddedByteCount(byteCount))
            #expect(Int(bitPattern: storage.base) % ColumnStorage.alignment == 0)
            #expect(UnsafeRawBufferPointer(start: storage.base, count: storage.byteCapacity).allSatisfy { $0 == 0 }, "\(byteCount) bytes")
            storage.base.initializeMemory(as: UInt8.self, repeating: 0x5A, count: storage.byteCapacity)
        }
    }

    /// Reusable storage whose caller writes every byte below its size (`overwritten: true`, the
    /// Parquet reader's columns) is zeroed from that size on when its mapping is reused: the
    /// padding, and the rest of a kept mapping up to an eighth larger than asked for. (Sizes no
    /// other test uses, so the kept mapping is this test's.)
    @Test func overwrittenReusableStorageZeroesItsPaddingOnly() throws {
        let size = (7 << 20) + 4096 * 5 + 64
        var first: ColumnStorage? = ColumnStorage(reusableByteCount: size, overwritten: true)
        try #require(first != nil)
        let address = first!.base
        first!.base.initializeMemory(as: UInt8.self, repeating: 0xA5, count: first!.byteCapacity)
        first = nil
        #expect(ReusedMappings.keptCount(capacity: ColumnStorage.paddedByteCount(size)) == 1)
        // Asked for 40 bytes past a 64-byte boundary, then a tenth less than the mapping holds.
        for byteCount in [size - 24, size - size / 10] {
            let storage = try #require(ColumnStorage(reusableByteCount: byteCount, overwritten: true))
            #expect(storage.base == address, "\(byteCount) bytes: the kept mapping")
            #expect(storage.byteCapacity == ColumnStorage.paddedByteCount(size))
            let padding = UnsafeRawBufferPointer(start: storage.base + byteCount, count: storage.byteCapacity - byteCount)
            #expect(padding.allSatisfy { $0 == 0 }, "\(byteCount) bytes: \(padding.count) bytes of padding")
            storage.base.initializeMemory(as: UInt8.self, repeating: 0x5A, count: storage.byteCapacity)
        }
    }
}
