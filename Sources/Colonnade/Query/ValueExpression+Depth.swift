// How deep an expression nests, measured without recursion (see `DeepRecursion`).

extension ValueExpression {
    /// Levels of the tree (a column or a number is 1), measured without recursion.
    /// - Complexity: O(nodes).
    var treeDepth: Int {
        var deepest = 0
        var stack: [(ValueExpression, Int)] = [(self, 1)]
        while let (e, d) = stack.popLast() {
            deepest = Swift.max(deepest, d)
            switch e {
            case .column, .number: break
            case .negate(let x), .math(_, let x), .series(_, let x, _): stack.append((x, d + 1))
            case .crossTicker(let c): for x in c.operands { stack.append((x, d + 1)) }
            case let .chain(first, steps):
                stack.append((first, d + 1))
                for step in steps { stack.append((step.operand, d + 1)) }
            case .function(_, let xs): for x in xs { stack.append((x, d + 1)) }
            case .nullTest(let x): stack.append((x, d + 1))
            case let .conditional(branches, otherwise):
                for b in branches {
                    deepest = Swift.max(deepest, d + b.condition.treeDepth)
                    stack.append((b.value, d + 1))
                }
                if let otherwise { stack.append((otherwise, d + 1)) }
            }
        }
        return deepest
    }
}
