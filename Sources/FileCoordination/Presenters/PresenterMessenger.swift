import Foundation
import Glibc
import Synchronization

/// Decides which presenters are told what about a coordinated access, sends each message as a
/// `PresenterRequest` value through one `PresenterDelivery`, and waits for the answers (Apple's
/// rules; see Docs/Coordination.md, "Who is told what"). Every message a coordinator sends goes
/// through here: accesses, batches (`prepare(forReadingItemsAt:…)`) and moves
/// (`item(at:didMoveTo:)`). The coordinator's own presenter is never messaged about its own
/// accesses.
///
/// Who presents what, in this process and in others, is asked of one `PresenterDirectory`; this
/// type decides, from Apple's rules, which of those questions an access raises and what each
/// presenter found is told.
struct PresenterMessenger {
    /// Who presents at, above or inside a path, here and in other processes.
    let directory: PresenterDirectory
    let packageExtensions: PackageExtensions
    let lending: LockLending
    let ownPresenter: PresenterID?
    let requester: LockOwner
    let context: WaitContext
    let delivery: any PresenterDelivery
    /// How other processes are asked: whether they are asked to save (`asksForSaves`), how long
    /// their answers are awaited (`answerLimit`), and the main queue's record of whom it waits
    /// for. Who presents what there is asked of `directory`.
    let remote: RemotePresence
    /// Presenters already prepared by a `prepare(forReadingItemsAt:…)` batch of this coordinator.
    var alreadyPrepared: Set<PresenterID> = []
    /// Presenters of this process already asked to save before the locks were taken
    /// (`askOtherProcessesBeforeLocking`): not asked again by `prepare`.
    var savedBeforeLocking: Set<PresenterID> = []
    /// Presenters in other processes that relinquished before the locks were taken
    /// (`relinquishElsewhereBeforeLocking`): not asked again by `prepare`.
    var relinquishedEarly: Set<EarlyRelinquishment> = []
    /// Their reacquirers: part of what `prepare` returns (run after the access), or run at once
    /// when the access fails before it (`giveBackEarlyRelinquishments`).
    var earlyReacquirers: Reacquirers = []

    typealias Reacquirers = [Reacquirer]

    /// A messenger for `runtime`'s presenters, sending through `delivery` (the runtime's own
    /// unless given, for tests).
    init(runtime: CoordinationRuntime, ownPresenter: (any FilePresenter)?, requester: LockOwner,
         context: WaitContext, delivery: (any PresenterDelivery)? = nil) {
        self.directory = PresenterDirectory(runtime: runtime)
        self.packageExtensions = runtime.packageExtensions
        self.lending = runtime.lending
        self.ownPresenter = ownPresenter.map(PresenterID.init)
        self.requester = requester
        self.context = context
        self.delivery = delivery ?? runtime.messengerDelivery
        self.remote = runtime.remote
    }

    // MARK: Before the accessor (the locks held)

    /// Sends relinquish, save and accommodate-deletion requests, in that order, each round waiting
    /// for every answer. On failure, the reacquirers already received are run before throwing.
    ///
    /// Runs with the access's locks held. Presenters in other processes are only asked to
    /// *relinquish* here — an answer that never needs a lock; their save and deletion requests
    /// went out before the locks were taken (`askOtherProcessesBeforeLocking`), so no process
    /// ever waits for another process's answer while holding a lock that answer may need
    /// (Docs/RemotePresenters.md, *Invariants*).
    ///
    /// The reacquirers of presenters in other processes that relinquished before the locks
    /// (`earlyReacquirers`) come first in what it returns; when it fails, they run too.
    func prepare(_ accesses: [ResolvedAccess]) throws(CoordinationError) -> Reacquirers {
        do {
            return try earlyReacquirers + prepareUnderLocks(accesses)
        } catch {
            Self.run(earlyReacquirers)
            throw error
        }
    }

    /// `prepare` less the early reacquirers: on failure it runs those it received itself.
    private func prepareUnderLocks(_ accesses: [ResolvedAccess]) throws(CoordinationError) -> Reacquirers {
        let elsewhere = accesses.contains { concernsOtherProcesses($0) }
        guard !directory.nobodyHere || elsewhere else { return [] }
        let endMainQueueWait = elsewhere ? recordMainQueueWait(accesses) : nil
        defer { endMainQueueWait?() }
        var readers: [PresenterAddress] = []
        var writers: [PresenterAddress] = []
        var savers: [PresenterAddress] = []
        var deleted: [PresenterAddress] = []
        var evicted: [PresenterAddress] = []
        var subitemDeletions: [(PresenterAddress, URL)] = []
        for access in accesses {
            var concerned = presentersConcerned(by: access)
            let saving = concerned.filter { !savedBeforeLocking.contains($0.id) }
            // Presenters in other processes relinquish as those of this process do (for a
            // package, all of them: the package and everything inside it).
            let found = elsewhere ? try lookUpElsewhere(for: access) : RemoteFound()
            concerned += presentersConcerned(by: access, foundElsewhere: found).filter {
                !relinquishedEarly.contains(EarlyRelinquishment(id: $0.id, toWriter: access.isWrite))
            }
            if access.isWrite {
                writers += concerned
                if access.removesItem && access.isDirectory {
                    writers += directory.presenters(inside: access.itemPath, elsewhere: found)
                }
                if access.writingOptions.contains(.forMerging) { savers += saving }
                // A replace of a place where nothing exists deletes nothing: no deletion messages.
                // (Other processes' presenters were asked before the locks were taken.)
                // (Other processes' presenters were asked to accommodate an eviction before the
                // locks were taken, as for a deletion.)
                if access.evicts && access.existedBefore {
                    evicted += directory.presenters(at: access.itemPath) + directory.presenters(inside: access.itemPath)
                }
                if access.deletes && access.existedBefore {
                    deleted += directory.presenters(at: access.itemPath)
                    deleted += directory.presenters(inside: access.itemPath)
                    let url = CanonicalPath.url(for: access.itemPath)
                    subitemDeletions += directory.presenters(above: access.itemPath).map { ($0, url) }
                }
            } else {
                readers += concerned
                if Self.asksForSaves(access) { savers += saving }
            }
        }
        var reacquirers: Reacquirers = []
        do {
            reacquirers += try relinquish(unique(readers), toWriter: false)
            reacquirers += try relinquish(unique(writers), toWriter: true)
            try ask(unique(savers).map { ($0, .saveChanges) })
            try ask(unique(deleted).map { ($0, .accommodateDeletion) })
            try ask(unique(evicted).filter { !isOwn($0) }.map { ($0, .accommodateEviction) })
            var askedSubitem = Set<PresenterID>()
            try ask(subitemDeletions.filter { !isOwn($0.0) && askedSubitem.insert($0.0.id).inserted }
                .map { ($0.0, .accommodateSubitemDeletion(at: $0.1)) })
        } catch {
            Self.run(reacquirers)
            throw error
        }
        return reacquirers
    }

    /// Whether presenters of `access`'s item are asked to save: a read that may see changes, or
    /// a write `.forMerging` (Apple's rule).
    static func asksForSaves(_ access: ResolvedAccess) -> Bool {
        access.isWrite ? access.writingOptions.contains(.forMerging)
            : access.readingOptions.isDisjoint(with: [.withoutChanges, .immediatelyAvailableMetadataOnly])
    }

    /// Whether another process may present the item, a folder above it, or (for a folder
    /// removed, a package) something inside: a few loads, no system call.
    func concernsOtherProcesses(_ access: ResolvedAccess) -> Bool {
        directory.mayPresentElsewhere(at: access.itemPath)
            || (Self.removesFolder(access) && directory.mayPresentElsewhere(inside: access.itemPath))
            || (isPackageAccess(access) && directory.mayPresentElsewhere(inside: access.lockPath))
    }

    /// Records, for a coordination on the main queue, which processes it is about to wait for, so
    /// that their requests to us are not left waiting for this main queue (invariant 4 of
    /// Docs/RemotePresenters.md). Returns the closure that ends the record, or nil.
    func recordMainQueueWait(_ accesses: [ResolvedAccess]) -> (() -> Void)? {
        remote.recordMainQueueWait(for: {
            accesses.reduce(0) {
                $0 | directory.processesThatMayPresent(at: $1.itemPath, inside: Self.removesFolder($1))
                    | (isPackageAccess($1) ? directory.processesThatMayPresent(at: $1.lockPath, inside: true) : 0)
            }
        })
    }

    /// True for an access to a package or to an item inside one (its presenters, and those of
    /// everything inside the package, are concerned).
    func isPackageAccess(_ access: ResolvedAccess) -> Bool {
        access.isInsidePackage || packageExtensions.isPackage(access.lockPath)
    }

    /// Looks up the presenters in other processes an access concerns: of the item, the folders
    /// above it and (for a folder removed) inside it; for a package access, of the package, the
    /// folders above it and everything inside it. Remembered under the item's path for `finish`.
    func lookUpElsewhere(for access: ResolvedAccess) throws(CoordinationError) -> RemoteFound {
        if isPackageAccess(access) {
            return try directory.lookUpElsewhere(at: access.lockPath, inside: true, rememberedAs: access.itemPath, context: context)
        }
        return try directory.lookUpElsewhere(at: access.itemPath, inside: Self.removesFolder(access), context: context)
    }

    /// A write that deletes, moves away or replaces a directory: presenters inside it are concerned.
    static func removesFolder(_ access: ResolvedAccess) -> Bool {
        access.isWrite && access.isDirectory && (access.removesItem || access.deletes)
    }

    /// Every presenter a batch of accesses relinquishes (for `prepare(forReadingItemsAt:…)`).
    func concernedPresenters(_ accesses: [ResolvedAccess]) -> [PresenterID] {
        guard !directory.nobodyHere else { return [] }
        return unique(accesses.flatMap { presentersConcerned(by: $0) }).map(\.id)
    }

    /// Presenters of this process an access concerns: of the item and, for a package access, of
    /// the package that is or contains it and of the items inside that package.
    func presentersConcerned(by access: ResolvedAccess) -> [PresenterAddress] {
        var result = directory.presenters(at: access.itemPath)
        if isPackageAccess(access) {
            if access.isInsidePackage { result += directory.presenters(at: access.lockPath) }
            result += directory.presenters(inside: access.lockPath)
        }
        return result
    }

    /// The same presenters in other processes, as `found` (`lookUpElsewhere(for: access)`) has
    /// them: of the item or, for a package access, of the package and of everything inside it.
    func presentersConcerned(by access: ResolvedAccess, foundElsewhere found: RemoteFound) -> [PresenterAddress] {
        guard isPackageAccess(access) else { return found.presenters(at: access.itemPath) }
        return found.presenters(at: access.lockPath) + found.presenters(inside: access.lockPath)
    }

    func relinquish(_ presenters: [PresenterAddress], toWriter: Bool) throws(CoordinationError) -> Reacquirers {
        guard !presenters.isEmpty else { return [] }
        let collector = AnswerCollector(expecting: presenters.count)
        let delivery = self.delivery
        let limit = answerLimitMilliseconds
        for address in presenters {
            let message: PresenterMessage = toWriter ? .relinquishToWriter : .relinquishToReader
            let request = PresenterRequest(presenter: address.id, presentedPath: address.path, message: message, borrow: nil)
            let answered: @Sendable (PresenterAnswer) -> Void = { answer in
                guard case .relinquished(let id) = answer else { return collector.answer() }
                collector.answer(reacquirer: id.map {
                    Reacquirer(presenter: address.id, presentedPath: address.path, id: $0, delivery: delivery)
                })
            }
            if let limit, !address.id.isInThisProcess {
                // A relinquishment answered after the limit is given back at once.
                let late: @Sendable (PresenterAnswer) -> Void = { answer in
                    guard case .relinquished(let id?) = answer else { return }
                    Reacquirer(presenter: address.id, presentedPath: address.path, id: id, delivery: delivery).send()
                }
                delivery.send(request, answer: Self.bounded(answered, by: limit, in: collector, counting: remote.delivery, default: .relinquished(reacquirer: nil),
                                                            presenter: address, message: message, late: late))
            } else {
                delivery.send(request, answer: answered)
            }
        }
        do {
            return try collector.wait(context)
        } catch {
            Self.run(collector.abandon())
            throw error
        }
    }

    /// Sends requests that answer through a completion handler. While a presenter *of this
    /// process* works on one, its own coordinations join the requester's locks: the request
    /// carries a `BorrowToken` for them, lent until every answer is in (or the wait fails).
    /// Presenters in other processes get no token (no lock crosses a process boundary) and, for a
    /// coordination without a timeout, are awaited at most `RemotePresence.answerLimit`.
    func ask(_ requests: [(PresenterAddress, PresenterMessage)], lending lends: Bool = true) throws(CoordinationError) {
        guard !requests.isEmpty else { return }
        let collector = AnswerCollector(expecting: requests.count)
        let token = lending.lend(requester)
        defer { lending.end(token) }
        let limit = answerLimitMilliseconds
        for (address, message) in requests {
            let local = address.id.isInThisProcess
            let request = PresenterRequest(presenter: address.id, presentedPath: address.path,
                                           message: message, borrow: lends && message.lendsLocks && local ? token : nil)
            var record: @Sendable (PresenterAnswer) -> Void = { answer in
                if case .completed(let error) = answer { collector.answer(error: error) } else { collector.answer() }
            }
            if let limit, !local {
                record = Self.bounded(record, by: limit, in: collector, counting: remote.delivery,
                                      default: message.unansweredDefault(path: address.path) ?? .completed(nil), presenter: address, message: message)
            }
            delivery.send(request, answer: record)
        }
        _ = try collector.wait(context)
    }

    /// How long, in milliseconds, an answer from another process is awaited by a coordination
    /// without a timeout (`RemotePresence.answerLimit`); nil with a timeout (the caller's applies).
    private var answerLimitMilliseconds: Int? {
        context.deadline == nil ? remote.answerLimitMilliseconds : nil
    }

    /// `answer`, called with `fallback` when the presenter (in another process) has not answered
    /// within `milliseconds`; its own answer, if it comes later, goes to `late` instead.
    private static func bounded(_ answer: @escaping @Sendable (PresenterAnswer) -> Void, by milliseconds: Int, in collector: AnswerCollector,
                                counting delivery: RemoteDelivery, default fallback: PresenterAnswer, presenter: PresenterAddress, message: PresenterMessage,
                                late: (@Sendable (PresenterAnswer) -> Void)? = nil) -> @Sendable (PresenterAnswer) -> Void {
        let once = AnswerOnce()
        // The asker's own wait runs the cut-off (no timer per request): `AnswerCollector.limit`.
        collector.limit(milliseconds) {
            guard once.first() else { return }
            delivery.cutOff("process \(presenter.id.process) did not answer \(message.logName) within \(milliseconds) ms; going on without it")
            answer(fallback)
        }
        return { reply in
            if once.first() { answer(reply) } else { late?(reply) }
        }
    }

    // MARK: After the accessor

    /// Tells presenters what the access changed: the item changed, a subitem changed or appeared.
    func finish(_ accesses: [ResolvedAccess]) {
        guard accesses.contains(where: { directory.mayConcern($0.itemPath) }) else { return }
        // An eviction changes nothing its (consenting) presenters could reload: like a deletion, no
        // change is announced (a reload would only download the item straight back).
        for access in accesses where access.isWrite && !access.deletes && !access.evicts && !access.writingOptions.contains(.forMoving) {
            // Presenters in other processes found before the access (of the item, of the folders
            // above it) are told as those of this process are, without asking again.
            let elsewhere = directory.foundElsewhereBefore(at: access.itemPath)
            for address in directory.presenters(at: access.itemPath, elsewhere: elsewhere) where !isOwn(address) {
                notify(address, .itemDidChange)
            }
            if access.isInsidePackage {
                for address in directory.presenters(at: access.lockPath, elsewhere: elsewhere) where !isOwn(address) {
                    notify(address, .itemDidChange)
                }
            }
            // The URL and the check for a new item only when a folder's presenter is told (a
            // save is often presented only by its own writer).
            let containing = directory.presenters(above: access.itemPath, elsewhere: elsewhere).filter { !isOwn($0) }
            guard !containing.isEmpty else { continue }
            let url = CanonicalPath.url(for: access.itemPath)
            let appeared = !access.existedBefore && CanonicalPath.withCString(access.itemPath) { Glibc.access($0, F_OK) == 0 }
            // Conflict copies (versions, announced by the change monitor) and sync tools'
            // temporary files are never new subitems.
            if appeared && CoordinationRuntime.syncToolPolicy.isHiddenFromPresenters(CanonicalPath.split(access.itemPath).name) {
                continue
            }
            for address in containing {
                notify(address, appeared ? .subitemDidAppear(at: url) : .subitemDidChange(at: url))
            }
        }
    }

    /// Announces a coordinated move (``Coordinator/item(at:didMoveTo:)``): re-keys the presenters
    /// of the item and of everything inside it and tells them their new URLs, then tells the
    /// presenters of the directories around the old and new places. The own presenter is
    /// re-keyed but not told.
    ///
    /// Presenters in other processes are found with a lookup (waiting as the coordinator's
    /// context allows; one that fails or times out leaves them to their change monitors): those
    /// of the item and inside it get `.itemDidMove` addressed to their old path (their process
    /// re-keys its registry), those of the folders around get the subitem message.
    func announceMove(from oldPath: String, to newPath: String, oldURL: URL, newURL: URL) {
        let elsewhereOld = directory.mayPresentElsewhere(at: oldPath) || directory.mayPresentElsewhere(inside: oldPath)
        let elsewhereNew = directory.mayPresentElsewhere(at: newPath)
        guard !directory.nobodyHere || elsewhereOld || elsewhereNew else { return }
        let foundOld = elsewhereOld ? (try? directory.lookUpElsewhere(at: oldPath, inside: true, context: context)) ?? RemoteFound() : RemoteFound()
        let foundNew = elsewhereNew ? (try? directory.lookUpElsewhere(at: newPath, context: context)) ?? RemoteFound() : RemoteFound()
        for moved in directory.moveHere(from: oldPath, to: newPath) where moved.id != ownPresenter {
            notify(PresenterAddress(id: moved.id, path: moved.new), .itemDidMove(to: CanonicalPath.url(for: moved.new)))
        }
        for address in foundOld.presenters(at: oldPath) + foundOld.presenters(inside: oldPath) {
            notify(address, .itemDidMove(to: CanonicalPath.url(for: newPath + address.path.dropFirst(oldPath.count))))
        }
        var told = Set<PresenterID>()
        let containing = directory.presenters(above: oldPath, elsewhere: foundOld)
            + directory.presenters(above: newPath, elsewhere: foundNew)
        for address in containing where address.id != ownPresenter && told.insert(address.id).inserted {
            notify(address, .subitemDidMove(from: oldURL, to: newURL))
        }
    }

    private func notify(_ address: PresenterAddress, _ message: PresenterMessage) {
        delivery.send(PresenterRequest(presenter: address.id, presentedPath: address.path, message: message, borrow: nil), answer: nil)
    }

    /// Sends the reacquirers back to their presenters (each runs on its presenter's queue).
    static func run(_ reacquirers: Reacquirers) {
        for reacquirer in reacquirers { reacquirer.send() }
    }

    // MARK: Helpers

    func isOwn(_ address: PresenterAddress) -> Bool {
        alreadyPrepared.contains(address.id) || address.id == ownPresenter
    }

    func unique(_ presenters: [PresenterAddress]) -> [PresenterAddress] {
        var seen = Set<PresenterID>()
        return presenters.filter { !isOwn($0) && seen.insert($0.id).inserted }
    }
}

/// True the first time only: guards completion handlers that a presenter might call twice.
final class AnswerOnce: Sendable {
    private let done = Atomic<Bool>(false)
    func first() -> Bool { !done.exchange(true, ordering: .acquiringAndReleasing) }
}
