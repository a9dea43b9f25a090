// Worker command for the cross-process message-rule tests (Tests/FileCoordinationTests/
// RemoteMessageRulesTests.swift). Sequenced through stdin/stdout lines, never by sleeping.
//
//   remote-watch <path>...
//        register one presenter per <path> with the process runtime (its lock directory from
//        CLOUDDOCUMENTS_LOCK_DIR), print "PRESENTING", then one line per message any of them
//        gets, naming the presenter's original path's last component first:
//        "<name> MOVED <new path>", "<name> SUBITEM-MOVED <old> <new>", "<name> SUBITEM-APPEARED <path>",
//        "<name> SUBITEM-CHANGED <path>", "<name> SUBITEM-DELETE <path>", "<name> DELETE",
//        "<name> DIDCHANGE", "<name> GAINED". Relinquishments are answered at once, not printed.
//        Stops at end of stdin ("STOPPED").
import FileCoordination
import Foundation

func runRemoteRuleCommand(_ command: String, _ arguments: [String]) throws {
    let presenters = arguments.map { WatchingPresenter(URL(fileURLWithPath: $0)) }
    for presenter in presenters { Coordinator.addFilePresenter(presenter) }
    say("PRESENTING")
    while readLine() != nil {}
    for presenter in presenters { Coordinator.removeFilePresenter(presenter) }
    say("STOPPED")
}

/// A presenter that prints the messages of the move, subitem, deletion and version rules.
final class WatchingPresenter: FilePresenter {
    let presentedItemURL: URL?
    let presentedItemOperationQueue: OperationQueue
    let name: String

    init(_ url: URL) {
        presentedItemURL = url
        name = url.lastPathComponent
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        presentedItemOperationQueue = queue
    }

    func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        say("\(name) DELETE")
        completionHandler(nil)
    }

    func accommodatePresentedSubitemDeletion(at url: URL, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        say("\(name) SUBITEM-DELETE \(url.path)")
        completionHandler(nil)
    }

    func presentedItemDidChange() { say("\(name) DIDCHANGE") }
    func presentedItemDidMove(to newURL: URL) { say("\(name) MOVED \(newURL.path)") }
    func presentedSubitemDidAppear(at url: URL) { say("\(name) SUBITEM-APPEARED \(url.path)") }
    func presentedSubitemDidChange(at url: URL) { say("\(name) SUBITEM-CHANGED \(url.path)") }
    func presentedSubitem(at oldURL: URL, didMoveTo newURL: URL) { say("\(name) SUBITEM-MOVED \(oldURL.path) \(newURL.path)") }
    func presentedItemDidGain(_ version: FileVersionReference) { say("\(name) GAINED") }
}
