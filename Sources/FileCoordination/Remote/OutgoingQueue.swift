import Glibc
import SystemSupport

/// The bytes waiting to be written to one non-blocking socket, in order. Nothing here ever waits:
/// `flush` writes what the socket takes now, and the owner's poll loop calls it again when the
/// socket is writable (`POLLOUT`). The owner enforces `RemoteBounds.outgoingByteLimit` (`admits`)
/// and `RemoteBounds.drainTimeout` (`isOverdue`). Not thread-safe: its owner keeps it under a lock.
struct OutgoingQueue {
    private var bytes: [UInt8] = []
    /// Where the unwritten bytes start in `bytes`.
    private var start = 0
    /// When the queue last made progress (became non-empty, or the peer took some bytes).
    private var progressed = ContinuousClock.now

    /// Bytes not written yet.
    var count: Int { bytes.count - start }
    var isEmpty: Bool { count == 0 }

    /// Whether `extra` more bytes stay within `RemoteBounds.outgoingByteLimit`.
    func admits(_ extra: Int) -> Bool { count + extra <= RemoteBounds.outgoingByteLimit }

    /// Whether bytes have waited with no progress for longer than `RemoteBounds.drainTimeout`.
    func isOverdue(at now: ContinuousClock.Instant) -> Bool {
        !isEmpty && now - progressed > RemoteBounds.drainTimeout
    }

    /// When the queue becomes overdue; nil when it is empty.
    var overdueAt: ContinuousClock.Instant? { isEmpty ? nil : progressed + RemoteBounds.drainTimeout }

    mutating func append(_ frame: [UInt8]) {
        if isEmpty {
            bytes.removeAll(keepingCapacity: bytes.capacity <= 64 * 1024)
            start = 0
            progressed = .now
        } else if start >= bytes.count / 2 {
            bytes.removeFirst(start)  // what was written: never more than what is still queued
            start = 0
        }
        bytes.append(contentsOf: frame)
    }

    /// Queues `frame` behind what waits already; when nothing waits, writes what `fd` takes now
    /// straight from `frame` and queues only the rest (the usual case: no copy).
    mutating func send(_ frame: [UInt8], to fd: Int32) -> Flush {
        guard isEmpty else {
            append(frame)
            return .pending
        }
        var offset = 0
        while offset < frame.count {
            let sent = frame.withUnsafeBytes { raw in
                valueOrErrno { Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
            }
            switch sent {
            case .success(let count) where count > 0:
                offset += count
                continue
            case .success: break  // Took nothing: the rest waits for `POLLOUT`.
            case .failure(let error) where error.rawValue == EAGAIN || error.rawValue == EWOULDBLOCK: break
            case .failure: return .failed
            }
            break
        }
        if offset == frame.count { return .drained }
        append(Array(frame[offset...]))
        return .pending
    }

    enum Flush: Equatable {
        /// Everything was written.
        case drained
        /// The socket's buffer is full: the rest waits for `POLLOUT`.
        case pending
        /// The connection is unusable (the peer closed it, or an error).
        case failed
    }

    /// Writes as much as `fd` takes now (`MSG_DONTWAIT`, `MSG_NOSIGNAL`).
    mutating func flush(to fd: Int32) -> Flush {
        while start < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                valueOrErrno { Glibc.send(fd, raw.baseAddress! + start, raw.count - start, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
            }
            switch sent {
            case .success(let count) where count > 0:
                start += count
                progressed = .now
                continue
            case .success: return .pending
            case .failure(let error) where error.rawValue == EAGAIN || error.rawValue == EWOULDBLOCK: return .pending
            case .failure: return .failed
            }
        }
        if start > 0 {
            bytes.removeAll(keepingCapacity: bytes.capacity <= 64 * 1024)
            start = 0
        }
        return .drained
    }
}
