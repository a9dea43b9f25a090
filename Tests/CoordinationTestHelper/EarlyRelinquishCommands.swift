// remote-write-holder <path> <mode>
//      register a presenter of <path> that prints "RELINQUISH-WRITER", "RELINQUISH-READER" and
//      "REACQUIRE" as it is told them, print "PRESENTING", then for each stdin line "hold" take a
//      coordinated write of <path> (its own coordinator, so the presenter is not asked) and print
//      "HOLDING". Then, with <mode> `until-line`, keep the lock until the next stdin line; with
//      `until-reacquired`, keep it until the presenter, relinquished while we hold the lock, has
//      been given back — the work of a presenter whose own coordinated access waits for another
//      process's reacquirer (a hang guard of 60 s, then "GAVE-UP"). Print "RELEASED" after the
//      accessor. Stops at end of stdin ("STOPPED").
import FileCoordination
import Foundation

func runWriteHolderCommand(_ arguments: [String]) {
    let url = URL(fileURLWithPath: arguments[0])
    let untilReacquired = arguments.count > 1 && arguments[1] == "until-reacquired"
    let presenter = ReacquireSignallingPresenter(url)
    Coordinator.addFilePresenter(presenter)
    say("PRESENTING")
    while let line = readLine() {
        guard line == "hold" else { continue }
        let coordinator = Coordinator(filePresenter: presenter)
        coordinator.timeout = .seconds(60)  // a hang guard only
        do {
            try coordinator.coordinate(writingItemAt: url) { _ in
                say("HOLDING")
                if untilReacquired {
                    say(presenter.reacquired.wait(timeout: .now() + 60) == .success ? "GIVEN-BACK" : "GAVE-UP")
                } else {
                    _ = readLine()
                }
            }
            say("RELEASED")
        } catch {
            say("ERROR \(error)")
        }
    }
    Coordinator.removeFilePresenter(presenter)
    say("STOPPED")
}

/// A presenter that prints what it is told and signals `reacquired` each time it is given back.
final class ReacquireSignallingPresenter: FilePresenter {
    let presentedItemURL: URL?
    let presentedItemOperationQueue: OperationQueue
    let reacquired = DispatchSemaphore(value: 0)

    init(_ url: URL) {
        presentedItemURL = url
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        presentedItemOperationQueue = queue
    }

    func relinquishPresentedItem(toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        say("RELINQUISH-READER")
        reader { [reacquired] in say("REACQUIRE"); reacquired.signal() }
    }

    func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        say("RELINQUISH-WRITER")
        writer { [reacquired] in say("REACQUIRE"); reacquired.signal() }
    }
}
