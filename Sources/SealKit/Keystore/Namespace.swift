
/// A namespace keeps the keys of different apps or environments apart
/// (Rownd's app-group prefix; separate debug and production configurations).
package struct Namespace: Hashable, Sendable, CustomStringConvertible {
    /// The namespace's name, used as a folder name.
    package let name: String

    /// The namespace used when none is given.
    package static let `default` = Namespace(validated: "default")

    /// Validates a namespace name: 1 to 64 of `A-Z a-z 0-9 . _ -`, not starting with a dot.
    /// - Throws: `NamespaceError.invalid` otherwise.
    package init(_ name: String) throws(NamespaceError) {
        let allowed = name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard allowed, (1...64).contains(name.utf8.count), !name.hasPrefix(".") else { throw .invalid }
        self.name = name
    }

    private init(validated name: String) { self.name = name }

    package var description: String { name }
}

/// Why a namespace name was refused.
package enum NamespaceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The namespace is not 1 to 64 letters, digits, `.`, `_` or `-`, or starts with `.`.
    case invalid

    package var description: String {
        "invalid namespace: use 1 to 64 letters, digits, '.', '_' or '-', not starting with '.'"
    }
}
