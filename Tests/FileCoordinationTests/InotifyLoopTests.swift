import Foundation
import Glibc
import SystemSupport
import Testing

/// `InotifyLoop`, the one inotify thread behind the change monitor, live queries, the key-value
/// store's watcher and the identity watch. Every wait here is for something the loop must do; the
/// deadlines only keep a broken loop from hanging the run.
@Suite("InotifyLoop: one thread, one inotify descriptor, one wake channel")
struct InotifyLoopTests {
    @Test("reports reach the client on the loop's thread, in the kernel's order, names kept exact")
    func reportsInOrder() throws {
        let folder = try TemporaryFolder()
        let loop = try InotifyLoop(name: "test.inotify")
        let mask = UInt32(IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE)
        _ = try loop.addWatch(folder.path, mask: mask).get()
        let recorder = Recorder()
        loop.start { _ in RecordingClient(recorder) }
        #expect(!loop.isInLoop, "the test's thread is not the loop's")

        folder.create("a")
        folder.create("b")
        let oddName: [UInt8] = [UInt8(ascii: "x"), 0xFF]  // not UTF-8
        folder.create(bytes: oddName)
        #expect(rename(folder.child("b"), folder.child("c")) == 0)
        #expect(unlink(folder.child("a")) == 0)
        #expect(recorder.wait { $0.events.contains { $0.mask & UInt32(IN_DELETE) != 0 } }, "the deletion was reported")

        loop.stop()
        loop.join()
        let record = recorder.snapshot
        let odd = PathBytes.string(fromBytes: oddName)
        let expected: [(UInt32, String)] = [
            (UInt32(IN_CREATE), "a"), (UInt32(IN_CLOSE_WRITE), "a"),
            (UInt32(IN_CREATE), "b"), (UInt32(IN_CLOSE_WRITE), "b"),
            (UInt32(IN_CREATE), odd), (UInt32(IN_CLOSE_WRITE), odd),
            (UInt32(IN_MOVED_FROM), "b"), (UInt32(IN_MOVED_TO), "c"),
            (UInt32(IN_DELETE), "a"),
        ]
        #expect(record.events.map(\.mask) == expected.map(\.0))
        #expect(record.events.map(\.name) == expected.map(\.1))
        let halves = record.events.filter { $0.mask & UInt32(IN_MOVED_FROM | IN_MOVED_TO) != 0 }
        #expect(halves.count == 2 && halves[0].cookie != 0 && halves[0].cookie == halves[1].cookie)
        #expect(record.calls.first == .start)
        #expect(record.calls.last == .end(nil))
        #expect(record.calls.filter { $0 == .end(nil) }.count == 1)
        #expect(record.allOnLoopThread, "every client call ran on the loop's thread")
        #expect(record.threadNames == ["test.inotify"])
    }

    @Test("the descriptors are close-on-exec and non-blocking from the start")
    func descriptorFlags() throws {
        let loop = try InotifyLoop(name: "test.flags")
        let (inotify, wake) = loop.descriptorsForTesting
        for descriptor in [inotify, wake] {
            #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0)
            #expect(fcntl(descriptor, F_GETFL) & O_NONBLOCK != 0)
        }
        #expect(inotify != wake)
    }

    @Test("addWatch returns the kernel's errors; removeWatch makes the kernel report IN_IGNORED")
    func watches() throws {
        let folder = try TemporaryFolder()
        let loop = try InotifyLoop(name: "test.watches")
        #expect(throws: Errno.noSuchFileOrDirectory) {
            try loop.addWatch(folder.child("missing"), mask: UInt32(IN_CREATE)).get()
        }
        folder.create("file")
        #expect(throws: Errno.notDirectory) {
            try loop.addWatch(folder.child("file"), mask: UInt32(IN_CREATE | IN_ONLYDIR)).get()
        }
        let watch = try loop.addWatch(folder.path, mask: UInt32(IN_CREATE)).get()
        #expect(try loop.addWatch(folder.path, mask: UInt32(IN_CREATE)).get() == watch, "the same folder, the same watch")
        let recorder = Recorder()
        loop.start { _ in RecordingClient(recorder) }
        loop.removeWatch(watch)
        #expect(recorder.wait { $0.events.contains { $0.descriptor == watch && $0.mask & UInt32(IN_IGNORED) != 0 } })
        loop.stop()
        loop.join()
    }

    @Test("wake() calls the client once for the wakes made while it was busy; join waits for the end")
    func wakesCoalesce() throws {
        let loop = try InotifyLoop(name: "test.wake")
        let recorder = Recorder()
        let busy = Gate()
        loop.start { _ in RecordingClient(recorder, holdOnFirstWake: busy) }
        loop.wake()
        #expect(busy.entered.wait(timeout: .now() + 60) == .success, "the first wake reached the client")
        for _ in 0..<5 { loop.wake() }  // while the client is busy
        busy.release.signal()
        #expect(recorder.wait { $0.calls.filter { $0 == .woken }.count == 2 && $0.calls.last == .turn(readEvents: false) })
        loop.stop()
        loop.join()
        let record = recorder.snapshot
        #expect(record.calls.filter { $0 == .woken }.count == 2, "five wakes while busy made one call")
        #expect(record.calls.last == .end(nil), "nothing runs after join returns")
        #expect(record.allOnLoopThread)
    }

    @Test("stop() from the loop's own callback ends the loop after it; join() there returns at once")
    func stopFromInside() throws {
        let folder = try TemporaryFolder()
        let loop = try InotifyLoop(name: "test.inside")
        _ = try loop.addWatch(folder.path, mask: UInt32(IN_CREATE)).get()
        let recorder = Recorder()
        loop.start { _ in RecordingClient(recorder, stopOnRead: true) }
        folder.create("one")
        #expect(recorder.wait { $0.calls.contains(.end(nil)) }, "the loop ended")
        loop.join()
        folder.create("two")  // no longer read
        let record = recorder.snapshot
        #expect(record.calls.filter { $0 == .read }.count == 1)
        #expect(record.calls.last == .end(nil))
        #expect(loop.isStopRequested)
    }

    @Test("a loop stopped before it starts only starts and ends; join of a loop never started returns")
    func stopBeforeStart() throws {
        let idle = try InotifyLoop(name: "test.idle")
        idle.stop()
        idle.join()  // never started: nothing to wait for

        let loop = try InotifyLoop(name: "test.early")
        loop.stop()
        let recorder = Recorder()
        loop.start { _ in RecordingClient(recorder) }
        loop.join()
        #expect(recorder.snapshot.calls == [.start, .end(nil)])
    }

    @Test("the client's deadline ends a wait that nothing else ends")
    func deadline() throws {
        let loop = try InotifyLoop(name: "test.deadline")
        let recorder = Recorder()
        // Asked before each wait: a deadline already passed the first time, then none.
        loop.start { _ in RecordingClient(recorder, deadlines: [.now - .seconds(1)]) }
        #expect(recorder.wait { $0.calls.contains(.turn(readEvents: false)) }, "the wait ended at the deadline")
        loop.stop()
        loop.join()
        #expect(!recorder.snapshot.calls.contains(.woken))
        #expect(!recorder.snapshot.calls.contains(.read))
    }

    @Test("poll timeouts: none, passed, rounded up to whole milliseconds, capped")
    func timeouts() {
        #expect(InotifyLoop.milliseconds(until: nil) == -1)
        #expect(InotifyLoop.milliseconds(until: .now - .milliseconds(5)) == 0)
        let soon = InotifyLoop.milliseconds(until: .now + .milliseconds(1500))
        #expect(soon > 1 && soon <= 1501, "never shorter than the deadline, by less than a millisecond")
        #expect(InotifyLoop.milliseconds(until: .now + .seconds(Int64.max / 2)) == Int32.max)
    }

    @Test("a signal interrupting the wait does not end the loop")
    func interruptedWait() throws {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0  // no SA_RESTART: poll fails with EINTR
        var previous = sigaction()
        #expect(sigaction(SIGURG, &action, &previous) == 0)
        defer { sigaction(SIGURG, &previous, nil) }

        let folder = try TemporaryFolder()
        let loop = try InotifyLoop(name: "test.signal")
        _ = try loop.addWatch(folder.path, mask: UInt32(IN_CREATE)).get()
        let recorder = Recorder()
        loop.start { _ in RecordingClient(recorder) }
        #expect(recorder.wait { $0.thread != nil })
        guard let thread = recorder.snapshot.thread else { return }
        for _ in 0..<20 { pthread_kill(thread, SIGURG) }
        folder.create("after")
        #expect(recorder.wait { $0.events.contains { $0.name == "after" } }, "still reading after the signals")
        #expect(!recorder.snapshot.calls.contains { if case .end = $0 { true } else { false } })
        loop.stop()
        loop.join()
        #expect(recorder.snapshot.calls.last == .end(nil))
    }

    @Test("a full kernel queue reaches the client as IN_Q_OVERFLOW")
    func overflow() throws {
        let limit = (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 16384
        guard limit <= 1 << 20 else { return }  // a huge queue: too many events to make here
        let folder = try TemporaryFolder()
        let loop = try InotifyLoop(name: "test.overflow")
        _ = try loop.addWatch(folder.path, mask: UInt32(IN_CREATE | IN_DELETE)).get()
        let (recorder, busy) = startHeldOnFirstWake(loop)
        // Alternating creations and deletions of one name: no two neighbours merge in the queue.
        for _ in 0...(limit / 2) {
            folder.create("churn")
            unlink(folder.child("churn"))
        }
        busy.release.signal()
        #expect(recorder.wait { $0.events.contains { $0.mask & UInt32(IN_Q_OVERFLOW) != 0 } })
        loop.stop()
        loop.join()
    }

    @Test("maximumReadsPerTurn bounds the reads between two turns' ends")
    func readsPerTurn() throws {
        let folder = try TemporaryFolder()
        let loop = try InotifyLoop(name: "test.reads", maximumReadsPerTurn: 1)
        _ = try loop.addWatch(folder.path, mask: UInt32(IN_CREATE | IN_DELETE)).get()
        let (recorder, busy) = startHeldOnFirstWake(loop)
        // About 64 bytes a pair of reports: 4,000 pairs fill several 64 KiB reads.
        for _ in 0..<4000 {
            folder.create("n")
            unlink(folder.child("n"))
        }
        busy.release.signal()
        #expect(recorder.wait { $0.events.count >= 8000 })
        loop.stop()
        loop.join()
        var readsThisTurn = 0, turnsWithReads = 0
        for call in recorder.snapshot.calls {
            switch call {
            case .read: readsThisTurn += 1
            case .turn:
                #expect(readsThisTurn <= 1)
                if readsThisTurn > 0 { turnsWithReads += 1 }
                readsThisTurn = 0
            default: break
            }
        }
        #expect(turnsWithReads >= 2, "the burst took several turns")
    }

    @Test("with a gather interval: reports are read once it passes; a wake or a stop ends it at once")
    func gathering() throws {
        let folder = try TemporaryFolder()
        let short = try InotifyLoop(name: "test.gather", gatherInterval: .milliseconds(5))
        _ = try short.addWatch(folder.path, mask: UInt32(IN_CREATE)).get()
        let shortRecorder = Recorder()
        short.start { _ in RecordingClient(shortRecorder) }
        folder.create("a")
        #expect(shortRecorder.wait { $0.events.contains { $0.name == "a" } })
        short.stop()
        short.join()

        // An hour: only a wake, or a stop, can end this loop's gathering within the test.
        let long = try InotifyLoop(name: "test.gather", gatherInterval: .seconds(3600))
        _ = try long.addWatch(folder.path, mask: UInt32(IN_CREATE)).get()
        let recorder = Recorder()
        long.start { _ in RecordingClient(recorder) }
        folder.create("b")
        long.wake()
        #expect(recorder.wait { $0.events.contains { $0.name == "b" } }, "the wake ended the gathering")
        #expect(recorder.snapshot.calls.contains(.woken))
        folder.create("c")  // the loop gathers again
        long.stop()
        long.join()  // returns: the stop ended the gathering
        #expect(recorder.snapshot.calls.last == .end(nil))
    }

    @Test("a client reading batches sees the kernel's bytes, names not decoded")
    func batches() throws {
        let folder = try TemporaryFolder()
        let loop = try InotifyLoop(name: "test.batches")
        _ = try loop.addWatch(folder.path, mask: UInt32(IN_CREATE)).get()
        let recorder = Recorder()
        loop.start { _ in BatchClient(recorder) }
        let oddName: [UInt8] = [UInt8(ascii: "y"), 0xFE]  // not UTF-8
        folder.create(bytes: oddName)
        folder.create("plain")
        #expect(recorder.wait { $0.events.count >= 2 })
        loop.stop()
        loop.join()
        let names = recorder.snapshot.events.map(\.name)
        #expect(names == [PathBytes.string(fromBytes: oddName), "plain"])
        #expect(!recorder.snapshot.calls.contains(.read), "the batch call replaces the decoded one")
    }

    /// Starts `loop` with a recording client that holds its first wake until `busy` is released,
    /// and returns once it holds (so the kernel's queue fills meanwhile).
    private func startHeldOnFirstWake(_ loop: InotifyLoop) -> (Recorder, Gate) {
        let recorder = Recorder()
        let busy = Gate()
        loop.start { _ in RecordingClient(recorder, holdOnFirstWake: busy) }
        loop.wake()
        #expect(busy.entered.wait(timeout: .now() + 60) == .success)
        return (recorder, busy)
    }
}

// MARK: Helpers

/// What a recording client saw; behind an `NSLock` (visible to ThreadSanitizer).
private final class Recorder: @unchecked Sendable {
    // @unchecked: `record` is only read or written with `lock` held.
    enum Call: Equatable {
        case start, woken, read, end(Errno?)
        case turn(readEvents: Bool)
    }
    struct Record {
        var calls: [Call] = []
        var events: [InotifyEvent] = []
        var allOnLoopThread = true
        var threadNames: Set<String> = []
        var thread: pthread_t?
    }
    private let lock = NSLock()
    private var record = Record()
    private let changed = DispatchSemaphore(value: 0)

    func note(_ change: (inout Record) -> Void) {
        lock.lock()
        change(&record)
        lock.unlock()
        changed.signal()
    }

    var snapshot: Record {
        lock.lock()
        defer { lock.unlock() }
        return record
    }

    /// Waits until `condition` holds (false after a minute: a hang guard, not a measure).
    func wait(until condition: (Record) -> Bool) -> Bool {
        let deadline = DispatchTime.now() + 60
        while !condition(snapshot) {
            if changed.wait(timeout: deadline) == .timedOut { return condition(snapshot) }
        }
        return true
    }
}

/// Holds the loop's thread inside a client call until released.
private final class Gate: Sendable {
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
}

/// Records every call of the loop (made on the loop's thread, like every client).
private final class RecordingClient: InotifyLoopClient {
    let recorder: Recorder
    let holdOnFirstWake: Gate?
    let stopOnRead: Bool
    var deadlines: [ContinuousClock.Instant]
    var held = false

    init(_ recorder: Recorder, holdOnFirstWake: Gate? = nil, stopOnRead: Bool = false,
         deadlines: [ContinuousClock.Instant] = []) {
        self.recorder = recorder
        self.holdOnFirstWake = holdOnFirstWake
        self.stopOnRead = stopOnRead
        self.deadlines = deadlines
    }

    private func note(_ loop: InotifyLoop, _ call: Recorder.Call, events: [InotifyEvent] = []) {
        let onLoop = loop.isInLoop
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?
            .trimmingCharacters(in: .newlines) ?? ""
        recorder.note { record in
            record.calls.append(call)
            record.events += events
            record.allOnLoopThread = record.allOnLoopThread && onLoop
            record.threadNames.insert(name)
        }
    }

    func inotifyLoopDidStart(_ loop: InotifyLoop) {
        let thread = pthread_self()
        recorder.note { $0.thread = thread }
        note(loop, .start)
    }

    func inotifyLoopDeadline(_ loop: InotifyLoop) -> ContinuousClock.Instant? {
        deadlines.isEmpty ? nil : deadlines.removeFirst()
    }

    func inotifyLoopWasWoken(_ loop: InotifyLoop) {
        note(loop, .woken)
        if let gate = holdOnFirstWake, !held {
            held = true
            gate.entered.signal()
            gate.release.wait()
        }
    }

    func inotifyLoop(_ loop: InotifyLoop, didRead events: [InotifyEvent]) {
        note(loop, .read, events: events)
        if stopOnRead {
            loop.stop()
            loop.join()  // on the loop's thread: returns at once
        }
    }

    func inotifyLoopDidFinishTurn(_ loop: InotifyLoop, readEvents: Bool) {
        note(loop, .turn(readEvents: readEvents))
    }

    func inotifyLoopDidEnd(_ loop: InotifyLoop, error: Errno?) {
        note(loop, .end(error))
    }
}

/// Reads batches: records each event's name bytes (as decoded events, to compare), never `.read`.
private final class BatchClient: InotifyLoopClient {
    let recorder: Recorder
    init(_ recorder: Recorder) { self.recorder = recorder }

    func inotifyLoop(_ loop: InotifyLoop, didReadBatch events: InotifyReadBatch) {
        var decoded: [InotifyEvent] = []
        for event in events {
            let bytes = Array(event.nameBytes)  // the kernel's bytes, NUL padding left out
            decoded.append(InotifyEvent(descriptor: event.descriptor, mask: event.mask, cookie: event.cookie,
                                        name: PathBytes.string(fromBytes: bytes)))
        }
        recorder.note { $0.events += decoded }
    }

    func inotifyLoop(_ loop: InotifyLoop, didRead events: [InotifyEvent]) {
        recorder.note { $0.calls.append(.read) }
    }

    func inotifyLoopDidEnd(_ loop: InotifyLoop, error: Errno?) {
        recorder.note { $0.calls.append(.end(error)) }
    }
}

/// A folder of its own under the temporary directory, removed with what it holds.
private final class TemporaryFolder {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/inotify-loop-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno.current }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func child(_ name: String) -> String { path + "/" + name }

    /// Creates (or truncates) the file `name` and closes it (`IN_CREATE`, then `IN_CLOSE_WRITE`).
    func create(_ name: String) {
        create(bytes: Array(name.utf8))
    }

    func create(bytes name: [UInt8]) {
        let full = Array(path.utf8) + [UInt8(ascii: "/")] + name + [0]
        let descriptor = full.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        }
        if descriptor >= 0 { close(descriptor) }
    }
}
