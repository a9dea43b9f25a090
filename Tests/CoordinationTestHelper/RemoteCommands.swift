// Worker commands for the remote-presenter transport tests (Tests/FileCoordinationTests/
// RemoteEndpointTests.swift). Sequenced through stdin/stdout lines, never by sleeping.
//
//   remote-serve <socket-path> [unanswered-message] [uid]
//        (as <uid>, when given: setuid first) serve <socket-path> as a scripted presenter process
//        (`RemoteTesting.serve`), print "LISTENING <pid>", then one line per frame received
//        ("GOT <message> <path>", "LOOKUP <path>"); a message named <unanswered-message> ("-" for
//        none) is reported but never answered. Stops at end of stdin and prints "STOPPED".
//   remote-ask <socket-path> <timeout-ms> [uid|-] [unchecked]
//        (as <uid>, when given) connect, ask one relinquish-to-writer request and print the
//        outcome: "ANSWERED", "GONE", "REFUSED <uid>", "TIMEDOUT" or "ERROR <description>";
//        with "unchecked", without checking the listener's user first.
//   remote-present <path> [plain|save-writes <text>|refuse-save]
//        register a presenter of <path> with the process runtime (its lock directory from
//        CLOUDDOCUMENTS_LOCK_DIR), print "PRESENTING", then one line per message it gets:
//        "RELINQUISH-READER", "RELINQUISH-WRITER" (each with a reacquirer that prints "REACQUIRE"),
//        "SAVE", "DIDCHANGE", "DELETE". With save-writes, a save writes <text> to <path> (without
//        coordinating); with refuse-save, a save fails with domain test.save, code 3. A line
//        "add" on stdin registers one more presenter of <path> (same mode) and prints "ADDED".
//        Stops at end of stdin ("STOPPED").
//   presence-publish <table-file> <path>...
//        claim a slot of the presence table, publish the paths, print "PUBLISHED <slot>", wait for
//        end of stdin, release the slot and print "RELEASED" (kill it instead to leave a dead slot).
import FileCoordination
import Foundation
import Glibc

func runRemoteCommand(_ command: String, _ arguments: [String]) throws {
    switch command {
    case "remote-serve":
        if arguments.count > 2, let uid = UInt32(arguments[2]) { become(uid) }
        let unanswered = arguments.count > 1 && arguments[1] != "-" ? arguments[1] : nil
        let server = try RemoteTesting.serve(at: arguments[0], unanswered: unanswered) { line in say(line) }
        say("LISTENING \(getpid())")
        while readLine() != nil {}
        server.close()
        say("STOPPED")
    case "remote-ask":
        if arguments.count > 2, let uid = UInt32(arguments[2]) { become(uid) }
        let checking = !(arguments.count > 3 && arguments[3] == "unchecked")
        say(RemoteTesting.askOnce(at: arguments[0], timeout: .milliseconds(Int(arguments[1]) ?? 1000), checkingListener: checking))
    case "remote-present":
        let mode = arguments.count > 1 ? arguments[1] : "plain"
        let presenter = LinePresenter(URL(fileURLWithPath: arguments[0]), mode: mode, text: arguments.count > 2 ? arguments[2] : "")
        Coordinator.addFilePresenter(presenter)
        say("PRESENTING")
        var more: [LinePresenter] = []
        while let line = readLine() {
            guard line == "add" else { continue }
            more.append(LinePresenter(URL(fileURLWithPath: arguments[0]), mode: mode, text: arguments.count > 2 ? arguments[2] : ""))
            Coordinator.addFilePresenter(more[more.count - 1])
            say("ADDED")
        }
        for extra in more { Coordinator.removeFilePresenter(extra) }
        Coordinator.removeFilePresenter(presenter)
        say("STOPPED")
    case "presence-publish":
        guard let publication = RemoteTesting.publish(tablePath: arguments[0], paths: Array(arguments.dropFirst())) else {
            say("ERROR no slot")
            exit(1)
        }
        say("PUBLISHED \(publication.slot)")
        while readLine() != nil {}
        publication.release()
        say("RELEASED")
    default:
        say("unknown remote command \(command)")
        exit(2)
    }
}

/// Drops root for another user (the group first, while we still may).
private func become(_ uid: UInt32) {
    guard setgid(uid) == 0, setuid(uid) == 0 else {
        say("ERROR setuid(\(uid)) failed: errno \(errno)")
        exit(2)
    }
}

/// A presenter that prints every message it gets as one line (see `remote-present`).
final class LinePresenter: FilePresenter {
    let presentedItemURL: URL?
    let presentedItemOperationQueue: OperationQueue
    let mode: String
    let text: String

    init(_ url: URL, mode: String, text: String) {
        presentedItemURL = url
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        presentedItemOperationQueue = queue
        self.mode = mode
        self.text = text
    }

    func relinquishPresentedItem(toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        say("RELINQUISH-READER")
        reader { say("REACQUIRE") }
    }

    func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        say("RELINQUISH-WRITER")
        writer { say("REACQUIRE") }
    }

    func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        say("SAVE")
        switch mode {
        case "save-writes":
            if let url = presentedItemURL { try? text.write(to: url, atomically: false, encoding: .utf8) }
            completionHandler(nil)
        case "refuse-save":
            completionHandler(NSError(domain: "test.save", code: 3, userInfo: [NSLocalizedDescriptionKey: "the edits cannot be saved now"]))
        default:
            completionHandler(nil)
        }
    }

    func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        say("DELETE")
        completionHandler(nil)
    }

    func presentedItemDidChange() { say("DIDCHANGE") }
}
