import Foundation
import Glibc
import FileCoordination

/// The thread-safe side of a running query's engine: commands for its thread (stop, deliver what
/// is pending, rescan, hold for a test), each followed by a wake-up byte through a pipe that the
/// thread polls together with its `inotify` descriptor. The pipe is closed when the last
/// reference goes (never while someone might still write to it).
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
    }
    let commands = Locked(Commands())
    /// The pipe's read end, which the thread polls.
    let wake: Int32
    private let wakeWriter: Int32

    init?() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        wake = ends[0]
        wakeWriter = ends[1]
    }

    deinit {
        close(wake)
        close(wakeWriter)
    }

    func send(_ change: (inout Commands) -> Void) {
        commands.withLock(change)
        var one: UInt8 = 1
        _ = write(wakeWriter, &one, 1)   // a full pipe already wakes the thread
    }

    func take() -> Commands {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(wake, &bytes, bytes.count) > 0 {}
        return commands.withLock { commands in
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
