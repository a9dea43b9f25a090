import Foundation
import Glibc
import SystemSupport

/// Tells the agent when `clouddocs agent …` left a request in `ROOT/.clouddocsd/requests/`: an
/// ``InotifyLoop`` watching that folder for names moved in (a request is written under a
/// temporary name and renamed into place). `arrived` runs on the loop's thread and must not
/// wait; the agent's reaction (taking the requests) happens elsewhere. When the watch cannot be
/// set up the agent still takes requests at every pass, only later.
final class RequestWatcher: Sendable {
    private let loop: InotifyLoop

    init(folder: AgentFolder, arrived: @escaping @Sendable () -> Void) throws(InotifyLoop.SetupError) {
        loop = try InotifyLoop(name: "clouddocsd.req")
        let path = folder.requestsFolder.path
        loop.start { loop in Client(path: path, arrived: arrived) }
    }

    func stop() {
        loop.stop()
        loop.join()
    }

    /// The loop's client: lives on the loop's thread only.
    private final class Client: InotifyLoopClient {
        let path: String
        let arrived: @Sendable () -> Void

        init(path: String, arrived: @escaping @Sendable () -> Void) {
            self.path = path
            self.arrived = arrived
        }

        func inotifyLoopDidStart(_ loop: InotifyLoop) {
            _ = loop.addWatch(path, mask: UInt32(IN_MOVED_TO | IN_CLOSE_WRITE))
            arrived()  // requests left before the watch existed
        }

        func inotifyLoop(_ loop: InotifyLoop, didRead events: [InotifyEvent]) {
            loop.assertInLoop()
            if events.contains(where: { $0.name.hasSuffix(".request") || $0.mask & UInt32(IN_Q_OVERFLOW) != 0 }) { arrived() }
        }
    }
}
