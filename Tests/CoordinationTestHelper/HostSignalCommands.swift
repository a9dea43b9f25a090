// Commands that behave like a host program with signal handlers of its own.
//
//   host-sigurg <path> <before|after>  install our own SIGURG handler with SA_RESTART (before the
//                                      first coordination, or after one timed-out wait), then
//                                      print "TIMEDOUT" for a read of <path> that times out (200 ms),
//                                      print "WAITING", wait for a stdin line, cancel() a read
//                                      that is waiting without a timeout and print "CANCELLED"
import FileCoordination
import Foundation
import Glibc

/// What a host's own SIGURG handler might look like (Go's runtime installs one with SA_RESTART).
private func installHostSIGURGHandler() {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in }
    action.sa_flags = SA_RESTART
    sigemptyset(&action.sa_mask)
    sigaction(SIGURG, &action, nil)
}

private func timedOutRead(_ url: URL) {
    let coordinator = Coordinator()
    coordinator.timeout = .milliseconds(200)
    do {
        try coordinator.coordinate(readingItemAt: url) { _ in }
        say("OK (not blocked)")
    } catch CoordinationError.timedOut {
        say("TIMEDOUT")
    } catch {
        say("ERROR \(error)")
    }
}

func runHostSIGURG(_ arguments: [String]) {
    let url = URL(fileURLWithPath: arguments[1])
    if arguments[2] == "after" { timedOutRead(url) }
    installHostSIGURGHandler()
    timedOutRead(url)
    let coordinator = Coordinator()
    let canceller = Thread {
        _ = readLine()
        coordinator.cancel()
    }
    canceller.start()
    say("WAITING")
    do {
        try coordinator.coordinate(readingItemAt: url) { _ in }
        say("OK (not blocked)")
    } catch CoordinationError.cancelled {
        say("CANCELLED")
    } catch {
        say("ERROR \(error)")
    }
}
