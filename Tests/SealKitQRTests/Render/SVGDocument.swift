import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

/// The parts of an SVG the tests check, read with a real XML parser (which also proves it well-formed).
struct SVGDocument {
    var rootName = ""
    var rootAttributes: [String: String] = [:]
    var rects: [[String: String]] = []
    var paths: [[String: String]] = []

    var path: String { paths.first?["d"] ?? "" }

    init(_ bytes: [UInt8]) throws {
        let collector = ElementCollector()
        let parser = XMLParser(data: Data(bytes))
        parser.delegate = collector
        let parsed = parser.parse()
        try #require(parsed, "SVG is not well-formed XML: \(String(describing: parser.parserError))")
        let elements = collector.elements
        try #require(!elements.isEmpty)
        rootName = elements[0].name
        rootAttributes = elements[0].attributes
        rects = elements.filter { $0.name == "rect" }.map(\.attributes)
        paths = elements.filter { $0.name == "path" }.map(\.attributes)
    }
}

private final class ElementCollector: NSObject, XMLParserDelegate {
    var elements: [(name: String, attributes: [String: String])] = []

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
        qualifiedName: String?, attributes: [String: String] = [:]
    ) {
        elements.append((elementName, attributes))
    }
}
