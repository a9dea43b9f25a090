import FileCoordination
import Foundation
import Synchronization

/// Idle keep-alive connections, by `host:port`, for the next request to the same server: at most
/// ``maximumIdle`` per server (more are closed), the most recently used handed out first, and
/// none idle longer than ``maximumIdleTime`` (servers close idle connections after a few seconds:
/// Apache's `KeepAliveTimeout` is 5 s). A connection is checked when taken: one the server closed
/// meanwhile, or with unread bytes, is closed instead.
///
/// Its table is behind a `Locked` (a pthread mutex ThreadSanitizer sees); any thread. A connection is either in the pool or held by one
/// exchange, never both.
final class HTTPConnectionPool: Sendable {
    static let maximumIdle = 4
    static let maximumIdleTime: TimeInterval = 30

    private let idle = Locked<[String: [HTTPConnection]]>([:])

    deinit {
        idle.withLock { table in
            for connection in table.values.joined() { connection.close() }
            table = [:]
        }
    }

    /// An idle connection to `key` the server has not closed, or `nil`.
    func take(_ key: String) -> HTTPConnection? {
        let now = DispatchTime.now().uptimeNanoseconds
        while true {
            guard let connection = idle.withLock({ $0[key]?.popLast() }) else { return nil }
            let age = now >= connection.idleSince ? now - connection.idleSince : 0
            if Double(age) / 1e9 < Self.maximumIdleTime, connection.isUsableWhenIdle { return connection }
            connection.close()
        }
    }

    /// Puts `connection`, whose exchange ended cleanly, back for the next request.
    func giveBack(_ connection: HTTPConnection) {
        guard connection.buffered.isEmpty else {
            connection.close()
            return
        }
        connection.idleSince = DispatchTime.now().uptimeNanoseconds
        let surplus: HTTPConnection? = idle.withLock { table in
            var list = table[connection.key, default: []]
            list.append(connection)
            let oldest = list.count > Self.maximumIdle ? list.removeFirst() : nil
            table[connection.key] = list
            return oldest
        }
        surplus?.close()
    }
}
