// Worker commands for the hostile-peer tests (Tests/FileCoordinationTests/HostilePeerTests.swift):
// a presenting process to attack, and a process of the same user that attacks its socket.
// Sequenced through stdin/stdout lines, never by sleeping.
//
//   hostile-victim <path>
//        present <path> with the process runtime (its lock directory from CLOUDDOCUMENTS_LOCK_DIR),
//        print "PRESENTING", then one line per presenter message (as remote-present does) and per
//        command read from stdin: "fds" → "FDS <open descriptors>", "turns" → "TURNS <turns of
//        the endpoint's poll loop>", "limit <n>" → lower the soft descriptor limit to <n> more
//        than are open now (libdispatch's event loop made first), "LIMITED <limit>". Stops at
//        end of stdin ("STOPPED").
//   hostile-peer <socket-path> <attack> [<presented path> <presenter number>]
//        attack the endpoint at <socket-path>, print "ATTACKED <what happened>", keep every
//        connection still open until end of stdin, then print "DONE" (for silence, once its
//        senders have ended: "DONE dropped=<connections the victim dropped>"). Attacks: malformed,
//        oversized, truncated, counts (each frame on its own connection, which the victim must
//        close), descriptors (valid lookups carrying SCM_RIGHTS descriptors, answers read back),
//        silence (lookups sent, answers never read: reported once 8 KiB of answers wait unread,
//        while more are sent), connections (more than the endpoint's cap,
//        held open; the last one proven accepted by a lookup's answer), flood (20,000 notifications
//        for the presenter <presenter number> at <presented path>, then a lookup whose answer is read).
//   The victim also takes: "number" → "NUMBER <its presenter's number>", "block"/"unblock" (suspend or
//   resume its presenter queue, "BLOCKED"/"UNBLOCKED" once drained), "waiting" → "WAITING <messages
//   from other processes on presenter queues>", "queued" → "QUEUED <operations on its presenter queue>",
//   "write" → a coordinated write of its file from this process, then "WROTE" (or "ERROR …").
import CSystemShim
import FileCoordination
import Foundation
import TestSupport
import Glibc

func runHostileCommand(_ command: String, _ arguments: [String]) {
    switch command {
    case "hostile-victim": runHostileVictim(arguments)
    case "hostile-peer": runHostilePeer(arguments)
    default:
        say("unknown hostile command \(command)")
        exit(2)
    }
}

// MARK: The victim

private func runHostileVictim(_ arguments: [String]) {
    let presenter = LinePresenter(URL(fileURLWithPath: arguments[0]), mode: "plain", text: "")
    Coordinator.addFilePresenter(presenter)
    say("PRESENTING")
    while let line = readLine() {
        let words = line.split(separator: " ")
        switch words.first {
        case "fds": say("FDS \(openDescriptorCount())")
        case "turns": say("TURNS \(RemoteHostileTesting.endpointTurns)")
        case "number": say("NUMBER \(RemoteHostileTesting.presenterNumber(of: presenter))")
        case "block":
            presenter.presentedItemOperationQueue.isSuspended = true
            say("BLOCKED")
        case "unblock":
            presenter.presentedItemOperationQueue.isSuspended = false
            presenter.presentedItemOperationQueue.waitUntilAllOperationsAreFinished()
            say("UNBLOCKED")
        case "waiting": say("WAITING \(RemoteHostileTesting.remoteDeliveriesWaiting)")
        case "queued": say("QUEUED \(presenter.presentedItemOperationQueue.operationCount)")
        case "write":
            do {
                try Coordinator(filePresenter: presenter).coordinate(writingItemAt: URL(fileURLWithPath: arguments[0])) { url in
                    try Data("written by the victim\n".utf8).write(to: url)
                }
                say("WROTE")
            } catch {
                say("ERROR \(error)")
            }
        case "limit":
            // libdispatch makes its event loop's descriptors (epoll, eventfd) on first use and
            // traps if it cannot: use it before the limit, as any application has long since.
            let warmed = DispatchSemaphore(value: 0)
            DispatchQueue.global().async { warmed.signal() }
            warmed.wait()
            presenter.presentedItemOperationQueue.addOperation { warmed.signal() }
            warmed.wait()
            var limit = rlimit()
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            limit.rlim_cur = rlim_t(openDescriptorCount() + (words.count > 1 ? Int(words[1]) ?? 0 : 0))
            say(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? "LIMITED \(limit.rlim_cur)" : "ERROR setrlimit: errno \(errno)")
        default: say("ERROR unknown victim command \(line)")
        }
    }
    Coordinator.removeFilePresenter(presenter)
    say("STOPPED")
}

/// Open descriptors, counted without opening one (`/proc/self/fd` needs one, which a process at
/// its limit does not have).
private func openDescriptorCount() -> Int {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    let highest = Int32(clamping: min(UInt64(limit.rlim_cur), 65536))
    return (0..<highest).reduce(0) { $0 + (fcntl($1, F_GETFD) >= 0 ? 1 : 0) }
}

// MARK: The hostile peer

private func runHostilePeer(_ arguments: [String]) {
    let path = arguments[0]
    var held: [Int32] = []
    var finish: () -> String = { "" }
    let report: String
    switch arguments[1] {
    case "malformed": report = closedCount(path, HostileFrames.malformed())
    case "oversized": report = closedCount(path, HostileFrames.oversized())
    case "counts": report = closedCount(path, HostileFrames.overflowingCounts())
    case "truncated": report = truncated(path, held: &held)
    case "descriptors": report = descriptors(path, held: &held)
    case "silence": (report, finish) = silence(path, held: &held)
    case "connections": report = connections(path, held: &held)
    case "flood" where arguments.count == 4: report = flood(path, presented: arguments[2], number: UInt64(arguments[3]) ?? 0)
    default: report = "ERROR unknown attack \(arguments[1])"
    }
    say("ATTACKED \(report)")
    while readLine() != nil {}
    let outcome = finish()
    for fd in held { close(fd) }
    say("DONE" + outcome)
}

/// 20,000 notifications for one presenter on one connection (the victim's presenter queue is
/// blocked meanwhile): the victim must not queue them all.
private func flood(_ path: String, presented: String, number: UInt64) -> String {
    let fd = rawConnect(path)
    guard fd >= 0 else { return "ERROR connect" }
    defer { close(fd) }
    var sent = 0
    for id in 1...20_000 where rawSend(fd, RemoteHostileTesting.subitemNotificationFrame(id: UInt64(id), number: number, path: presented)) {
        sent += 1
    }
    // A lookup's answer comes after every notification before it was handed over.
    let answered = rawSend(fd, RemoteHostileTesting.lookupFrame(id: 30_000, path: "/")) ? readFrames(fd, count: 1) : 0
    return "sent=\(sent) answered=\(answered)"
}

/// Sends each frame on a connection of its own; reports how many connections the victim closed.
private func closedCount(_ path: String, _ frames: [[UInt8]]) -> String {
    var closed = 0
    for frame in frames {
        let fd = rawConnect(path)
        guard fd >= 0 else { continue }
        _ = rawSend(fd, frame)
        if waitUntilClosed(fd) { closed += 1 }
        close(fd)
    }
    return "closed=\(closed) of=\(frames.count)"
}

/// Frames cut short: two connections end in the middle of a frame (the victim sees the end of
/// file), twenty stay open with an unfinished frame of nearly 64 KiB (held).
private func truncated(_ path: String, held: inout [Int32]) -> String {
    var closed = 0
    for cut in [HostileFrames.header(1000) + [UInt8](repeating: 7, count: 10), [2, 0]] {
        let fd = rawConnect(path)
        guard fd >= 0 else { continue }
        _ = rawSend(fd, cut)
        shutdown(fd, Int32(SHUT_WR))
        if waitUntilClosed(fd) { closed += 1 }
        close(fd)
    }
    let lookup = RemoteHostileTesting.lookupFrame(id: 1, path: "/")
    for index in 0..<20 {
        let fd = rawConnect(path)
        guard fd >= 0 else { continue }
        if index.isMultiple(of: 2) {
            _ = rawSend(fd, HostileFrames.header(UInt32(RemoteHostileTesting.maximumFrameLength)) + [UInt8](repeating: 1, count: 60_000))
        } else {
            _ = rawSend(fd, Array(lookup.prefix(lookup.count / 2)))
        }
        held.append(fd)
    }
    return "closed=\(closed) of=2 held=\(held.count)"
}

/// Valid lookups, each carrying 200 descriptors (`SCM_RIGHTS`), four at a time on each of four
/// connections; every answer is read back, so the victim has read every frame.
private func descriptors(_ path: String, held: inout [Int32]) -> String {
    let null = open("/dev/null", O_RDONLY)
    let attached = [Int32](repeating: null, count: 200)
    var sent = 0, answered = 0
    for _ in 0..<4 {
        let fd = rawConnect(path)
        guard fd >= 0 else { continue }
        held.append(fd)
        var id: UInt64 = 0
        for _ in 0..<25 {
            var batch = 0
            for _ in 0..<4 {
                id += 1
                if sendWithDescriptors(fd, RemoteHostileTesting.lookupFrame(id: id, path: "/"), attached) {
                    sent += attached.count
                    batch += 1
                }
            }
            answered += readFrames(fd, count: batch)
        }
    }
    close(null)
    return "answered=\(answered) descriptors=\(sent)"
}

/// Six connections that send lookups (one thread each, blocking sends) and never read an answer,
/// at most 20,000 each, until the victim stops reading them or drops them. Reported once the
/// victim has answered at least 8 KiB on them — more than its socket buffer takes in small
/// answers, so its further answers to them wait (they must not keep it from serving others) —
/// while the threads go on sending. At the end (`finish`), waits for the threads and reports how
/// many connections the victim dropped (" dropped=<n>"): the 20,000 answers of one do not fit in
/// its bounds.
private func silence(_ path: String, held: inout [Int32]) -> (String, () -> String) {
    let sent = Counter(), dropped = Counter(), finished = DispatchGroup()
    for _ in 0..<6 {
        let fd = rawConnect(path)
        guard fd >= 0 else { continue }
        held.append(fd)
        finished.enter()
        Thread {
            for id in 1...20_000 {
                guard rawSend(fd, RemoteHostileTesting.lookupFrame(id: UInt64(id), path: "/")) else {
                    dropped.add(1)
                    break
                }
                sent.add(1)
            }
            finished.leave()
        }.start()
    }
    // Waits for the victim's answers to pile up unread (or for the senders to end).
    var queued = 0
    _ = Polling.holds(interval: .milliseconds(10)) {
        queued = held.reduce(0) { total, fd in
            var bytes: Int32 = 0
            return total + (ioctl(fd, UInt(FIONREAD), &bytes) == 0 ? Int(bytes) : 0)
        }
        return queued >= 8192 || finished.wait(timeout: .now()) == .success
    }
    return ("queued=\(queued) sent=\(sent.value)", {
        finished.wait()
        return " dropped=\(dropped.value)"
    })
}

/// A count shared by the attacking threads.
private final class Counter: @unchecked Sendable {
    // @unchecked: `count` is only touched with `lock` held.
    private let lock = NSLock()
    private var count = 0
    func add(_ value: Int) { lock.lock(); count += value; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}

/// More connections than the endpoint's cap, held open; a lookup answered on the last proves the
/// victim accepted it (connections are accepted in order).
private func connections(_ path: String, held: inout [Int32]) -> String {
    let total = RemoteHostileTesting.maximumConnections + 44
    for _ in 0..<total {
        let fd = rawConnect(path)
        guard fd >= 0 else { break }
        held.append(fd)
    }
    guard let last = held.last, rawSend(last, RemoteHostileTesting.lookupFrame(id: 1, path: "/")) else {
        return "ERROR opened only \(held.count)"
    }
    return "opened=\(held.count) answered=\(readFrames(last, count: 1))"
}

// MARK: Raw socket calls (a hostile peer uses no library code to talk)

private func rawConnect(_ path: String) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return -1 }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: bytes.prefix(raw.count - 1))
    }
    let connected = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard connected == 0 else { close(fd); return -1 }
    return fd
}

private func rawSend(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
        if sent <= 0 { return false }
        offset += sent
    }
    return true
}

/// Sends `bytes` with `descriptors` attached as `SCM_RIGHTS`. The control message is laid out
/// by the C library's `CMSG_*` macros (CSystemShim's `cshim_cmsg_*`), not by hand.
private func sendWithDescriptors(_ fd: Int32, _ bytes: [UInt8], _ descriptors: [Int32]) -> Bool {
    let payload = descriptors.count * MemoryLayout<Int32>.size
    // A buffer of whole `cmsghdr`s, so it is aligned as the macros expect.
    let headers = (cshim_cmsg_space(payload) + MemoryLayout<cmsghdr>.stride - 1) / MemoryLayout<cmsghdr>.stride
    var control = [cmsghdr](repeating: cmsghdr(), count: headers)
    var data = bytes
    return data.withUnsafeMutableBytes { dataBuffer -> Bool in
        control.withUnsafeMutableBytes { controlBuffer -> Bool in
            var vector = iovec(iov_base: dataBuffer.baseAddress, iov_len: dataBuffer.count)
            return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                var message = msghdr()
                message.msg_iov = vectorPointer
                message.msg_iovlen = 1
                message.msg_control = controlBuffer.baseAddress
                message.msg_controllen = cshim_cmsg_space(payload)
                guard let header = cshim_cmsg_firsthdr(&message) else { return false }
                header.pointee.cmsg_len = cshim_cmsg_len(payload)
                header.pointee.cmsg_level = SOL_SOCKET
                header.pointee.cmsg_type = Int32(SCM_RIGHTS)
                descriptors.withUnsafeBytes { raw in
                    guard let source = raw.baseAddress else { return }
                    UnsafeMutableRawPointer(cshim_cmsg_data(header)).copyMemory(from: source, byteCount: payload)
                }
                return sendmsg(fd, &message, Int32(MSG_NOSIGNAL)) == dataBuffer.count
            }
        }
    }
}

/// Reads `count` whole frames (their bodies discarded); returns how many came.
private func readFrames(_ fd: Int32, count: Int) -> Int {
    var got = 0
    while got < count {
        guard let header = readExactly(fd, 4) else { return got }
        let length = Int(header[0]) | Int(header[1]) << 8 | Int(header[2]) << 16 | Int(header[3]) << 24
        guard readExactly(fd, length) != nil else { return got }
        got += 1
    }
    return got
}

private func readExactly(_ fd: Int32, _ count: Int) -> [UInt8]? {
    var bytes = [UInt8](repeating: 0, count: count)
    var offset = 0
    while offset < count {
        guard waitReadable(fd) else { return nil }
        let got = bytes.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + offset, count - offset, 0) }
        if got <= 0 { return nil }
        offset += got
    }
    return bytes
}

/// True once the victim has closed `fd` (end of file or a reset), reading and discarding what
/// comes before; false if it is still open after a generous 30 s (a test failure, not a hang).
private func waitUntilClosed(_ fd: Int32) -> Bool {
    var chunk = [UInt8](repeating: 0, count: 4096)
    while waitReadable(fd) {
        let got = recv(fd, &chunk, chunk.count, 0)
        if got <= 0 { return true }
    }
    return false
}

private func waitReadable(_ fd: Int32) -> Bool {
    var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    return poll(&poller, 1, 30_000) > 0
}

/// Frames a well-behaved peer never sends, built by hand from the wire format
/// (Docs/RemotePresenters.md, *The wire format*): `[length: UInt32 LE][version][kind][fields]`.
private enum HostileFrames {
    static let version = RemoteHostileTesting.wireVersion
    static let request: UInt8 = 1, answer: UInt8 = 2, lookup: UInt8 = 3, lookupAnswer: UInt8 = 4

    static func header(_ length: UInt32) -> [UInt8] { withUnsafeBytes(of: length.littleEndian) { Array($0) } }
    static func u64(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
    static func blob(_ bytes: [UInt8]) -> [UInt8] { header(UInt32(bytes.count)) + bytes }
    static func frame(_ body: [UInt8]) -> [UInt8] { header(UInt32(body.count)) + body }

    /// Bodies that are not valid frames, each framed correctly.
    static func malformed() -> [[UInt8]] {
        var random = SystemRandomNumberGenerator()
        return [
            frame([9, lookup] + u64(1) + blob(Array("/a".utf8)) + [7]),                 // unknown version
            frame([version, 99, 0, 0, 0, 0]),                                           // unknown kind
            frame([version, request] + u64(1)),                                         // ends early
            frame([version, lookup] + u64(1) + blob(Array("relative".utf8)) + [7]),     // a relative path
            frame([version, lookup] + u64(1) + blob([47, 97, 0, 98]) + [7]),            // a NUL in a path
            frame([version, lookup] + u64(1) + blob(Array("/a".utf8)) + [0]),           // no scope
            frame([version, lookup] + u64(1) + blob(Array("/a".utf8)) + [7, 0]),        // a byte left over
            frame([version, request] + u64(1) + u64(1) + blob(Array("/a".utf8)) + [200]),  // unknown message
            frame([version, answer] + u64(1) + [1, 0]),                                 // an answer, to a server
            frame((0..<200).map { _ in UInt8.random(in: 0...255, using: &random) }),    // noise
        ]
    }

    /// Announced lengths the endpoint must refuse before reading a body.
    static func oversized() -> [[UInt8]] {
        [header(.max) + [1, 2, 3], header(0x7FFF_FFFF), header(UInt32(RemoteHostileTesting.maximumFrameLength + 1)) + [9],
         header(0) + [0, 0], header(1) + [2]]
    }

    /// Counts and lengths inside a frame that overflow what follows, or any limit.
    static func overflowingCounts() -> [[UInt8]] {
        [
            frame([version, lookup] + u64(1) + header(.max) + Array("/a".utf8) + [7]),
            frame([version, lookup] + u64(1) + header(0x7FFF_FFFF) + Array("/a".utf8) + [7]),
            frame([version, lookupAnswer] + u64(1) + header(.max)),
            frame([version, request] + u64(1) + u64(1) + blob(Array("/a".utf8)) + [9] + header(0xFFFF_FFF0) + Array("/a".utf8)),
            frame([version, answer] + u64(1) + [2, 1] + header(.max) + Array("domain".utf8)),
            frame([version, answer] + u64(1) + [1, 7] + u64(5)),
        ]
    }
}
