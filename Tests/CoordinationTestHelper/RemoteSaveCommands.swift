// Worker command for cross-process lock borrowing (Tests/FileCoordinationTests/RemoteSaveTests.swift).
//
//   remote-coordinated-saver <path> <text>
//        register a presenter of <path> whose `savePresentedItemChanges` writes <text> through
//        its own `Coordinator(filePresenter:)` (as CloudDocument saves), print "PRESENTING", then
//        "SAVED" or "SAVE-FAILED <description>" for each save. Stops at end of stdin ("STOPPED").
import FileCoordination
import Foundation

func runRemoteSaveCommand(_ arguments: [String]) {
    let presenter = CoordinatedSaver(URL(fileURLWithPath: arguments[0]), text: arguments.count > 1 ? arguments[1] : "")
    Coordinator.addFilePresenter(presenter)
    say("PRESENTING")
    while readLine() != nil {}
    Coordinator.removeFilePresenter(presenter)
    say("STOPPED")
}

/// A presenter that saves by coordinating a write of its own (see `remote-coordinated-saver`).
final class CoordinatedSaver: FilePresenter {
    let presentedItemURL: URL?
    let presentedItemOperationQueue: OperationQueue
    let text: String

    init(_ url: URL, text: String) {
        presentedItemURL = url
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        presentedItemOperationQueue = queue
        self.text = text
    }

    func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        guard let url = presentedItemURL else { return completionHandler(nil) }
        let coordinator = Coordinator(filePresenter: self)
        coordinator.timeout = .seconds(60)   // a hang guard only
        do {
            try coordinator.coordinate(writingItemAt: url, options: .forReplacing) { target in
                try text.write(to: target, atomically: false, encoding: .utf8)
            }
            say("SAVED")
            completionHandler(nil)
        } catch {
            say("SAVE-FAILED \(error)")
            completionHandler(error)
        }
    }
}
