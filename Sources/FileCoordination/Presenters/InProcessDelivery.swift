import Foundation
import SystemSupport

/// Delivers `PresenterRequest`s to presenter objects registered in this process, on their
/// `presentedItemOperationQueue` (at once, when the caller already runs on that queue), and turns
/// their callbacks into `PresenterAnswer`s. See `PresenterDelivery` for the contract.
final class InProcessDelivery: PresenterDelivery {
    let registry: PresenterRegistry
    /// The presenter side of lock borrowing, for requests that carry a `BorrowToken`.
    let borrowing: PresenterBorrowing
    /// Reacquirers handed out, until `.reacquire` runs them. The presenter is kept with its
    /// reacquirer (strongly, as Apple does) so the reacquirer runs even if it was unregistered
    /// meanwhile.
    private let reacquirers = Locked<(next: UInt64, table: [UInt64: (any FilePresenter, @Sendable () -> Void)])>((0, [:]))

    init(registry: PresenterRegistry, borrowing: PresenterBorrowing) {
        self.registry = registry
        self.borrowing = borrowing
    }

    /// Delivers `request`. A message about an item inside a presented folder — from a coordinator
    /// of this runtime or of another process — is first shown to the change monitor, which also
    /// sees the kernel's report of the same change: a change it has reported already is not
    /// delivered again, and one delivered here is not reported again by it
    /// (ChangeMonitor+Subtrees.swift, "Coordinated changes are reported once").
    func send(_ request: PresenterRequest, answer: (@Sendable (PresenterAnswer) -> Void)?) {
        let monitor = registry.monitor
        switch request.message {
        case .subitemDidAppear(let url), .subitemDidChange(let url):
            guard monitor.claimAnnouncedSubitem(PathBytes.path(of: url)) else { return }  // no answer expected
        case .accommodateSubitemDeletion(let url):
            monitor.noteAnnouncedSubitem(PathBytes.path(of: url), deleted: true)
        case .subitemDidMove(let from, let to):
            monitor.noteAnnouncedSubitem(PathBytes.path(of: from), deleted: true)
            monitor.noteAnnouncedSubitem(PathBytes.path(of: to), deleted: false)
        default:
            break
        }
        sendUnclaimed(request, answer: answer)
    }

    /// Delivers `request` as is: for the change monitor's own messages.
    func sendUnclaimed(_ request: PresenterRequest, answer: (@Sendable (PresenterAnswer) -> Void)? = nil) {
        if case .reacquire(let id) = request.message {
            runReacquirer(id)
            return
        }
        guard let presenter = registry.presenter(request.presenter) else {
            // Gone since it was looked up: answer as the protocol's defaults would.
            switch request.expectedAnswer {
            case .none: break
            case .relinquishment: answer?(.relinquished(reacquirer: nil))
            case .completion: answer?(.completed(nil))
            }
            return
        }
        let once = AnswerOnce()
        switch request.message {
        case .relinquishToReader, .relinquishToWriter:
            let toWriter = request.message == .relinquishToWriter
            let relinquished: @Sendable ((@Sendable () -> Void)?) -> Void = { [self] reacquirer in
                guard once.first() else { return }
                answer?(.relinquished(reacquirer: reacquirer.map { keep($0, of: presenter) }))
            }
            deliver(to: presenter) {
                if toWriter {
                    presenter.relinquishPresentedItem(toWriter: relinquished)
                } else {
                    presenter.relinquishPresentedItem(toReader: relinquished)
                }
            }
        case .saveChanges, .accommodateDeletion, .accommodateEviction, .accommodateSubitemDeletion:
            let id = request.presenter, token = request.borrow, borrowing = self.borrowing
            if let token { borrowing.begin(id, token: token) }
            let completed: @Sendable ((any Error)?) -> Void = { error in
                guard once.first() else { return }
                if let token { borrowing.end(id, token: token) }
                answer?(.completed(error))
            }
            let message = request.message
            deliver(to: presenter) {
                switch message {
                case .saveChanges: presenter.savePresentedItemChanges(completionHandler: completed)
                case .accommodateDeletion: presenter.accommodatePresentedItemDeletion(completionHandler: completed)
                case .accommodateEviction: presenter.accommodatePresentedItemEviction(completionHandler: completed)
                case .accommodateSubitemDeletion(let url):
                    presenter.accommodatePresentedSubitemDeletion(at: url, completionHandler: completed)
                default: completed(nil)
                }
            }
        case .itemDidChange:
            deliver(to: presenter) { presenter.presentedItemDidChange() }
        case .itemDidMove(let url):
            deliver(to: presenter) { presenter.presentedItemDidMove(to: url) }
        case .subitemDidAppear(let url):
            deliver(to: presenter) { presenter.presentedSubitemDidAppear(at: url) }
        case .subitemDidChange(let url):
            deliver(to: presenter) { presenter.presentedSubitemDidChange(at: url) }
        case .subitemDidMove(let from, let to):
            deliver(to: presenter) { presenter.presentedSubitem(at: from, didMoveTo: to) }
        case .versionDidGain(let version):
            deliver(to: presenter) { presenter.presentedItemDidGain(version) }
        case .versionDidLose(let version):
            deliver(to: presenter) { presenter.presentedItemDidLose(version) }
        case .versionDidResolveConflict(let version):
            deliver(to: presenter) { presenter.presentedItemDidResolveConflict(version) }
        case .reacquire:
            break  // handled above
        }
    }

    /// Reacquirers kept at most: a peer that asks presenters to relinquish and never sends the
    /// `.reacquire` would otherwise grow the table for ever. Beyond it, the oldest one runs (its
    /// writer is long gone: no coordination lasts that many relinquishments).
    static let reacquirerLimit = 4096

    private func keep(_ reacquirer: @escaping @Sendable () -> Void, of presenter: any FilePresenter) -> ReacquirerID {
        let (id, evicted) = reacquirers.withLock { state -> (ReacquirerID, UInt64?) in
            state.next += 1
            state.table[state.next] = (presenter, reacquirer)
            // Ids grow by one: the oldest kept is the smallest (a scan only when over the limit).
            let oldest = state.table.count > Self.reacquirerLimit ? state.table.keys.min() : nil
            return (ReacquirerID(value: state.next), oldest)
        }
        if let evicted {
            RemoteLog.dropped("a reacquirer never asked for (more than \(Self.reacquirerLimit) kept): run now")
            runReacquirer(ReacquirerID(value: evicted))
        }
        return id
    }

    /// Runs a reacquirer on its presenter's queue (always queued, never inline), once.
    private func runReacquirer(_ id: ReacquirerID) {
        guard let (presenter, reacquirer) = reacquirers.withLock({ $0.table.removeValue(forKey: id.value) }) else { return }
        presenter.presentedItemOperationQueue.addOperation(reacquirer)
    }
}
