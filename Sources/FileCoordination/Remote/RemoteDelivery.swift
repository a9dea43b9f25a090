import Foundation
import Glibc

/// Delivers `PresenterRequest`s to presenters of other processes, through `PeerLink`s to their
/// endpoints, and finds those presenters (`lookup`). See `PresenterDelivery` for the contract:
/// `send` never waits for the presenter; `answer` is called exactly once — with the default
/// answer (relinquished without reacquirer, completed without error) when the presenter's
/// process is gone or dies before answering.
///
/// A request with a `BorrowToken` lends the asker's locks with it (`RemoteLockLending`).
final class RemoteDelivery: PresenterDelivery {
    /// The asking runtime's lending table (set by `RemotePresence.attach`), for requests that lend.
    private let lending = Locked<LockLending?>(nil)

    func lend(through lending: LockLending) { self.lending.withLock { $0 = lending } }

    /// One link per slot of the presence table, made on first use, replaced when it closed.
    private let links = Locked<[Int: PeerLink]>([:])
    /// Which slot each remote presenter was found in, and the presenters last found at each path
    /// (so the messages after an access reach those asked before it without asking again).
    private let known = Locked<(routes: [PresenterID: Int], atPath: [String: [PresenterAddress]])>(([:], [:]))
    private static let rememberedPaths = 256
    /// Slots found *not* to present a path, with the slot's publication counter read before
    /// asking: valid while the counter is unchanged (the slot added nothing since). Saves the
    /// round trip that a false candidate (a hash collision) would otherwise cost on every access.
    /// Only lookups of the item and ancestors scopes (`RemoteLookup.Scope.concerning`, what the
    /// fast path's `mayConcern` asks about) are cached.
    private let nothingThere = Locked<[String: [Int: UInt64]]>([:])
    private static let rememberedNegatives = 4096

    /// `slots` less those known not to present `path` (and unchanged since).
    func unknown(_ slots: UInt64, at path: String, table: PresenceTable) -> UInt64 {
        guard let known = nothingThere.withLock({ $0[path] }) else { return slots }
        var left = slots
        for (slot, counter) in known where table.publications(ofSlot: slot) == counter {
            left &= ~(1 << UInt64(slot))
        }
        return left
    }

    /// True for presenters found in another process by `lookup`.
    func knows(_ id: PresenterID) -> Bool {
        known.withLock { $0.routes[id] != nil }
    }

    /// The presenters the last `lookup` of `path` found (of it, above it, inside it, as that lookup
    /// asked; nothing is asked).
    func lastFound(at path: String) -> [PresenterAddress] {
        known.withLock { $0.atPath[path] } ?? []
    }

    /// Asks the processes of `slots` which of their presenters present `path` (or, as `scope`
    /// says, a directory above it or something inside it), waiting as `context` allows. A slot
    /// whose process is gone is reaped and skipped at once. The answer is remembered for
    /// `lastFound(at:)` under `rememberedAs` (`path` when nil).
    func lookup(_ path: String, scope: RemoteLookup.Scope = .concerning, slots: UInt64, table: PresenceTable,
                socketFolder: String, rememberedAs: String? = nil, context: WaitContext) throws(CoordinationError) -> [PresenterAddress] {
        var found: [PresenterAddress] = []
        var routes: [(PresenterID, Int)] = []
        for slot in 0..<PresenceTable.slotCount where slots & (1 << UInt64(slot)) != 0 {
            guard let link = link(slot, socketFolder: socketFolder) else {
                table.reapIfDead(slot)
                continue
            }
            let counter = table.publications(ofSlot: slot)  // before asking: see `nothingThere`
            let id = link.makeID()
            let wait = RemoteWait()
            link.ask(.lookup(RemoteLookup(id: id, path: path, scope: scope)), id: id) { wait.fulfil($0) }
            guard case .lookupAnswer(let answer)? = try wait.wait(context) else { continue }
            if answer.entries.isEmpty && scope == .concerning {
                nothingThere.withLock { cache in
                    if cache.count >= Self.rememberedNegatives { cache.removeAll() }
                    cache[path, default: [:]][slot] = counter
                }
            }
            for entry in answer.entries {
                let presenter = PresenterID(process: link.peer.pid, number: UInt(truncatingIfNeeded: entry.presenterNumber))
                found.append(PresenterAddress(id: presenter, path: entry.path))
                routes.append((presenter, slot))
            }
        }
        known.withLock { known in
            for (presenter, slot) in routes { known.routes[presenter] = slot }
            if known.atPath.count >= Self.rememberedPaths { known.atPath.removeAll() }
            known.atPath[rememberedAs ?? path] = found.isEmpty ? nil : found
        }
        return found
    }

    func send(_ request: PresenterRequest, answer: (@Sendable (PresenterAnswer) -> Void)?) {
        let fallback: PresenterAnswer? = switch request.expectedAnswer {
        case .none: nil
        case .relinquishment: .relinquished(reacquirer: nil)
        case .completion: .completed(nil)
        }
        guard let slot = known.withLock({ $0.routes[request.presenter] }),
              let link = links.withLock({ $0[slot] }), link.isOpen else {
            if let fallback { answer?(fallback) }
            return
        }
        let id = link.makeID()
        let frame = RemoteFrame.request(RemoteRequest(id: id, presenterNumber: UInt64(request.presenter.number),
                                                      presentedPath: request.presentedPath, message: request.message,
                                                      borrow: request.borrow.flatMap { token in
                                                          lending.withLock { $0 }.flatMap { RemoteLockLending.borrow(for: token, lending: $0) }
                                                      }))
        guard let answer, let fallback else {
            link.send(frame)
            return
        }
        link.ask(frame, id: id) { reply in
            guard case .answer(let remote)? = reply else { return answer(fallback) }
            switch remote.outcome {
            case .relinquished(let reacquirer): answer(.relinquished(reacquirer: reacquirer.map(ReacquirerID.init(value:))))
            case .completed(let error): answer(.completed(error?.nsError))
            case .gone: answer(fallback)
            }
        }
    }

    /// The open link to `slot`'s endpoint, connecting when there is none; nil when nobody listens.
    private func link(_ slot: Int, socketFolder: String) -> PeerLink? {
        if let link = links.withLock({ $0[slot] }), link.isOpen { return link }
        guard let link = try? PeerLink(path: socketFolder + "/\(slot)") else { return nil }
        links.withLock { $0[slot] = link }
        return link
    }

    deinit {
        for link in links.withLock({ Array($0.values) }) { link.close() }
    }
}

/// One answer awaited by a coordinating thread, with the coordination's deadline and cancellation.
final class RemoteWait: @unchecked Sendable {
    // @unchecked: `result` and `done` are only touched with `condition` locked.
    private let condition = NSCondition()
    private var result: RemoteFrame?
    private var done = false
    private var cancelled = false

    func fulfil(_ frame: RemoteFrame?) {
        condition.lock()
        if !done { result = frame; done = true }
        condition.broadcast()
        condition.unlock()
    }

    /// The answer (nil: the peer is gone). Throws `.timedOut` or `.cancelled` as the context says.
    func wait(_ context: WaitContext) throws(CoordinationError) -> RemoteFrame? {
        let stop = context.onCancel { [self] in
            condition.lock(); cancelled = true; condition.broadcast(); condition.unlock()
        }
        defer { stop() }
        condition.lock()
        defer { condition.unlock() }
        while !done {
            try context.check()
            if let deadline = context.deadline {
                _ = condition.wait(until: Date(timeIntervalSinceNow: max(0, deadline.secondsFromNow)))
            } else {
                condition.wait()
            }
        }
        return result
    }
}

/// The delivery a runtime's messenger uses: presenters found in other processes go through
/// `RemoteDelivery`, every other one through the runtime's `InProcessDelivery`.
struct RoutingDelivery: PresenterDelivery {
    let local: InProcessDelivery
    let remote: RemoteDelivery

    func send(_ request: PresenterRequest, answer: (@Sendable (PresenterAnswer) -> Void)?) {
        if !request.presenter.isInThisProcess, remote.knows(request.presenter) {
            remote.send(request, answer: answer)
        } else {
            local.send(request, answer: answer)
        }
    }
}
