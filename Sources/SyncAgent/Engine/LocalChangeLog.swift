import FileCoordination
import Synchronization

/// What the ``LocalChangeWatcher`` saw since the engine last scanned: the container folders
/// whose entries changed, the folders to walk whole (new ones, watched only from now on), and
/// whether only a full scan will do — before the watches are in place, after the kernel's queue
/// overflowed (`IN_Q_OVERFLOW`), and for good once a watch could not be added (a folder without a
/// watch changes unseen). Paths are container-relative (`""` is the container itself).
///
/// Sendable: the state is behind a `Locked` (a pthread mutex ThreadSanitizer sees); marks come from the watcher's thread (and the
/// engine, after its own local steps), ``take()`` from the engine's pass.
final class LocalChangeLog: Sendable {
    /// What one pass must look at.
    struct Pending: Sendable {
        /// Scan everything (the folders below do not matter then).
        var full: Bool
        /// Folders whose direct entries are read again.
        var folders: Set<String>
        /// Folders walked with everything below them.
        var subtrees: Set<String>
    }

    private struct State {
        var ready = false
        var degraded = false
        var full = true
        var folders: Set<String> = []
        var subtrees: Set<String> = []
    }

    private let state = Locked(State())

    /// The watches of the whole container are in place: the next scan is full, later ones follow
    /// the marks.
    func markReady() { state.withLock { $0.ready = true; $0.full = true } }

    /// A watch could not be added: every scan is full from now on.
    func markDegraded() { state.withLock { $0.degraded = true; $0.full = true } }

    /// Reports were lost (the kernel's queue overflowed): the next scan is full.
    func markOverflow() { state.withLock { $0.full = true } }

    /// Something in `folder` (its direct entries) changed.
    func markChanged(_ folder: String) { state.withLock { _ = $0.folders.insert(folder) } }

    /// `folder` is new (or was moved in): it is walked whole.
    func markSubtree(_ folder: String) { state.withLock { _ = $0.subtrees.insert(folder) } }

    /// What was marked since the last call; the marks are cleared (later ones go to the next).
    func take() -> Pending {
        state.withLock { state in
            let pending = Pending(full: state.full || !state.ready || state.degraded, folders: state.folders, subtrees: state.subtrees)
            state.full = false
            state.folders = []
            state.subtrees = []
            return pending
        }
    }
}
