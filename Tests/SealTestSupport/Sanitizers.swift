import Foundation

/// Whether this run is `Scripts/test --sanitize`: its `sealkit` is built with AddressSanitizer or
/// ThreadSanitizer, whose shadow memory and quarantine raise memory use and slow it down several times.
/// Memory and time bounds scale for it; what a command prints and its exit status do not.
public enum Sanitizers {
    /// True when the environment carries a sanitizer's options, as `Scripts/test --sanitize` sets them.
    public static let active = ["ASAN_OPTIONS", "TSAN_OPTIONS"].contains { ProcessInfo.processInfo.environment[$0] != nil }
}
