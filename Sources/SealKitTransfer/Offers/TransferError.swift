#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SealKit

/// Why an offer, reply, part or backup was refused. Each description is one line that
/// says what went wrong and what to do; none repeats key material or passphrases.
package enum TransferError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A problem of the text layer that transfers share with backups (SealKit's `CodeError`): not a
    /// code, a code of another kind or version, damage, parts that do not fit, too many keys, a wrong
    /// backup passphrase. Wrapped, not mirrored, so the two cannot drift apart.
    case code(CodeError)
    /// The reply does not open with this receiver's code: the sender typed another code,
    /// answered another offer, or the reply was altered.
    case wrongCode
    /// A typed code that is not a code.
    case badCode(WormholeCodeError)
    /// The reply is past its expiry time.
    case expired(at: Date, now: Date)
    /// The reply claims a lifetime longer than receivers accept.
    case expiresTooLate(Date)
    /// The reply was made later than this machine's clock allows.
    case madeInTheFuture(Date)
    /// The offer already served a reply.
    case offerUsed
    /// `expiresIn` is outside what a reply may ask for.
    case badLifetime(seconds: Int)

    /// What exactly happened, where the public reason covers cases a person would set right differently.
    package var detail: SealKitError.Detail? {
        switch self {
        case .wrongCode: return .replyDoesNotOpen
        case .offerUsed: return .offerUsed
        case .badLifetime: return .lifetimeOutOfRange
        case .code(let error): return error.detail
        case .badCode, .expired, .expiresTooLate, .madeInTheFuture: return nil
        }
    }

    package var description: String {
        switch self {
        case .wrongCode:
            return "wrong code: the reply does not open with this receiver's code (the sender typed another code, answered another offer, or the reply was altered); nothing was stored"
        case .badCode(let error):
            return error.description
        case .expired(let at, let now):
            return "this reply expired at \(at.formatted(.iso8601)) (\(Int(now.timeIntervalSince(at))) seconds ago): ask the sender to send again; nothing was stored"
        case .expiresTooLate(let date):
            return "this reply says it stays valid until \(date.formatted(.iso8601)), more than 24 hours ahead: refused; check both clocks and send again"
        case .madeInTheFuture(let date):
            return "this reply was made at \(date.formatted(.iso8601)), ahead of this machine's clock: check both clocks and send again"
        case .offerUsed:
            return "this offer was already used (a reply was tried)"
        case .badLifetime(let seconds):
            return "a reply must expire within 1 to 86400 seconds, not \(seconds)"
        case .code(let error):
            return error.description
        }
    }

    /// Runs `body`, giving its text-layer error as a transfer's.
    package static func converting<R>(_ body: () throws(CodeError) -> R) throws(TransferError) -> R {
        do {
            return try body()
        } catch {
            throw .code(error)
        }
    }
}
