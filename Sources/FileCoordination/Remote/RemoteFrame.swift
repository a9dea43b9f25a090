import Foundation

/// One frame between the endpoints of two processes (see Docs/RemotePresenters.md). Encoded and
/// decoded by `RemoteMessageCodec`.
enum RemoteFrame: Sendable, Equatable {
    /// A `PresenterRequest` for a presenter of the receiving process.
    case request(RemoteRequest)
    /// The answer to a request that expects one.
    case answer(RemoteAnswer)
    /// "Which of your presenters does an access to this path concern?"
    case lookup(RemoteLookup)
    /// The presenters found by a lookup.
    case lookupAnswer(RemoteLookupAnswer)

}

/// A `PresenterRequest` on the wire: the presenter is named by its number in the receiving
/// process (`PresenterID.number`); the receiver's process id is implied by the connection.
struct RemoteRequest: Sendable, Equatable {
    /// Chosen by the asker; the answer carries it back.
    var id: UInt64
    var presenterNumber: UInt64
    /// The canonical path the presenter is known at (a lossless path string).
    var presentedPath: String
    var message: PresenterMessage
}

/// The answer to a `RemoteRequest`.
struct RemoteAnswer: Sendable, Equatable {
    var id: UInt64
    var outcome: Outcome

    enum Outcome: Sendable, Equatable {
        /// `relinquishPresentedItem(…)` answered; the reacquirer, if any, is named by a number
        /// the presenter's process keeps (sent back in `.reacquire`).
        case relinquished(reacquirer: UInt64?)
        /// A completion handler was called, with this error (nil: success).
        case completed(RemoteErrorDescription?)
        /// No presenter with that number any more: answer as the protocol's defaults do.
        case gone
    }
}

/// Which presenters of the receiving process a lookup asks for.
struct RemoteLookup: Sendable, Equatable {
    struct Scope: OptionSet, Sendable, Hashable {
        let rawValue: UInt8
        /// Presenters of exactly the path.
        static let item = Scope(rawValue: 1)
        /// Presenters of the directories above it.
        static let ancestors = Scope(rawValue: 2)
        /// Presenters of items strictly inside it.
        static let inside = Scope(rawValue: 4)
        static let all: Scope = [.item, .ancestors, .inside]
        /// The item and the directories above it: the presenters every access concerns.
        static let concerning: Scope = [.item, .ancestors]
    }

    var id: UInt64
    var path: String
    var scope: Scope
}

/// The presenters a lookup found: each one's number and the canonical path it presents.
struct RemoteLookupAnswer: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        var presenterNumber: UInt64
        var path: String
    }
    var id: UInt64
    var entries: [Entry]
}

/// An error a presenter in another process answered with, as it travels: the remote error's
/// `NSError` domain, code and localized description. The asker turns it back into an `NSError`
/// (`nsError`), so a coordination it vetoes fails with `CoordinationError.presenterFailed` whose
/// underlying error has the remote error's domain, code and description.
struct RemoteErrorDescription: Sendable, Equatable {
    /// At most this many bytes of description are sent (cut at a character boundary).
    static let descriptionLimit = 4096

    let domain: String
    let code: Int64
    let message: String

    init(domain: String, code: Int64, message: String) {
        self.domain = domain
        self.code = code
        self.message = message
    }

    /// What is sent for a local presenter's error (the texts cut to fit the wire limits).
    init(describing error: any Error) {
        let bridged = error as NSError
        self.init(domain: Self.cut(bridged.domain), code: Int64(bridged.code), message: Self.cut(bridged.localizedDescription))
    }

    /// The error the asker throws inside `.presenterFailed`.
    var nsError: NSError {
        NSError(domain: domain, code: Int(truncatingIfNeeded: code), userInfo: [NSLocalizedDescriptionKey: message])
    }

    /// `text` cut to at most `descriptionLimit` UTF-8 bytes, at a character boundary.
    static func cut(_ text: String) -> String {
        guard text.utf8.count > descriptionLimit else { return text }
        var result = ""
        var count = 0
        for character in text {
            let size = character.utf8.count
            if count + size > descriptionLimit { break }
            result.append(character)
            count += size
        }
        return result
    }
}
