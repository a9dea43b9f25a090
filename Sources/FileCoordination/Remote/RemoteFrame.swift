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

    /// The descriptors that travel beside this frame (a request's lent locks), or none.
    var lentDescriptors: [Int32] {
        if case .request(let request) = self { return request.borrow?.descriptors ?? [] }
        return []
    }
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
    /// For requests the presenter may answer by coordinating: the locks lent (see §3 of the design).
    var borrow: RemoteBorrow?
}

/// The locks an asker lends with a save or deletion request. The descriptors travel beside the
/// frame as `SCM_RIGHTS` data, one per holding, in the same order.
struct RemoteBorrow: Sendable, Equatable {
    /// The asker's `BorrowToken` value (for its logs; the receiver makes a token of its own).
    var token: UInt64
    var holdings: [RemoteHolding]
    /// The descriptors of the holdings (same order), as sent or received beside the frame; not
    /// part of the encoded bytes. Received ones belong to whoever handles the request (closed by
    /// the borrowing owner, `LockOwner.endBorrowing`).
    var descriptors: [Int32] = []
}

/// One lock the asker holds and lends: enough for the receiver to rebuild the `LockOwner` holding.
struct RemoteHolding: Sendable, Equatable {
    /// The canonical path of the lock (the item, or the package that contains it).
    var lockPath: String
    /// The purpose identifier when the lock is held in group mode; nil in plain mode.
    var group: String?
    var readers: UInt32
    var writers: UInt32
    var trees: UInt32
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
