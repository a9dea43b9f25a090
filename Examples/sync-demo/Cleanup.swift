import Dispatch
import Foundation
import Glibc
import LocalServers
import Synchronization

/// What the demo started (Apache, the agents, the temporary folder), undone in reverse order at the
/// end, after an error, and on Ctrl-C or SIGTERM: the servers run in process groups of their own,
/// so a terminal's Ctrl-C does not reach them and only this stops them.
///
/// One lock covers starting a program together with recording how to stop it, and the signal
/// handler's whole run up to its `exit`: a signal never finds a program started but not recorded.
final class Cleanup: Sendable {
    private let actions = Mutex<[@Sendable () -> Void]>([])

    /// Adds `action` (run before the ones added earlier).
    func add(_ action: @escaping @Sendable () -> Void) {
        actions.withLock { $0.append(action) }
    }

    /// Starts a program with `start` and records that it is to be stopped, as one step.
    func track(_ start: () throws -> SpawnedServer) throws -> SpawnedServer {
        try actions.withLock { actions in
            let program = try start()
            actions.append { program.stop() }
            return program
        }
    }

    /// Runs the actions added so far, each once, newest first. Any thread.
    func run() {
        actions.withLock { actions in
            for action in actions.reversed() { action() }
            actions = []
        }
    }

    /// On SIGINT or SIGTERM: runs the actions and exits with 130. Keep the returned sources alive.
    func runOnStopSignals() -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                FileHandle.standardOutput.write(Data("\nInterrupted: stopping the agents and Apache, removing the folder.\n".utf8))
                actions.withLock { actions in
                    for action in actions.reversed() { action() }
                    exit(130)
                }
            }
            source.resume()
            return source
        }
    }
}
