import Dispatch
import Glibc

/// Makes SIGTERM and SIGINT call `stop` (on a global queue) instead of ending the process, so
/// the agent can finish the step in hand. Returns the sources, which must be kept alive.
/// Nonisolated on purpose: the handlers run on a dispatch queue, not on the main actor.
nonisolated func installStopSignals(_ stop: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
    [SIGTERM, SIGINT].map { signalNumber in
        signal(signalNumber, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
        source.setEventHandler(handler: stop)
        source.resume()
        return source
    }
}
