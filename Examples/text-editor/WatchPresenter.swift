import ExampleDocuments
import Foundation
import Synchronization

/// A second presenter of the watched file, beside the document, that prints what the document
/// itself does not show as a state: the file renamed or moved (`presentedItemDidMove(to:)`), and
/// deleted (`accommodatePresentedItemDeletion`). Both come from coordinators, or from the change
/// monitor when a program that does not coordinate (`mv`, `rm`, a sync tool) did it.
final class WatchPresenter: FilePresenter {
    private let url: Mutex<URL>
    let presentedItemOperationQueue: OperationQueue

    init(_ url: URL) {
        self.url = Mutex(url)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        presentedItemOperationQueue = queue
    }

    var presentedItemURL: URL? { url.withLock { $0 } }

    func presentedItemDidMove(to newURL: URL) {
        url.withLock { $0 = newURL }
        Self.say("moved to \(newURL.path)")
    }

    func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        Self.say("deleted: \(presentedItemURL?.lastPathComponent ?? "the file") is gone")
        completionHandler(nil)
    }

    /// Returns once every message already sent to this presenter has been handled (printed).
    func finishMessages() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            presentedItemOperationQueue.addOperation { continuation.resume() }
        }
    }

    /// Prints one line at once (the output may be a pipe).
    private static func say(_ line: String) {
        print(line)
        fflush(nil)
    }
}
