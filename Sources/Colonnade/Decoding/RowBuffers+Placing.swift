/// Handing decoded rows to a `ColumnAssembler` instead of building a table per input.
extension RowBuffers {
    /// The rows with the permutation that sorts them by (ticker number, date) and their ticker
    /// index, checked as `makeTable` checks them, but not copied anywhere.
    /// - Throws: `.duplicateDate` (1-based input rows), naming `source`.
    package func makeRows(
        valueNames: [String], tickers: [TickerEntry], dateColumnName: String,
        source: String
    ) throws(DecodeError) -> DecodedRows {
        let order = try Self.rowOrder(self, tickers: tickers, source: source)
        let n = count
        var entries = tickers
        if let numbers = tickerNumbers {
            var counts = [Int](repeating: 0, count: tickers.count)
            for r in 0 ..< n { counts[Int(numbers[r])] += 1 }
            var next = 0
            for i in entries.indices {
                entries[i].firstRow = next
                entries[i].rowCount = counts[i]
                next += counts[i]
            }
        } else if !entries.isEmpty {
            for i in entries.indices {
                entries[i].firstRow = 0
                entries[i].rowCount = 0
            }
            entries[0].rowCount = n
        }
        let reversal = order.map(Self.isReversal) ?? false
        return DecodedRows(
            buffers: self, order: order, orderIsReversal: reversal, tickers: entries, valueNames: valueNames,
            dateColumnName: dateColumnName)
    }

    /// Whether `order` is n − 1, n − 2, …, 0 (one pass the compiler vectorizes).
    static func isReversal(_ order: [Int32]) -> Bool {
        order.withUnsafeBufferPointer { o in
            let last = Int32(truncatingIfNeeded: o.count &- 1)
            var differs: Int32 = 0
            for i in 0 ..< o.count { differs |= o[i] ^ (last &- Int32(truncatingIfNeeded: i)) }
            return differs == 0
        }
    }

    /// Copies value column `column` into `destination` in `order` (input row numbers) or in
    /// input order; returns the output rows (from 0) that are null.
    /// `reversed` says `order` is the input reversed: the copy then reads backwards (a loop the
    /// compiler vectorizes) instead of gathering through `order` (5 % of a one-thread JSON import).
    func copyColumn(
        _ column: Int, to destination: UnsafeMutablePointer<Double>, order: UnsafeBufferPointer<Int32>?,
        reversed: Bool
    ) -> [Int] {
        let n = count
        let src = values[column]
        if reversed {
            for i in 0 ..< n { destination[i] = src[n &- 1 &- i] }
        } else if let order {
            // Safe: order is a permutation of 0..<n.
            for i in 0 ..< n { destination[i] = src[Int(order[i])] }
        } else if n > 0 {
            destination.update(from: src, count: n)
        }
        return nullRows(column, order: order)
    }

    /// The rows of value column `column` in input order (a null's slot holds 0), for rows that
    /// need no sorting; valid until the buffers grow or are freed.
    func valuesInInputOrder(_ column: Int) -> UnsafePointer<Double> {
        UnsafePointer(values[column])
    }

    /// The dates in input order; valid until the buffers grow or are freed.
    var datesInInputOrder: UnsafePointer<Int32> {
        UnsafePointer(dates)
    }

    /// The output rows (from 0) of value column `column` in `order` or input order that are null.
    func nullRows(_ column: Int, order: UnsafeBufferPointer<Int32>?) -> [Int] {
        let n = count
        guard let bits = nulls[column] else { return [] }
        var rows: [Int] = []
        for i in 0 ..< n {
            let r = order.map { Int($0[i]) } ?? i
            if bits[r >> 6] & (1 << UInt64(r & 63)) != 0 { rows.append(i) }
        }
        return rows
    }

    /// Copies the dates into `destination` in `order` or input order.
    func copyDates(to destination: UnsafeMutablePointer<Int32>, order: UnsafeBufferPointer<Int32>?, reversed: Bool) {
        let n = count
        if reversed {
            for i in 0 ..< n { destination[i] = dates[n &- 1 &- i] }
        } else if let order {
            for i in 0 ..< n { destination[i] = dates[Int(order[i])] }
        } else if n > 0 {
            destination.update(from: dates, count: n)
        }
    }
}

extension DecodedRows {
    /// Copies the dates into `destination` in table order (backwards for a reversal).
    func copyDates(to destination: UnsafeMutablePointer<Int32>) {
        withOrder { buffers.copyDates(to: destination, order: $0, reversed: orderIsReversal) }
    }

    /// Copies value column `column` into `destination` in table order; returns the output rows
    /// (from 0) that are null.
    func copyColumn(_ column: Int, to destination: UnsafeMutablePointer<Double>) -> [Int] {
        withOrder { buffers.copyColumn(column, to: destination, order: $0, reversed: orderIsReversal) }
    }

    private func withOrder<R>(_ body: (UnsafeBufferPointer<Int32>?) -> R) -> R {
        guard let order else { return body(nil) }
        return order.withUnsafeBufferPointer { body($0) }
    }
}
