import Foundation
import Glibc
import Testing
@testable import FileCoordination

/// The transport's bounds (`RemoteBounds`), each with an endpoint in this process: idle
/// connections, reacquirers held by a connection, unanswered requests, a peer that never reads,
/// and the asker's one retry when a live peer drops its connection. Sequenced by what the
/// endpoint receives and by connections closing, never by sleeping (the waits' timeouts are
/// generous safety nets only). Docs/RemotePresenters.md, *Hostile peers*.
@Suite("Remote presenters: the transport's bounds", .serialized)
struct RemoteBoundsTests {
    /// The frames an endpoint's handler got, in order; `next` waits for the next one.
    final class Inbox: Sendable {
        private let frames = Locked<[RemoteFrame]>([])
        private let arrived = DispatchSemaphore(value: 0)

        func add(_ frame: RemoteFrame) {
            frames.withLock { $0.append(frame) }
            arrived.signal()
        }

        var all: [RemoteFrame] { frames.withLock { $0 } }

        /// Waits until a frame satisfying `matches` has arrived (30 s at most: a failure, not a hang).
        func wait(for matches: (RemoteFrame) -> Bool) -> Bool {
            while !all.contains(where: matches) {
                guard arrived.wait(timeout: .now() + 30) == .success else { return false }
            }
            return true
        }
    }

    private static func frame(_ message: PresenterMessage, id: UInt64) throws -> [UInt8] {
        try RemoteMessageCodec.encode(.request(RemoteRequest(id: id, presenterNumber: 1, presentedPath: "/doc", message: message)))
    }

    /// Waits until the endpoint closes `fd` (30 s at most); true when it did.
    private static func closedByPeer(_ fd: Int32) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 30_000) == 1 else { return false }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) <= 0
    }

    @Test("a connection with nothing in flight is closed after the idle timeout; one with an unanswered request is kept")
    func idleConnectionsAreClosed() throws {
        let scratch = try Scratch()
        let path = scratch.url.path + "/peer"
        let inbox = Inbox()
        let endpoint = try RemoteEndpoint(path: path, idleTimeout: .milliseconds(200)) { frame, _ in inbox.add(frame) }  // never answers
        defer { endpoint.close() }
        let busy = try UnixSocket.connect(to: path).get()
        defer { close(busy) }
        try UnixSocket.sendAll(busy, Self.frame(.saveChanges, id: 1), deadline: nil).get()
        #expect(inbox.wait { if case .request = $0 { true } else { false } })
        // Connected after the busy one's last traffic: were the busy one taken for idle, it
        // would be closed first.
        let idle = try UnixSocket.connect(to: path).get()
        defer { close(idle) }
        #expect(Self.closedByPeer(idle))
        var poller = pollfd(fd: busy, events: Int16(POLLIN), revents: 0)
        #expect(poll(&poller, 1, 0) == 0)  // still open, nothing to read
    }

    @Test("reacquirers handed out and never given back run when the connection closes; a reacquire not handed out on it is not run")
    func reacquirersOfAClosedConnectionRun() throws {
        let scratch = try Scratch()
        let path = scratch.url.path + "/peer"
        let inbox = Inbox()
        let endpoint = try RemoteEndpoint(path: path) { frame, reply in
            inbox.add(frame)
            guard case .request(let request) = frame else { return }
            switch request.message {
            case .relinquishToWriter: reply.send(.answer(RemoteAnswer(id: request.id, outcome: .relinquished(reacquirer: 41))))
            case .saveChanges: reply.send(.answer(RemoteAnswer(id: request.id, outcome: .completed(nil))))
            default: break
            }
        }
        defer { endpoint.close() }
        let connection = try PeerLink(path: path)
        defer { connection.close() }
        let id = connection.makeID()
        let answer = try connection.ask(.request(RemoteRequest(id: id, presenterNumber: 1, presentedPath: "/doc", message: .relinquishToWriter)),
                                        id: id, context: WaitContext(timeout: .seconds(30), token: CancellationToken()))
        #expect(answer == .answer(RemoteAnswer(id: id, outcome: .relinquished(reacquirer: 41))))
        // Another asker's reacquirer: dropped. A request after it is answered, so it was read.
        #expect(connection.send(.request(RemoteRequest(id: connection.makeID(), presenterNumber: 1, presentedPath: "/doc",
                                                       message: .reacquire(ReacquirerID(value: 77))))))
        let saveID = connection.makeID()
        _ = try connection.ask(.request(RemoteRequest(id: saveID, presenterNumber: 1, presentedPath: "/doc", message: .saveChanges)),
                               id: saveID, context: WaitContext(timeout: .seconds(30), token: CancellationToken()))
        let reacquired: (RemoteFrame) -> UInt64? = { frame in
            guard case .request(let request) = frame, case .reacquire(let id) = request.message else { return nil }
            return id.value
        }
        #expect(inbox.all.compactMap(reacquired).isEmpty)
        // The asker goes away without giving reacquirer 41 back: the endpoint runs it.
        connection.close()
        #expect(inbox.wait { reacquired($0) == 41 })
        #expect(inbox.all.compactMap(reacquired) == [41])
    }

    @Test("a connection with more unanswered requests than the bound is dropped, and its asker learns at once")
    func unansweredRequestsAreBounded() throws {
        let scratch = try Scratch()
        let path = scratch.url.path + "/peer"
        let endpoint = try RemoteEndpoint(path: path) { _, _ in }  // a presenter that never answers
        defer { endpoint.close() }
        let link = try PeerLink(path: path)
        defer { link.close() }
        let before = RemoteLog.droppedCount
        let gone = Locked(0)
        let allGone = Signal()
        let count = RemoteBounds.unansweredLimit + 1
        for _ in 0..<count {
            let id = link.makeID()
            link.ask(.request(RemoteRequest(id: id, presenterNumber: 1, presentedPath: "/doc", message: .saveChanges)), id: id) { reply in
                if reply == nil, gone.withLock({ $0 += 1; return $0 }) == count { allGone.fire() }
            }
        }
        #expect(allGone.wait())
        #expect(RemoteLog.droppedCount > before)
    }

    @Test("a link to a peer that never reads queues without waiting, up to the byte bound, then ends and fails what is pending")
    func linkToAPeerThatNeverReads() throws {
        let scratch = try Scratch()
        let path = scratch.url.path + "/silent"
        let listener = try UnixSocket.make().get()
        defer { close(listener) }
        #expect(try UnixSocket.withAddress(path, { bind(listener, $0, $1) }).get() == 0)
        #expect(listen(listener, 4) == 0)
        let link = try PeerLink(path: path)
        let accepted = accept(listener, nil, nil)  // and never read
        defer { close(accepted) }
        let ended = Signal()
        let id = link.makeID()
        link.ask(.lookup(RemoteLookup(id: id, path: "/doc", scope: .all)), id: id) { reply in
            if reply == nil { ended.fire() }
        }
        let frame = RemoteFrame.request(RemoteRequest(id: 0, presenterNumber: 1, presentedPath: "/" + String(repeating: "x", count: 1000),
                                                      message: .itemDidChange))
        var sent = 0
        while sent < 100_000, link.send(frame) { sent += 1 }  // ≈ 100 MB if nothing bounded it
        #expect(sent < 100_000)
        #expect(sent * 1000 >= RemoteBounds.outgoingByteLimit)  // the bound, plus what the kernel took
        #expect(ended.wait())
        #expect(!link.isOpen)
    }

    @Test("when a live peer drops the connection under an ask, the ask is sent once more on a new one; a second failure is logged")
    func deliveryAsksOnceMoreWhenALivePeerDropsTheConnection() throws {
        let scratch = try Scratch()
        let lockDirectory = scratch.url.path + "/locks"
        #expect(mkdir(lockDirectory, 0o700) == 0 && mkdir(lockDirectory + "/@peers", 0o700) == 0)
        let table = try #require(PresenceTable.of(directoryPath: lockDirectory))
        let claim = try #require(PresenceTable.SlotClaim.claim(in: table))  // this process, alive
        defer { claim.release() }
        let asked = Locked(0)
        let failures = Locked(1)  // how many asks the peer answers by breaking the connection
        let endpoint = try RemoteEndpoint(path: lockDirectory + "/@peers/\(claim.slot)") { frame, reply in
            switch frame {
            case .lookup(let lookup):
                reply.send(.lookupAnswer(RemoteLookupAnswer(id: lookup.id, entries: [.init(presenterNumber: 1, path: lookup.path)])))
            case .request(let request) where request.message == .relinquishToWriter:
                asked.withLock { $0 += 1 }
                if failures.withLock({ $0 -= 1; return $0 >= 0 }) {
                    // Not an answer: the asker's link ends, as when the endpoint drops it.
                    reply.send(.request(RemoteRequest(id: 0, presenterNumber: 1, presentedPath: "/doc", message: .itemDidChange)))
                } else {
                    reply.send(.answer(RemoteAnswer(id: request.id, outcome: .relinquished(reacquirer: 7))))
                }
            default: break
            }
        }
        defer { endpoint.close() }
        let delivery = RemoteDelivery()
        let found = try delivery.lookup("/doc", slots: claim.bit, table: table, socketFolder: lockDirectory + "/@peers",
                                        context: WaitContext(timeout: .seconds(30), token: CancellationToken()), limitMilliseconds: 10_000)
        let presenter = try #require(found.first?.id)

        func relinquish() -> UInt64?? {
            let answer = Locked<UInt64??>(nil)
            let answered = Signal()
            delivery.send(PresenterRequest(presenter: presenter, presentedPath: "/doc", message: .relinquishToWriter, borrow: nil)) { reply in
                if case .relinquished(let reacquirer) = reply { answer.withLock { $0 = .some(reacquirer?.value) } }
                answered.fire()
            }
            #expect(answered.wait())
            return answer.withLock { $0 }
        }

        #expect(relinquish() == .some(7))  // the second ask was answered by the presenter
        #expect(asked.withLock { $0 } == 2)

        failures.withLock { $0 = 2 }
        let before = RemoteLog.droppedCount
        #expect(relinquish() == .some(nil))  // the default answer, after a retry, logged
        #expect(asked.withLock { $0 } == 4)
        #expect(RemoteLog.droppedCount > before)
    }
}
