import Testing

/// Field `index` (from 0) of a line `sealkit` printed, split at `separator`: a line with fewer fields records an issue
/// and throws, so that a command printing less than its contract fails its test instead of trapping the test process
/// (which would lose every pending result and leave the other tests' daemons running).
func field(
    _ index: Int, of line: some StringProtocol, separator: Character = "\t", sourceLocation: SourceLocation = #_sourceLocation
) throws -> String {
    let fields = line.split(separator: separator, omittingEmptySubsequences: false)
    try #require(fields.count > index, "wanted field \(index + 1) of \(fields.count)", sourceLocation: sourceLocation)
    return String(fields[index])
}
