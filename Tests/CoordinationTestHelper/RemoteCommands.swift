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
