import Foundation
import SealKit
import SealTestSupport
import Testing

/// `SealKitError.Reason` is a struct of static values: apps compare and switch (with a `default:`) as
/// before, each value names itself, and `Reason.all`, which the CLI's exit-status tests go through, lists every
/// value declared.
@Suite("SealKitError.Reason")
struct ReasonTests {
    /// `public static let NAME = Reason("NAME")` lines of SealKitError.swift, in order.
    static func declared() throws -> [(name: String, text: String)] {
        let source = try String(
            contentsOf: Repository.root.appendingPathComponent("Sources/SealKit/Core/SealKitError.swift"), encoding: .utf8)
        return source.matches(of: /public static let (\w+) = Reason\("([^"]*)"\)/).map { (String($0.1), String($0.2)) }
    }

    @Test func allListsEveryDeclaredReasonOnceInOrder() throws {
        let declared = try Self.declared()
        #expect(declared.count >= 40)
        #expect(SealKitError.Reason.all.map(\.description) == declared.map(\.name))
        #expect(Set(SealKitError.Reason.all).count == SealKitError.Reason.all.count)
    }

    @Test func eachReasonIsNamedAsItIsSpelled() throws {
        for (name, text) in try Self.declared() { #expect(name == text) }
        #expect(SealKitError.Reason.wrongPlace.description == "wrongPlace")
        #expect("\(SealKitError.Reason.keyElsewhere)" == "keyElsewhere")
    }

    @Test func reasonsCompareAndSwitchAsCasesDid() {
        let reason = SealKitError.Reason.wrongPlace
        #expect(reason == .wrongPlace && reason != .notBound)
        let said: String
        switch reason {
        case .notBound: said = "v1"
        case .wrongPlace: said = "elsewhere"
        default: said = "other"
        }
        #expect(said == "elsewhere")
    }
}
