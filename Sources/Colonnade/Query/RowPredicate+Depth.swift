// How deep a predicate nests, measured without recursion (see `DeepRecursion`).

extension RowPredicate {
    /// Levels of the tree, the expressions in comparisons included, measured without recursion.
    /// - Complexity: O(nodes).
    var treeDepth: Int {
        var deepest = 0
        var stack: [(RowPredicate, Int)] = [(self, 1)]
        while let (p, d) = stack.popLast() {
            switch p {
            case .range, .integerRange, .dates, .tickers, .constant: deepest = Swift.max(deepest, d)
            case .compare(let e, _): deepest = Swift.max(deepest, d + e.treeDepth)
            case let .compareExpressions(l, r, _): deepest = Swift.max(deepest, d + Swift.max(l.treeDepth, r.treeDepth))
            case .not(let x): stack.append((x, d + 1))
            case .and(let xs), .or(let xs): for x in xs { stack.append((x, d + 1)) }
            }
        }
        return deepest
    }
}
