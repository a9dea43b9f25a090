import Foundation
import Synchronization

/// Decides which presenters are told what about a coordinated access, delivers the messages on
/// their queues, and waits for their answers (Apple's rules; see Docs/Coordination.md, "Who is
/// told what"). The coordinator's own presenter is never messaged about its own accesses.
struct PresenterMessenger {
    let registry: PresenterRegistry
    let ownPresenter: (any FilePresenter)?
    let requester: LockOwner
    let context: WaitContext
    /// Presenters already prepared by a `prepare(forReadingItemsAt:…)` batch of this coordinator.
    var alreadyPrepared: Set<ObjectIdentifier> = []

    typealias Reacquirers = [(any FilePresenter, @Sendable () -> Void)]

    // MARK: Before the accessor

    /// Sends relinquish, save and accommodate-deletion requests, in that order, each round waiting
    /// for every answer. On failure, the reacquirers already received are run before throwing.
    func prepare(_ accesses: [ResolvedAccess]) throws(CoordinationError) -> Reacquirers {
        guard !registry.isEmpty else { return [] }
        var readers: [any FilePresenter] = []
        var writers: [any FilePresenter] = []
        var savers: [any FilePresenter] = []
        var deleted: [any FilePresenter] = []
        var subitemDeletions: [(any FilePresenter, URL)] = []
        for access in accesses {
            let concerned = presentersConcerned(by: access)
            if access.isWrite {
                writers += concerned
                if access.removesItem && access.isDirectory {
                    writers += registry.presentersInside(access.itemPath).map(\.0)
                }
                if access.writingOptions.contains(.forMerging) { savers += concerned }
                // A replace of a place where nothing exists deletes nothing: no deletion messages.
                if access.deletes && access.existedBefore {
                    deleted += registry.presenters(at: access.itemPath).map(\.0)
                    deleted += registry.presentersInside(access.itemPath).map(\.0)
                    let url = URL(fileURLWithPath: access.itemPath)
                    subitemDeletions += registry.presentersOfAncestors(of: access.itemPath).map { ($0.0, url) }
                }
            } else {
                readers += concerned
                if access.readingOptions.isDisjoint(with: [.withoutChanges, .immediatelyAvailableMetadataOnly]) {
                    savers += concerned
                }
            }
        }
        var reacquirers: Reacquirers = []
        do {
            reacquirers += try relinquish(unique(readers), toWriter: false)
            reacquirers += try relinquish(unique(writers), toWriter: true)
            try ask(unique(savers)) { presenter, answer in presenter.savePresentedItemChanges(completionHandler: answer) }
            try ask(unique(deleted)) { presenter, answer in presenter.accommodatePresentedItemDeletion(completionHandler: answer) }
            try ask(subitemDeletions.filter { !isOwn($0.0) && ownPresenter !== $0.0 }.map { pair in
                (pair.0, { (answer: @escaping @Sendable ((any Error)?) -> Void) in
                    pair.0.accommodatePresentedSubitemDeletion(at: pair.1, completionHandler: answer)
                })
            })
        } catch {
            Self.run(reacquirers)
            throw error
        }
        return reacquirers
    }

    /// Every presenter a batch of accesses relinquishes (for `prepare(forReadingItemsAt:…)`).
    func concernedPresenters(_ accesses: [ResolvedAccess]) -> [any FilePresenter] {
        guard !registry.isEmpty else { return [] }
        return unique(accesses.flatMap { presentersConcerned(by: $0) })
    }

    /// Presenters of the item, of the package that contains it, and of items inside that package.
    private func presentersConcerned(by access: ResolvedAccess) -> [any FilePresenter] {
        var result = registry.presenters(at: access.itemPath).map(\.0)
        if access.isInsidePackage || PackageExtensions.isPackage(access.lockPath) {
            if access.isInsidePackage { result += registry.presenters(at: access.lockPath).map(\.0) }
            result += registry.presentersInside(access.lockPath).map(\.0)
        }
        return result
    }

    private func relinquish(_ presenters: [any FilePresenter], toWriter: Bool) throws(CoordinationError) -> Reacquirers {
        guard !presenters.isEmpty else { return [] }
        let collector = AnswerCollector(expecting: presenters.count)
        for presenter in presenters {
            deliver(to: presenter) {
                let answer: @Sendable ((@Sendable () -> Void)?) -> Void = { reacquirer in
                    collector.answer(reacquirer: reacquirer.map { (presenter, $0) })
                }
                if toWriter {
                    presenter.relinquishPresentedItem(toWriter: answer)
                } else {
                    presenter.relinquishPresentedItem(toReader: answer)
                }
            }
        }
        do {
            return try collector.wait(context)
        } catch {
            Self.run(collector.receivedReacquirers)
            throw error
        }
    }

    private func ask(
        _ presenters: [any FilePresenter],
        _ message: @escaping @Sendable (any FilePresenter, @escaping @Sendable ((any Error)?) -> Void) -> Void
    ) throws(CoordinationError) {
        try ask(presenters.map { presenter in
            (presenter, { (answer: @escaping @Sendable ((any Error)?) -> Void) in message(presenter, answer) })
        })
    }

    /// Sends requests that answer through a completion handler. While a presenter works on one,
    /// its own coordinations join the requester's locks (`PresenterBorrowing`).
    private func ask(_ requests: [(any FilePresenter, @Sendable (@escaping @Sendable ((any Error)?) -> Void) -> Void)]) throws(CoordinationError) {
        guard !requests.isEmpty else { return }
        let collector = AnswerCollector(expecting: requests.count)
        let requester = self.requester
        let answers = requests.map { _ in AnswerOnce() }
        for ((presenter, request), answered) in zip(requests, answers) {
            PresenterBorrowing.begin(presenter, lendingTo: requester)
            deliver(to: presenter) {
                request { error in
                    guard answered.first() else { return }
                    PresenterBorrowing.end(presenter)
                    collector.answer(error: error)
                }
            }
        }
        do {
            _ = try collector.wait(context)
        } catch {
            // Presenters that never answered stop borrowing our locks: we are giving them up.
            for ((presenter, _), answered) in zip(requests, answers) where answered.first() {
                PresenterBorrowing.end(presenter)
            }
            throw error
        }
    }

    // MARK: After the accessor

    /// Tells presenters what the access changed: the item changed, a subitem changed or appeared.
    func finish(_ accesses: [ResolvedAccess]) {
        guard !registry.isEmpty else { return }
        for access in accesses where access.isWrite && !access.deletes && !access.writingOptions.contains(.forMoving) {
            let url = URL(fileURLWithPath: access.itemPath)
            for (presenter, _) in registry.presenters(at: access.itemPath) where !isOwn(presenter) {
                deliver(to: presenter) { presenter.presentedItemDidChange() }
            }
            if access.isInsidePackage {
                for (presenter, _) in registry.presenters(at: access.lockPath) where !isOwn(presenter) {
                    deliver(to: presenter) { presenter.presentedItemDidChange() }
                }
            }
            let appeared = !access.existedBefore && FileManager.default.fileExists(atPath: access.itemPath)
            for (presenter, _) in registry.presentersOfAncestors(of: access.itemPath) where !isOwn(presenter) {
                if appeared {
                    deliver(to: presenter) { presenter.presentedSubitemDidAppear(at: url) }
                } else {
                    deliver(to: presenter) { presenter.presentedSubitemDidChange(at: url) }
                }
            }
        }
    }

    /// Runs reacquirers on their presenters' queues.
    static func run(_ reacquirers: Reacquirers) {
        for (presenter, reacquirer) in reacquirers {
            presenter.presentedItemOperationQueue.addOperation(reacquirer)
        }
    }

    // MARK: Helpers

    private func isOwn(_ presenter: any FilePresenter) -> Bool {
        if alreadyPrepared.contains(ObjectIdentifier(presenter)) { return true }
        guard let ownPresenter else { return false }
        return ownPresenter === presenter
    }

    private func unique(_ presenters: [any FilePresenter]) -> [any FilePresenter] {
        var seen = Set<ObjectIdentifier>()
        return presenters.filter { !isOwn($0) && seen.insert(ObjectIdentifier($0)).inserted }
    }
}

/// True the first time only: guards completion handlers that a presenter might call twice.
final class AnswerOnce: Sendable {
    private let done = Atomic<Bool>(false)
    func first() -> Bool { !done.exchange(true, ordering: .acquiringAndReleasing) }
}
