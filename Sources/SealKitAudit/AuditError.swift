import SealKit

/// Why an audit could not run. Problems inside the files are findings, not errors;
/// these are problems with the request or the file system.
package enum AuditError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A path given does not exist.
    case missingPath(String)
    /// A file named directly is not `.json`, `.ndjson` or `.jsonl`.
    case unsupportedFile(String)
    /// No paths were given.
    case noPaths
    /// A file or folder exists but could not be opened, listed or read.
    case unreadable(path: String, reason: String)
    /// The schema file could not be used.
    case invalidSchema(path: String, reason: String)
    /// A line of tagged input (`AuditFacts`) without its `FILE LINE ` tag, by its position in the input.
    case untaggedLine(Int)
    /// A line of merged facts (`AuditFacts.report`) that is not one, by its position in the input.
    case badFacts(line: Int, reason: String)
    /// More distinct nonces than the audit's tables could hold (their limit, or the memory the system gave),
    /// with the number they held.
    case tooManyNonces(Int)

    package var description: String {
        switch self {
        case .missingPath(let path):
            return "\(path): no such file or folder; give the files or folders to audit"
        case .unsupportedFile(let path):
            return "\(path): cannot tell its format; audit reads .json, .ndjson and .jsonl files"
        case .noPaths:
            return "give at least one file or folder to audit"
        case .unreadable(let path, let reason):
            return "cannot read \(path): \(reason)"
        case .invalidSchema(let path, let reason):
            return "\(path): \(reason)"
        case .untaggedLine(let line):
            return "line \(line) of the input does not start with its place (FILE LINE, two numbers)"
        case .badFacts(let line, let reason):
            return "line \(line) of the facts is not one: \(reason)"
        case .tooManyNonces(let count):
            return "the audit's tables could hold no more than \(count) distinct nonces in the memory the system gave: audit an export this large with the Spark job"
        }
    }
}

extension SealKitError {
    /// An audit that could not run, with its message unchanged.
    package init(_ error: AuditError) {
        switch error {
        case .untaggedLine: self.init(.invalidArgument, error.description, detail: .untaggedLine)
        case .missingPath, .unsupportedFile, .noPaths, .badFacts: self.init(.invalidArgument, error.description)
        case .invalidSchema: self.init(.invalidSchema, error.description)
        case .unreadable: self.init(.fileSystem, error.description)
        case .tooManyNonces: self.init(.tooLarge, error.description)
        }
    }
}
