extension ExpressionProgram {
    /// The exact node for `f(child, w)` when `child` is a Float64 column with a decimal scale and
    /// `f` has an exact kernel there (`SeriesKernels.hasExactKernel`), else nil. Its lookback is
    /// `w - 1`: exact sums need no restart points.
    static func exactSeries(_ f: ValueExpression.SeriesFunction, _ child: Node, window w: Int, table: QuoteTable) -> Node? {
        guard f == .msum || f == .mavg || f == .mdev, case .column(let i) = child,
              case .float64(let column) = table.columns[i], let scale = column.decimalScale,
              SeriesKernels.hasExactKernel(f, window: w, scale: scale) else { return nil }
        return .exactSeries(f, child, window: w, scale: scale)
    }
}
