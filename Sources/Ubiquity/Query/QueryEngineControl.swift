import Foundation
import Glibc
import FileCoordination
import SystemSupport

/// The thread-safe side of a running query's engine: commands for its thread (stop, deliver what
/// is pending, rescan, hold for a test), each followed by a wake of the engine's ``InotifyLoop``
/// (its `eventfd`, which the loop polls together with its `inotify` descriptor); a stop stops the
/// loop. Commands sent before the loop is attached wait for it.
final class QueryEngineControl: Sendable {
    struct Commands {
        var stop = false
        var flush = false
        /// A simulated `IN_Q_OVERFLOW`: discard what the kernel queued, then rescan (tests).
        var overflow = false
        /// Holds the thread (tests): it signals `entered`, then waits for `release` — meanwhile
        /// changes pile up in the kernel's queue, and everything it delivered before is queued.
        var hold: (entered: DispatchSemaphore, release: DispatchSemaphore)?
        /// Tests: from now on, keep the second halves of renames (`IN_MOVED_TO`) read from the
        /// kernel aside instead of applying them, as if the kernel queued them late (true), or
        /// apply them as they come again (false).
        var setsAsideMovedTo: Bool?
        /// Tests: apply the second halves set aside, in the order read.
        var applyAsideMovedTo = false

        /// Whether anything was asked for.
        var isEmpty: Bool {
            !stop && !flush && !overflow && hold == nil && setsAsideMovedTo == nil && !applyAsideMovedTo
        }
    }
    let commands = Locked(Commands())
    /// The engine's loop, once started (with `commands`' lock taken first when both are).
    private let loop = Locked<InotifyLoop?>(nil)

    init() {}

    /// Hands the commands to `loop` (the engine's, about to start): those sent already, at once.
    func attach(_ loop: InotifyLoop) {
        commands.withLock { commands in
            self.loop.withLock { $0 = loop }
            if commands.stop { loop.stop() } else if !commands.isEmpty { loop.wake() }
        }
    }

    /// Changes the commands, then wakes the loop (stops it, for a stop). Neither waits, so this is
    /// safe under any lock, on any thread.
    func send(_ change: (inout Commands) -> Void) {
        commands.withLock { commands in
            change(&commands)
            guard let loop = loop.withLock({ $0 }) else { return }
            if commands.stop { loop.stop() } else { loop.wake() }
        }
    }

    /// The commands sent since the last call (on the loop's thread, when it was woken).
    func take() -> Commands {
        commands.withLock { commands in
            let taken = commands
            commands.flush = false
            commands.overflow = false
            commands.hold = nil
            commands.setsAsideMovedTo = nil
            commands.applyAsideMovedTo = false
            return taken
        }
    }
}
