extension JSONValue {
    /// The kind of value, for messages, such as "a number" or "null": never the value
    /// itself, so a message naming it is safe to log even when the value is a secret.
    package var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
