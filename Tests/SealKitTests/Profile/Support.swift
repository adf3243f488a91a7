import Foundation
import SealKit
import SealTestSupport
import Testing


enum Fixture {
    static let directory = Repository.fixture("profile")

    static func json(_ name: String) throws -> JSONValue {
        try JSONValue.parse([UInt8](Data(contentsOf: directory.appendingPathComponent(name))))
    }
}

/// Catches the typed error of `body`, failing the test when nothing is thrown.
func profileError(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> ProfileError? {
    do {
        try body()
        Issue.record("expected a ProfileError", sourceLocation: sourceLocation)
        return nil
    } catch let error as ProfileError {
        return error
    } catch {
        Issue.record("expected a ProfileError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

func schemaError(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> SchemaError? {
    do {
        _ = try ProfileSchema(parsing: text)
        Issue.record("expected a SchemaError for \(text)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

extension JSONValue {
    /// The fields of a profile in Rownd's user-state shape.
    var data: JSONValue { self["data"] ?? .null }
}
