import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An SVG document parsed with Foundation's XML parser, for chart tests: every element with its
/// attributes and text, in document order, and the numbers in them.
struct SVGDocument {
    struct Element {
        var name: String
        var attributes: [String: String]
        var text: String
    }

    struct ParseError: Error, CustomStringConvertible {
        var description: String
    }

    /// The elements in document order (the root `svg` first).
    var elements: [Element]

    /// Parses `text`; throws when it is not well-formed XML.
    init(_ text: String) throws {
        let delegate = Collector()
        let parser = XMLParser(data: Data(text.utf8))
        parser.delegate = delegate
        guard parser.parse() else {
            throw ParseError(
                description: "not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "unknown") at line \(parser.lineNumber)")
        }
        elements = delegate.elements
    }

    var root: Element? { elements.first }

    /// The view box `(minX, minY, width, height)` of the root.
    var viewBox: (Double, Double, Double, Double)? {
        guard let parts = root?.attributes["viewBox"]?.split(separator: " ").compactMap({ Double($0) }), parts.count == 4 else {
            return nil
        }
        return (parts[0], parts[1], parts[2], parts[3])
    }

    func all(_ name: String) -> [Element] { elements.filter { $0.name == name } }

    /// The points of a path's `d` (absolute M, L, H, V, Z only), one array per subpath; nil when
    /// it uses anything else (the chart promises absolute commands only).
    static func subpaths(_ d: String) -> [[(Double, Double)]]? {
        var out: [[(Double, Double)]] = []
        var x = 0.0, y = 0.0
        var scanner = Substring(d)
        func number() -> Double? {
            scanner = scanner.drop { $0 == " " || $0 == "," }
            let text = scanner.prefix { $0.isNumber || $0 == "." || $0 == "-" || $0 == "e" || $0 == "+" }
            scanner = scanner.dropFirst(text.count)
            return Double(text)
        }
        while let command = scanner.first {
            scanner = scanner.dropFirst()
            switch command {
            case "M":
                guard let a = number(), let b = number() else { return nil }
                (x, y) = (a, b)
                out.append([(x, y)])
            case "L":
                guard let a = number(), let b = number(), !out.isEmpty else { return nil }
                (x, y) = (a, b)
                out[out.count - 1].append((x, y))
            case "H":
                guard let a = number(), !out.isEmpty else { return nil }
                x = a
                out[out.count - 1].append((x, y))
            case "V":
                guard let b = number(), !out.isEmpty else { return nil }
                y = b
                out[out.count - 1].append((x, y))
            case "Z":
                break
            case " ":
                continue
            default:
                return nil
            }
        }
        return out
    }

    /// Every coordinate in the document: numeric position attributes and path points, with
    /// where each came from; nil entries are values that are not numbers at all.
    func coordinates() -> [(what: String, x: Double?, y: Double?)] {
        var out: [(String, Double?, Double?)] = []
        for e in elements {
            for (key, value) in e.attributes.sorted(by: { $0.key < $1.key }) {
                switch key {
                case "x", "cx", "x1", "x2", "width": out.append(("\(e.name) \(key)=\(value)", Double(value) ?? .nan, nil))
                case "y", "cy", "y1", "y2", "height": out.append(("\(e.name) \(key)=\(value)", nil, Double(value) ?? .nan))
                case "d":
                    guard let paths = Self.subpaths(value) else {
                        out.append(("path d with other commands: \(value.prefix(60))", .nan, .nan))
                        continue
                    }
                    for point in paths.joined() { out.append(("path point", point.0, point.1)) }
                default: break
                }
            }
        }
        return out
    }

    private final class Collector: NSObject, XMLParserDelegate {
        var elements: [Element] = []
        private var open: [Int] = []

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            open.append(elements.count)
            elements.append(Element(name: name, attributes: attributes, text: ""))
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            open.removeLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if let last = open.last { elements[last].text += string }
        }
    }
}
