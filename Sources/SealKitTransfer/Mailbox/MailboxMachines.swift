/// The server-side resources one wormhole holds, each as a small explicit state machine
/// (after magic-wormhole's `_nameplate.py`, `_mailbox.py` and `_order.py`). The machines only
/// decide; `Wormhole` sends what they return and feeds them what the server answers.

/// A nameplate: claimed for the time it takes both sides to meet, released as soon as the
/// peer's first message arrives (or on any way out), so the number can be reused.
struct NameplateMachine: Equatable {
    enum State: Equatable {
        case none
        case claiming(String)
        case claimed(String)
        case releasing(String)
        case released
    }
    private(set) var state = State.none

    /// The nameplate to claim; nil when one is already held.
    mutating func claim(_ nameplate: String) -> ClientMessage? {
        guard case .none = state else { return nil }
        state = .claiming(nameplate)
        return .claim(nameplate: nameplate)
    }

    /// The server confirmed the claim. A late confirmation after a release changes nothing.
    mutating func gotClaimed() -> Bool {
        guard case .claiming(let nameplate) = state else { return false }
        state = .claimed(nameplate)
        return true
    }

    /// The release to send; nil when nothing is held or a release is already under way.
    mutating func release() -> ClientMessage? {
        switch state {
        case .claiming(let nameplate), .claimed(let nameplate):
            state = .releasing(nameplate)
            return .release(nameplate: nameplate)
        case .none:
            state = .released
            return nil
        case .releasing, .released:
            return nil
        }
    }

    mutating func gotReleased() {
        if case .releasing = state { state = .released }
    }

    /// Whether nothing is held on the server any more (or never was).
    var isSettled: Bool {
        switch state {
        case .none, .released: return true
        default: return false
        }
    }

    /// The nameplate held (claiming, claimed or being released), for a last-moment release.
    var held: String? {
        switch state {
        case .claiming(let nameplate), .claimed(let nameplate), .releasing(let nameplate): return nameplate
        default: return nil
        }
    }
}

/// A mailbox: opened once its id is known, closed with a mood on every way out.
struct MailboxMachine: Equatable {
    enum State: Equatable {
        case none
        case open(String)
        case closing(String)
        case closed
    }
    private(set) var state = State.none

    mutating func open(_ mailbox: String) -> ClientMessage? {
        guard case .none = state else { return nil }
        state = .open(mailbox)
        return .open(mailbox: mailbox)
    }

    /// The close to send; nil when the mailbox was never opened or is already closing.
    mutating func close(mood: Mood) -> ClientMessage? {
        switch state {
        case .open(let mailbox):
            state = .closing(mailbox)
            return .close(mailbox: mailbox, mood: mood.rawValue)
        case .none:
            state = .closed
            return nil
        case .closing, .closed:
            return nil
        }
    }

    mutating func gotClosed() {
        if case .closing = state { state = .closed }
    }

    var isSettled: Bool {
        switch state {
        case .none, .closed: return true
        default: return false
        }
    }

    var isOpen: Bool {
        if case .open = state { return true }
        return false
    }

    var held: String? {
        switch state {
        case .open(let mailbox), .closing(let mailbox): return mailbox
        default: return nil
        }
    }
}

/// How a wormhole ended, told to the server when closing (magic-wormhole's moods).
package enum Mood: String, Sendable {
    /// The transfer finished.
    case happy
    /// Nobody came (timeout, or the user gave up before a peer appeared).
    case lonely
    /// A message did not decrypt: a wrong code or an attacker.
    case scary
    /// Something else failed.
    case errory
}

/// One message the peer added to the mailbox.
struct PeerMessage: Equatable {
    let side: String
    let phase: String
    let body: [UInt8]
}

/// Delivery order for the peer's messages: each phase once, and nothing before `pake`
/// (a reconnecting or fast peer's `version` can arrive first; it waits here until the key exists).
struct OrderMachine {
    private(set) var hasPAKE = false
    private var stash: [PeerMessage] = []
    private var seen: Set<String> = []
    /// Bytes waiting in the stash (side, phase and body all count), bounded with `maximumStashBytes`.
    private var stashedBytes = 0
    /// What may wait for the PAKE message. A SealKit or magic-wormhole peer sends at most `version`
    /// before it; the rest is room for reconnects. Past either bound the relay, or whoever sits on a
    /// plain `ws://` path to it, is flooding us: memory stays bounded however long the timeout.
    static let maximumStashedMessages = 64
    static let maximumStashBytes = 1024 * 1024

    enum Outcome: Equatable {
        /// Messages to handle now, `pake` first.
        case deliver([PeerMessage])
        /// Too much arrived before the PAKE message.
        case overflow
    }

    /// Takes one message from the peer; repeats of a phase are dropped (the server replays
    /// the mailbox to a reconnecting client).
    mutating func receive(_ message: PeerMessage) -> Outcome {
        guard seen.insert(message.phase).inserted else { return .deliver([]) }
        if message.phase == "pake" {
            hasPAKE = true
            let waiting = stash
            stash = []
            stashedBytes = 0
            return .deliver([message] + waiting)
        }
        if hasPAKE { return .deliver([message]) }
        stashedBytes += message.side.utf8.count + message.phase.utf8.count + message.body.count
        guard stash.count < Self.maximumStashedMessages, stashedBytes <= Self.maximumStashBytes else { return .overflow }
        stash.append(message)
        return .deliver([])
    }
}
