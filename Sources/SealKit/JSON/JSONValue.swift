/// A JSON value (RFC 8259) that keeps what was written: object members stay in
/// their order and numbers keep their exact text.
///
/// Keeping the number lexeme means nothing drifts through a parse and a write:
/// `12345678901234567890`, `0.1`, `-0` and `1e400` come back exactly as they went in.
/// Values from `parse` never hold duplicate keys; a value built by hand should not either.
package enum JSONValue: Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number as its exact JSON lexeme, such as `-0`, `0.1` or `1e400`.
    /// `parse` validates it; when building one by hand use a valid JSON number.
    case number(String)
    /// A string, unescaped.
    case string(String)
    /// Elements in their order.
    case array([JSONValue])
    /// Members in the order they were written.
    case object([(key: String, value: JSONValue)])
}

extension JSONValue {
    /// The value of the member named `key` when this is an object, otherwise nil. Setting one replaces the
    /// member in place or appends it; setting nil removes it; a value that is not an object is left alone.
    package subscript(key: String) -> JSONValue? {
        get {
            guard case .object(let members) = self else { return nil }
            return members.first { $0.key == key }?.value
        }
        set {
            guard case .object(var members) = self else { return }
            let index = members.firstIndex { $0.key == key }
            switch (index, newValue) {
            case (let index?, let value?): members[index].value = value
            case (let index?, nil): members.remove(at: index)
            case (nil, let value?): members.append((key, value))
            case (nil, nil): return
            }
            self = .object(members)
        }
    }

    /// The text when this is a string.
    package var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The number's exact lexeme when this is a number.
    package var numberLexeme: String? {
        if case .number(let lexeme) = self { return lexeme }
        return nil
    }

    /// The truth value when this is a boolean.
    package var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements when this is an array.
    package var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The members, in order, when this is an object.
    package var objectValue: [(key: String, value: JSONValue)]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// Whether this is `null`.
    package var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension JSONValue: Equatable {
    /// Structural equality: same kinds, same number lexemes (`1.0` is not `1`),
    /// same members in the same order. Strings compare as Swift strings do.
    package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    package init(nilLiteral: ()) { self = .null }
    package init(booleanLiteral value: Bool) { self = .bool(value) }
    package init(integerLiteral value: Int) { self = .number(String(value)) }
    package init(stringLiteral value: String) { self = .string(value) }
    package init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// Members keep the literal's order.
    package init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(elements.map { (key: $0.0, value: $0.1) })
    }
}
