import Foundation
import Glibc

/// Which presenter a message is for. In this process it is the registered object's identity;
/// `process` names the process that holds the object, so a transport to presenters in other
/// processes can give its presenters addresses of the same shape.
struct PresenterID: Hashable, Sendable, CustomStringConvertible {
    let process: Int32
    let number: UInt

    /// The ID of a presenter object of this process.
    init(_ presenter: any FilePresenter) {
        process = Self.thisProcess
        number = UInt(bitPattern: ObjectIdentifier(presenter))
    }

    init(process: Int32, number: UInt) {
        self.process = process
        self.number = number
    }

    var isInThisProcess: Bool { process == Self.thisProcess }

    static let thisProcess = getpid()

    var description: String { "presenter \(number) of process \(process)" }
}

/// A presenter found by the registry, and the canonical path of the item it presents.
struct PresenterAddress: Hashable, Sendable {
    let id: PresenterID
    let path: String
}

/// Names the lock owner of a coordinator that asked a presenter something it may answer by
/// coordinating itself (a save, a deletion): while the presenter answers, its own coordinations
/// join that owner's locks. The token is a number looked up in `LockLending`, so a request can
/// carry it as a plain value.
struct BorrowToken: Hashable, Sendable {
    let value: UInt64
}

/// Names a reacquirer a presenter gave with its relinquishment; it is run later by sending
/// `.reacquire` with this number to the same presenter.
struct ReacquirerID: Hashable, Sendable {
    let value: UInt64
}

/// Everything a coordinator says to a presenter. Each case is one `FilePresenter` method.
enum PresenterMessage: Sendable, Equatable {
    /// `relinquishPresentedItem(toReader:)`; answered with `.relinquished`.
    case relinquishToReader
    /// `relinquishPresentedItem(toWriter:)`; answered with `.relinquished`.
    case relinquishToWriter
    /// Runs the reacquirer the presenter gave when it relinquished; no answer.
    case reacquire(ReacquirerID)
    /// `savePresentedItemChanges(completionHandler:)`; answered with `.completed`.
    case saveChanges
    /// `accommodatePresentedItemDeletion(completionHandler:)`; answered with `.completed`.
    case accommodateDeletion
    /// `accommodatePresentedItemEviction(completionHandler:)`; answered with `.completed`.
    case accommodateEviction
    /// `accommodatePresentedSubitemDeletion(at:completionHandler:)`; answered with `.completed`.
    case accommodateSubitemDeletion(at: URL)
    /// `presentedItemDidChange()`; no answer.
    case itemDidChange
    /// `presentedItemDidMove(to:)`; no answer.
    case itemDidMove(to: URL)
    /// `presentedSubitemDidAppear(at:)`; no answer.
    case subitemDidAppear(at: URL)
    /// `presentedSubitemDidChange(at:)`; no answer.
    case subitemDidChange(at: URL)
    /// `presentedSubitem(at:didMoveTo:)`; no answer.
    case subitemDidMove(from: URL, to: URL)
    /// `presentedItemDidGain(_:)`; no answer.
    case versionDidGain(FileVersionReference)
    /// `presentedItemDidLose(_:)`; no answer.
    case versionDidLose(FileVersionReference)
    /// `presentedItemDidResolveConflict(_:)`; no answer.
    case versionDidResolveConflict(FileVersionReference)

    /// The answer a coordinator waits for.
    enum ExpectedAnswer: Sendable, Equatable {
        /// A notification: nobody waits.
        case none
        /// The presenter gives the item up, maybe with a reacquirer.
        case relinquishment
        /// The presenter calls a completion handler, with an error to refuse.
        case completion
    }

    /// A request to step aside for an access or to save first (what a landing download's
    /// write asks), as opposed to a deletion, an eviction or a notification.
    var isRelinquishOrSave: Bool {
        switch self {
        case .relinquishToReader, .relinquishToWriter, .saveChanges: true
        default: false
        }
    }

    var expectedAnswer: ExpectedAnswer {
        switch self {
        case .relinquishToReader, .relinquishToWriter: return .relinquishment
        case .saveChanges, .accommodateDeletion, .accommodateEviction, .accommodateSubitemDeletion: return .completion
        case .reacquire, .itemDidChange, .itemDidMove, .subitemDidAppear, .subitemDidChange, .subitemDidMove,
             .versionDidGain, .versionDidLose, .versionDidResolveConflict: return .none
        }
    }

    /// What stands for the answer of a presenter in another process that cannot give one (gone,
    /// unreachable, past the answer limit, flooded, in a wait cycle, or too old to know the
    /// message): the protocol's defaults — relinquished, done — except for an eviction, which a
    /// presenter that did not say yes refuses (Apple's rule: no answer, no eviction). `nil` for
    /// notifications. `path` is the presented item's canonical path.
    func unansweredDefault(path: String) -> PresenterAnswer? {
        switch expectedAnswer {
        case .none: return nil
        case .relinquishment: return .relinquished(reacquirer: nil)
        case .completion:
            if case .accommodateEviction = self { return .completed(EvictionNotAccommodated(url: CanonicalPath.url(for: path))) }
            return .completed(nil)
        }
    }

    /// Whether the presenter may coordinate (and so borrow the asker's locks, in this process)
    /// while it answers.
    var lendsLocks: Bool { expectedAnswer == .completion }

    /// The presenter method's name, for log lines.
    var logName: String {
        switch self {
        case .relinquishToReader: "relinquishPresentedItem(toReader:)"
        case .relinquishToWriter: "relinquishPresentedItem(toWriter:)"
        case .reacquire: "a reacquirer"
        case .saveChanges: "savePresentedItemChanges"
        case .accommodateDeletion: "accommodatePresentedItemDeletion"
        case .accommodateEviction: "accommodatePresentedItemEviction"
        case .accommodateSubitemDeletion: "accommodatePresentedSubitemDeletion"
        case .itemDidChange: "presentedItemDidChange"
        case .itemDidMove: "presentedItemDidMove"
        case .subitemDidAppear: "presentedSubitemDidAppear"
        case .subitemDidChange: "presentedSubitemDidChange"
        case .subitemDidMove: "presentedSubitem(at:didMoveTo:)"
        case .versionDidGain: "presentedItemDidGain"
        case .versionDidLose: "presentedItemDidLose"
        case .versionDidResolveConflict: "presentedItemDidResolveConflict"
        }
    }
}

/// A presenter's answer to a request that expects one.
enum PresenterAnswer: Sendable {
    /// It gave the item up; `reacquirer` is sent back as `.reacquire` when the access ends.
    case relinquished(reacquirer: ReacquirerID?)
    /// It completed the request; a non-nil error refuses the access.
    case completed((any Error)?)
}

/// One message to one presenter, as a value: what the coordinator sends through a
/// `PresenterDelivery`.
struct PresenterRequest: Sendable {
    /// Which presenter.
    let presenter: PresenterID
    /// The canonical path of the item the presenter presents, as the registry knows it.
    let presentedPath: String
    /// What it is told or asked (with the item URLs that go with it).
    let message: PresenterMessage
    /// For requests the presenter may answer by coordinating: the asker's lock owner to join.
    let borrow: BorrowToken?

    var expectedAnswer: PresenterMessage.ExpectedAnswer { message.expectedAnswer }
}

/// A reacquirer received, with the presenter to send it back to and the delivery that carries it.
struct Reacquirer: Sendable {
    let presenter: PresenterID
    let presentedPath: String
    let id: ReacquirerID
    let delivery: any PresenterDelivery

    /// Sends `.reacquire` to the presenter (delivered asynchronously on its queue).
    func send() {
        delivery.send(PresenterRequest(presenter: presenter, presentedPath: presentedPath,
                                       message: .reacquire(id), borrow: nil), answer: nil)
    }
}
