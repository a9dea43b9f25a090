import Foundation
import Glibc
import Synchronization

/// Delivers `PresenterRequest`s to presenters of other processes, through `PeerLink`s to their
/// endpoints, and finds those presenters (`lookup`). See `PresenterDelivery` for the contract:
/// `send` never waits for the presenter; `answer` is called exactly once — with the default
/// answer (relinquished without reacquirer, completed without error) when the presenter's
/// process is gone or dies before answering.
///
/// No lock ever crosses to another process: a request carries no borrow token, and what a
/// presenter there does to answer (a save) it does under locks of its own
/// (Docs/RemotePresenters.md, *Invariants*).
///
/// A link that ends before an answer while the peer's process is still alive (its endpoint
/// closed our connection — idle, at its connection cap, or a bound passed — or our link passed
/// one of its own bounds) is not taken for a dead peer: the request is sent once more on a new
/// link, and if that fails too it is logged (`RemoteLog`) before the default answer is used. A
/// peer whose process is gone (its connection refused) is skipped at once, as before.
final class RemoteDelivery: PresenterDelivery {
    /// How many answers from other processes this runtime did not await past
    /// `RemotePresence.answerLimit` (also counted process-wide in `RemoteLog.cutOffCount`): tests of
    /// one runtime assert 0 without seeing other tests' cut-offs.
    var cutOffCount: Int { cutOffs.load(ordering: .acquiring) }
    private let cutOffs = Atomic<Int>(0)

    /// Counts and logs one answer not awaited past the limit (`RemoteLog.cutOff`).
    func cutOff(_ what: String) {
        cutOffs.add(1, ordering: .acquiringAndReleasing)
        RemoteLog.cutOff(what)
    }

    /// One link per slot of the presence table, made on first use, replaced when it closed or
    /// went stale (`PeerLink.isStale`).
    private let links = Locked<[Int: PeerLink]>([:])
    /// Where the endpoints are, and the table naming each slot's process: set by `lookup`, used
    /// to reconnect when a link ends under a request.
    private let reach = Locked<(folder: String, table: PresenceTable)?>(nil)
    /// Which slot each remote presenter was found in, and the presenters last found at each path
    /// (so the messages after an access reach those asked before it without asking again).
    private let known = Locked<(routes: [PresenterID: Int], atPath: [String: [PresenterAddress]])>(([:], [:]))
    private static let rememberedPaths = 256
    /// What each slot answered to a lookup of a path (with a scope), with the slot's owner and its
    /// publication counter read before asking: valid while both are unchanged — the slot added no
    /// presenter since, so it presents nothing new there (a presenter it removed since is answered
    /// `.gone` by its process, as when the removal races a lookup). Saves the round trip of every
    /// lookup after the first while the other process's presenters stay put, which is all of them
    /// in ordinary editing, and that of a false candidate (a hash collision).
    private let answered = Locked<[LookupKey: [Int: SlotAnswer]]>([:])
    private static let rememberedAnswers = 4096

    private struct LookupKey: Hashable {
        var path: String
        var scope: UInt8
    }

    private struct SlotAnswer {
        var pid: Int32
        var counter: UInt64
        var entries: [RemoteLookupAnswer.Entry]
    }

    /// The answer `slot` gave to the lookup `key`, if its owner and counter are still those.
    private func remembered(_ key: LookupKey, slot: Int, table: PresenceTable) -> SlotAnswer? {
        guard let answer = answered.withLock({ $0[key]?[slot] }), Self.isCurrent(answer, slot: slot, table: table) else { return nil }
        return answer
    }

    /// Whether `slot` still has the owner and the publication counter `answer` was given under.
    private static func isCurrent(_ answer: SlotAnswer, slot: Int, table: PresenceTable) -> Bool {
        answer.counter == table.publications(ofSlot: slot) && answer.pid == table.pid(ofSlot: slot)
    }

    /// `slots` less those known not to present `path` (and unchanged since).
    func unknown(_ slots: UInt64, at path: String, table: PresenceTable) -> UInt64 {
        // One look-up of the path's answers (not one per slot): this runs on every access that
        // has a candidate slot.
        let key = LookupKey(path: path, scope: RemoteLookup.Scope.concerning.rawValue)
        guard let known = answered.withLock({ $0[key] }) else { return slots }
        var left = slots
        for (slot, answer) in known where answer.entries.isEmpty && Self.isCurrent(answer, slot: slot, table: table) {
            left &= ~(1 << UInt64(slot))
        }
        return left
    }

    /// The presence-table slot of the process of a presenter found by `lookup`.
    func slot(of id: PresenterID) -> Int? {
        known.withLock { $0.routes[id] }
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
    ///
    /// Without a deadline in `context`, a process is awaited at most `limitMilliseconds`: one that
    /// does not answer by then (stopped, overloaded) is taken to present nothing there (logged,
    /// `RemoteLog.cutOffCount`), and the lookup goes on with the next.
    func lookup(_ path: String, scope: RemoteLookup.Scope = .concerning, slots: UInt64, table: PresenceTable,
                socketFolder: String, rememberedAs: String? = nil, context: WaitContext,
                limitMilliseconds: Int) throws(CoordinationError) -> [PresenterAddress] {
        var found: [PresenterAddress] = []
        var routes: [(PresenterID, Int)] = []
        reach.withLock { $0 = (socketFolder, table) }
        let key = LookupKey(path: path, scope: scope.rawValue)
        func add(_ entries: [RemoteLookupAnswer.Entry], of pid: Int32, slot: Int) {
            for entry in entries {
                let presenter = PresenterID(process: pid, number: UInt(truncatingIfNeeded: entry.presenterNumber))
                found.append(PresenterAddress(id: presenter, path: entry.path))
                routes.append((presenter, slot))
            }
        }
        for slot in 0..<PresenceTable.slotCount where slots & (1 << UInt64(slot)) != 0 {
            if let answer = remembered(key, slot: slot, table: table) {
                add(answer.entries, of: answer.pid, slot: slot)
                continue
            }
            guard let link = link(slot) else {
                if let pid = liveOwner(of: slot) {  // else reaped
                    RemoteLog.dropped("a lookup of \(path) in process \(pid): it is alive but cannot be reached; taken to present nothing there")
                }
                continue
            }
            // Read before asking (see `answered`): a presenter published after this read makes
            // the remembered answer stale at once, even if the answer already counts it.
            let counter = table.publications(ofSlot: slot)
            let wait = RemoteWait()
            ask(on: link, slot: slot, what: "a lookup of \(path)") { id in
                .lookup(RemoteLookup(id: id, path: path, scope: scope))
            } answer: { wait.fulfil($0) }
            var bounded = context
            if context.deadline == nil { bounded.deadline = .now + .milliseconds(limitMilliseconds) }
            let reply: RemoteFrame?
            do {
                reply = try wait.wait(bounded)
            } catch .timedOut where context.deadline == nil {
                cutOff("process \(link.peer.pid) did not answer a lookup within \(limitMilliseconds) ms; taken to present nothing at \(path)")
                continue
            }
            guard case .lookupAnswer(let answer)? = reply else { continue }
            if table.pid(ofSlot: slot) == link.peer.pid {
                answered.withLock { cache in
                    if cache.count >= Self.rememberedAnswers { cache.removeAll() }
                    cache[key, default: [:]][slot] = SlotAnswer(pid: link.peer.pid, counter: counter, entries: answer.entries)
                }
            }
            add(answer.entries, of: link.peer.pid, slot: slot)
        }
        known.withLock { known in
            for (presenter, slot) in routes { known.routes[presenter] = slot }
            if known.atPath.count >= Self.rememberedPaths { known.atPath.removeAll() }
            known.atPath[rememberedAs ?? path] = found.isEmpty ? nil : found
        }
        return found
    }

    func send(_ request: PresenterRequest, answer: (@Sendable (PresenterAnswer) -> Void)?) {
        let fallback = request.message.unansweredDefault(path: request.presentedPath)
        guard let slot = known.withLock({ $0.routes[request.presenter] }) else {
            if let fallback { answer?(fallback) }
            return
        }
        guard let link = link(slot) else {
            if let pid = liveOwner(of: slot) {
                RemoteLog.dropped("\(request.message.logName) to process \(pid): it is alive but cannot be reached; answered with the defaults")
            }
            if let fallback { answer?(fallback) }
            return
        }
        let frame: @Sendable (UInt64) -> RemoteFrame = { id in
            .request(RemoteRequest(id: id, presenterNumber: UInt64(request.presenter.number),
                                   presentedPath: request.presentedPath, message: request.message))
        }
        guard let answer, let fallback else {
            if link.send(frame(link.makeID())) { return }
            // Our link ended under us: once more on a new one if the process is alive.
            guard isAlive(link.peer.pid, slot: slot) else { return }
            if let again = self.link(slot), again !== link, again.send(frame(again.makeID())) { return }
            RemoteLog.dropped("\(request.message.logName) to process \(link.peer.pid): its connection closed while it is alive, and could not be sent again")
            return
        }
        ask(on: link, slot: slot, what: request.message.logName, frame: frame) { reply in
            guard case .answer(let remote)? = reply else { return answer(fallback) }
            switch remote.outcome {
            case .relinquished(let reacquirer): answer(.relinquished(reacquirer: reacquirer.map(ReacquirerID.init(value:))))
            case .completed(let error): answer(.completed(error?.nsError))
            // The presenter is gone: nobody to refuse anything (an eviction included).
            case .gone: answer(request.expectedAnswer == .relinquishment ? .relinquished(reacquirer: nil) : .completed(nil))
            }
        }
    }

    /// Asks on `link`; when it ends before the answer while the peer's process is still alive,
    /// asks once more on a new link (`frame` makes the frame for a request id). `answer` gets nil
    /// when the peer is gone — or alive but the second ask failed too, which is logged: the
    /// caller then uses the default answer, never silently.
    private func ask(on link: PeerLink, slot: Int, what: String, frame: @escaping @Sendable (UInt64) -> RemoteFrame,
                     answer: @escaping @Sendable (RemoteFrame?) -> Void) {
        let id = link.makeID()
        link.ask(frame(id), id: id) { [weak self] reply in
            guard reply == nil, let self, isAlive(link.peer.pid, slot: slot) else { return answer(reply) }
            guard let again = self.link(slot), again !== link, again.peer.pid == link.peer.pid else {
                RemoteLog.dropped("\(what) to process \(link.peer.pid): its connection closed while it is alive, and no new one could be made; answered with the defaults")
                return answer(nil)
            }
            let id = again.makeID()
            again.ask(frame(id), id: id) { [weak self] reply in
                if reply == nil, let self, isAlive(again.peer.pid, slot: slot) {
                    RemoteLog.dropped("\(what) to process \(again.peer.pid): its connection closed twice while it is alive; answered with the defaults")
                }
                answer(reply)
            }
        }
    }

    /// Whether the process `pid` still runs and still owns `slot` (then a link that ended was
    /// closed on purpose, not by its death).
    private func isAlive(_ pid: Int32, slot: Int) -> Bool {
        liveOwner(of: slot) == pid
    }

    /// The process that owns `slot`, when it still runs: it holds the slot's lock (the kernel
    /// drops it when the process dies, before its parent reaps it) and `kill(pid, 0)` finds it.
    /// A dead owner's slot is reaped on the way (`PresenceTable.reapIfDead`).
    private func liveOwner(of slot: Int) -> Int32? {
        guard let table = reach.withLock({ $0?.table }) else { return nil }
        let pid = table.pid(ofSlot: slot)
        guard pid > 0, kill(pid, 0) == 0 || errno == EPERM, !table.reapIfDead(slot) else { return nil }
        return pid
    }

    /// The open link to `slot`'s endpoint, connecting when there is none (or it ended, or went
    /// stale); nil when nobody listens there (or before any lookup told where the endpoints are).
    private func link(_ slot: Int) -> PeerLink? {
        var stale: PeerLink?
        if let link = links.withLock({ $0[slot] }), link.isOpen {
            guard link.isStale else { return link }
            stale = link
        }
        guard let folder = reach.withLock({ $0?.folder }),
              let made = try? PeerLink(path: folder + "/\(slot)") else { return nil }
        let (chosen, unused) = links.withLock { links -> (PeerLink, PeerLink?) in
            // Another thread may have made one meanwhile: keep the first, close ours.
            if let current = links[slot], current !== stale, current.isOpen { return (current, made) }
            links[slot] = made
            return (made, nil)
        }
        unused?.close()
        stale?.close()
        return chosen
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
