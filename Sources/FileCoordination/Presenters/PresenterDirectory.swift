/// Who presents at, above or inside a path — in this process (the runtime's `PresenterRegistry`)
/// and in other processes (its `RemotePresence`). `PresenterMessenger` asks it every such
/// question; what each presenter is then told is the messenger's business (Docs/Coordination.md,
/// "Who is told what").
///
/// Three kinds of question, from cheapest to dearest:
/// - **May anyone be concerned?** `nobodyHere`, `mayConcern(_:)`, `mayPresentElsewhere(at:)` and
///   `mayPresentElsewhere(inside:)`: a few memory loads, no system call, no look-up. A false
///   answer is certain; a true one may be a false candidate (a hash collision), which only costs
///   the look-up it was meant to avoid. The coordinator's fast path (`Coordinator.fastRoute`)
///   asks `RemotePresence.mayConcern` and the registry directly, the same loads.
/// - **Who presents it in other processes?** `lookUpElsewhere(at:inside:rememberedAs:context:)`:
///   a round trip to each candidate process, bounded by the caller's `context` (its deadline and
///   cancellation) or, without a deadline, by `RemotePresence.answerLimit` per process. The answer
///   is remembered; `foundElsewhereBefore(at:)` gives it back after the access without asking
///   again.
/// - **Who presents it, here and there?** `presenters(at:elsewhere:)`, `presenters(above:elsewhere:)`
///   and `presenters(inside:elsewhere:)`: this process's presenters, looked up in the registry,
///   **then** those of a look-up made before (`elsewhere`; nothing by default, then the answer is
///   this process's alone). A presenter in both lists is not possible (a `PresenterID` names its
///   process); the messenger drops its own presenter and repeats.
///
/// A value: two references to the runtime's shared objects, made for each messenger.
struct PresenterDirectory: Sendable {
    /// This process's presenters.
    let registry: PresenterRegistry
    /// Other processes' presenters.
    let remote: RemotePresence

    /// The directory of `runtime`'s presenters.
    init(runtime: CoordinationRuntime) {
        registry = runtime.registry
        remote = runtime.remote
    }

    // MARK: May anyone be concerned? (a few loads)

    /// True when no presenter is registered in this process (one load).
    var nobodyHere: Bool { registry.isEmpty }

    /// False only when nobody, here or in another process, can present `path` or a folder above
    /// it: no presenter in this process at all, and no other process a candidate (a few loads).
    func mayConcern(_ path: String) -> Bool {
        !registry.isEmpty || remote.mayConcern(path)
    }

    /// False only when no other process can present the item at `path` or a folder above it.
    func mayPresentElsewhere(at path: String) -> Bool {
        remote.mayConcern(path)
    }

    /// False only when no other process can present something strictly inside `path`.
    func mayPresentElsewhere(inside path: String) -> Bool {
        remote.mayConcernInside(path)
    }

    /// The presence-table slots (one bit per process) of the other processes that may present
    /// `path`, a folder above it or, with `inside`, something inside it — the processes a
    /// coordination about `path` may wait for (`RemotePresence.recordMainQueueWait`).
    func processesThatMayPresent(at path: String, inside: Bool) -> UInt64 {
        remote.candidateSlots(at: path, inside: inside)
    }

    // MARK: Who presents it in other processes? (a look-up)

    /// Asks every candidate process which of its presenters present `path`, a folder above it
    /// and (with `inside`) an item inside it, waiting as `context` allows — at most
    /// `RemotePresence.answerLimit` per process when `context` has no deadline. Nothing is asked
    /// (and nothing found) when no other process is a candidate.
    ///
    /// The answer is remembered under `rememberedAs` (`path` when nil) for
    /// `foundElsewhereBefore(at:)`: the look-up of a package, made for an item inside it, is
    /// remembered under the item's path.
    func lookUpElsewhere(at path: String, inside: Bool = false, rememberedAs: String? = nil,
                         context: WaitContext) throws(CoordinationError) -> RemoteFound {
        RemoteFound(try remote.addresses(at: path, inside: inside, rememberedAs: rememberedAs, context: context), item: path)
    }

    /// What the last look-up remembered under `path` found (nothing is asked). Empty when no
    /// other process may present `path` or a folder above it — then the memory is not read.
    func foundElsewhereBefore(at path: String) -> RemoteFound {
        remote.mayConcern(path) ? RemoteFound(remote.delivery.lastFound(at: path), item: path) : RemoteFound()
    }

    // MARK: Who presents it, here and there? (this process's first)

    /// Presenters of exactly `path`: this process's, then those `elsewhere` found.
    func presenters(at path: String, elsewhere: RemoteFound = RemoteFound()) -> [PresenterAddress] {
        registry.addresses(at: path) + elsewhere.presenters(at: path)
    }

    /// Presenters of the folders above `path`: this process's nearest first, then those
    /// `elsewhere` found (nearest first in each process).
    func presenters(above path: String, elsewhere: RemoteFound = RemoteFound()) -> [PresenterAddress] {
        registry.addressesOfAncestors(of: path) + elsewhere.presenters(above: path)
    }

    /// Presenters of items strictly inside `path`: this process's (by path), then those
    /// `elsewhere` found.
    func presenters(inside path: String, elsewhere: RemoteFound = RemoteFound()) -> [PresenterAddress] {
        registry.addressesInside(path) + elsewhere.presenters(inside: path)
    }

    /// Re-keys this process's presenters at or inside `oldPath` to the same places under
    /// `newPath` (a coordinated move); returns them with their old and new paths. Presenters in
    /// other processes are re-keyed by their own process when told of the move.
    func moveHere(from oldPath: String, to newPath: String) -> [(id: PresenterID, old: String, new: String)] {
        registry.move(from: oldPath, to: newPath)
    }
}
