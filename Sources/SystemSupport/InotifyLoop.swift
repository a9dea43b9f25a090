import CSystemShim
import Dispatch
import Foundation
import Glibc
import Synchronization

/// One thread that sleeps in `poll` on an `inotify` descriptor and a wake channel, reads the
/// kernel's reports and hands them to its client: the one implementation behind every folder
/// watcher of the package (the change monitor of presenters, live metadata queries, the key-value
/// store's watcher, the ubiquity-identity watch) and the sync agent's.
///
/// **What it owns.** An `inotify` descriptor (`IN_CLOEXEC | IN_NONBLOCK`), a wake channel (an
/// `eventfd`, `EFD_CLOEXEC | EFD_NONBLOCK`: both are close-on-exec from the moment they exist, so
/// a child started by another thread never inherits them), a 64 KiB read buffer and, once
/// ``start(_:)`` is called, one thread named ``name``. Both descriptors are closed when the loop
/// is released — the thread holds it while it runs — so no call made through the loop can ever
/// reach a descriptor number the system has given to someone else meanwhile.
///
/// **Where callbacks run.** Every ``InotifyLoopClient`` call runs on the loop's thread, one at a
/// time, in this order: ``InotifyLoopClient/inotifyLoopDidStart(_:)`` once; then turns, each one
/// `poll` that ends when the kernel has reports queued, ``wake()`` or ``stop()`` was called, or the
/// client's deadline (``InotifyLoopClient/inotifyLoopDeadline(_:)``) passed, followed by
/// ``InotifyLoopClient/inotifyLoopWasWoken(_:)`` (after a wake), one
/// ``InotifyLoopClient/inotifyLoop(_:didReadBatch:)`` — by default
/// ``InotifyLoopClient/inotifyLoop(_:didRead:)`` — per `read` of the queue (at most
/// `maximumReadsPerTurn` reads, events in the kernel's order, whole events only) and
/// ``InotifyLoopClient/inotifyLoopDidFinishTurn(_:readEvents:)``; last
/// ``InotifyLoopClient/inotifyLoopDidEnd(_:error:)``. Code that must run there asserts it with
/// ``assertInLoop(_:file:line:)`` (debug builds). The client is made on the thread (the factory
/// given to ``start(_:)``), so what it holds needs no lock.
///
/// **Gathering.** With a `gatherInterval` (``init(name:maximumReadsPerTurn:gatherInterval:)``),
/// once `poll` says reports are queued the thread waits that long more (a wake or ``stop()`` ends
/// the wait at once, a client's deadline bounds it) before it reads, so that a burst — a save is
/// four or five reports, made within a fraction of a millisecond — is read, and handed on, in one
/// turn instead of one turn per report: each turn costs the thread a wake-up and two system calls
/// whatever it brings. Reports then reach the client up to that much later; nothing is lost (the
/// kernel keeps queuing meanwhile). Without one (the default) the queue is read at once.
///
/// **What the loop does not interpret.** Reports are passed on as they come: `IN_Q_OVERFLOW` (the
/// kernel's queue was full and reports were lost: the client must look again), `IN_IGNORED` (a
/// watch is gone), renames' cookies. ``addWatch(_:mask:)`` returns the kernel's error as it is —
/// `ENOSPC` when the per-user watch limit (`fs.inotify.max_user_watches`) is reached, `ENOENT` /
/// `ENOTDIR` for a folder that is not there — and each client decides what that means.
///
/// **Errors.** `EINTR` (a signal) is never an error: the turn starts again (the deadline is
/// computed anew). Any other failure of `poll` or `read` (none is expected: `ENOMEM` under memory
/// pressure) ends the loop, and ``InotifyLoopClient/inotifyLoopDidEnd(_:error:)`` gets the error;
/// nothing traps. A failed ``init(name:maximumReadsPerTurn:)`` (`EMFILE` from `inotify_init1`: the
/// per-user instance limit, `fs.inotify.max_user_instances`) throws and starts nothing.
///
/// **Stopping, and why it cannot hang.** ``stop()`` sets a flag and adds to the `eventfd`'s
/// counter; it never waits, so it may be called from any thread, under any lock, and from the
/// loop's own callbacks. The thread checks the flag before every client call it makes (and
/// between reads), and its `poll` returns as soon as the counter is non-zero — which it stays
/// until the thread reads it, so a stop made while the thread sleeps ends the sleep at once, and
/// one made while it is busy is seen at its next check (the write cannot be lost: a full counter
/// would already be readable). Once the flag is seen, no client call starts but
/// ``InotifyLoopClient/inotifyLoopDidEnd(_:error:)``. So the loop ends as soon as the client call
/// in progress (if any) returns: the only way to delay it is a client call that does not return.
/// ``join()`` waits for that end; it returns at once on the loop's own thread (a thread cannot wait
/// for itself) and for a loop never started. Its wait can only be long if a client call of this
/// loop waits for the joining thread — hence the rule for clients: never wait, in a callback, for
/// a thread that may be stopping the loop.
///
/// **Threads.** Every member may be called from any thread, except ``readQueued(maximumReads:_:)``
/// and ``discardQueued()``: the loop's thread only.
package final class InotifyLoop: Sendable {
    /// The thread's name (the system keeps its first 15 bytes: `/proc/<pid>/task/<tid>/comm`).
    package let name: String
    private let inotify: Int32
    private let wakeChannel: Int32
    private let maximumReadsPerTurn: Int
    /// How long a turn waits for more reports once some are queued (milliseconds; 0: none).
    private let gatherMilliseconds: Int32
    // nonisolated(unsafe): the buffer is written and read only on the loop's thread
    // (`readQueued`, `discardQueued`), and freed in deinit, once no thread holds the loop.
    private nonisolated(unsafe) let buffer: UnsafeMutableRawPointer
    private static let bufferSize = 64 * 1024
    /// The most bytes one report takes: its header and the longest name, NUL-terminated.
    private static let largestEvent = MemoryLayout<inotify_event>.size + Int(NAME_MAX) + 1

    private let started = Atomic<Bool>(false)
    private let stopRequested = Atomic<Bool>(false)
    /// The loop's thread while it runs the loop; unbound before and after.
    private let thread: ThreadIdentity
    /// Set (releasing) by the thread as its last step, after its last client call.
    private let ended = Atomic<Bool>(false)
    /// Signalled once by the thread as it ends; each waiter signals it again for the next.
    private let endedSignal = DispatchSemaphore(value: 0)

    /// Why a loop could not be made.
    package enum SetupError: Error, Hashable, CustomStringConvertible {
        /// `inotify_init1` failed (`EMFILE`: the per-user instance limit, `fs.inotify.max_user_instances`).
        case inotify(Errno)
        /// The wake channel (`eventfd`) could not be made.
        case wakeChannel(Errno)

        package var description: String {
            switch self {
            case .inotify(let error): "inotify_init1 failed: \(error)"
            case .wakeChannel(let error): "eventfd failed: \(error)"
            }
        }
    }

    /// Makes the descriptors; the thread starts with ``start(_:)``. `maximumReadsPerTurn`: how many
    /// reads of the kernel's queue (64 KiB, about 1,500 reports each) a turn makes at most before
    /// the client's turn ends and the loop polls again (a query delivers a long burst as it goes);
    /// by default the queue is read until empty. `gatherInterval`: how long a turn waits, once
    /// reports are queued, for more of them before reading (see the type's comment; whole
    /// milliseconds, rounded up; none by default).
    package init(name: String, maximumReadsPerTurn: Int = .max, gatherInterval: Duration = .zero) throws(SetupError) {
        let inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard inotify >= 0 else { throw .inotify(.current) }
        let wakeChannel: Int32
        switch Self.makeEventDescriptor() {
        case .success(let descriptor): wakeChannel = descriptor
        case .failure(let error):
            close(inotify)
            throw .wakeChannel(error)
        }
        self.name = name
        thread = ThreadIdentity(name: "the inotify loop “\(name)”")
        self.inotify = inotify
        self.wakeChannel = wakeChannel
        self.maximumReadsPerTurn = max(1, maximumReadsPerTurn)
        gatherMilliseconds = Self.wholeMilliseconds(gatherInterval)
        buffer = .allocate(byteCount: Self.bufferSize, alignment: MemoryLayout<inotify_event>.alignment)
    }

    deinit {
        close(inotify)
        close(wakeChannel)
        buffer.deallocate()
    }

    // MARK: Starting, waking, stopping

    /// Starts the thread, which makes its client with `makeClient` (on the thread) and runs the
    /// loop until ``stop()`` or a failure. A second call does nothing.
    package func start(_ makeClient: @escaping @Sendable (InotifyLoop) -> any InotifyLoopClient) {
        guard started.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        let thread = Thread { [self] in run(makeClient) }
        thread.name = name
        thread.start()
    }

    /// Makes the loop come back from `poll` and call ``InotifyLoopClient/inotifyLoopWasWoken(_:)``
    /// (several wakes before the thread sees them make one call). Never waits; any thread.
    package func wake() {
        var one: UInt64 = 1
        // Non-blocking: `EAGAIN` only when the counter is full, and then it is readable already.
        _ = valueOrErrno { write(wakeChannel, &one, MemoryLayout<UInt64>.size) }
    }

    /// Asks the loop to end (see the type's comment: it ends after the client call in progress).
    /// Never waits; any thread, the loop's own included. Idempotent.
    package func stop() {
        stopRequested.store(true, ordering: .releasing)
        wake()
    }

    /// Whether ``stop()`` was called (a long client call may check it to end early).
    package var isStopRequested: Bool { stopRequested.load(ordering: .acquiring) }

    /// Waits until the thread has ended: no client call runs or will run. Returns at once on the
    /// loop's own thread and for a loop never started. Does not stop the loop: call ``stop()`` first.
    package func join() {
        guard started.load(ordering: .relaxed), !isInLoop else { return }
        if !ended.load(ordering: .acquiring) {
            endedSignal.wait()
            endedSignal.signal()  // for the next waiter
        }
        _ = ended.load(ordering: .acquiring)  // what the thread did happens before what follows
    }

    // MARK: The loop's thread

    /// Whether the caller runs on the loop's thread (inside one of its client calls).
    package var isInLoop: Bool { thread.isCurrent }

    /// Asserts, in debug builds, that the caller runs on the loop's thread — in the manner of
    /// swift-nio's `assertInEventLoop()`. For code that touches what only the loop's thread owns.
    @inline(__always)
    package func assertInLoop(_ message: @autoclosure () -> String = "", file: StaticString = #fileID, line: UInt = #line) {
        thread.assertCurrent(message(), file: file, line: line)
    }

    // MARK: Watches

    /// Watches `path` (a lossless path string) for the events in `mask` (`IN_*`); returns the watch
    /// descriptor the loop's reports name (the same one again for a folder already watched: the
    /// kernel then replaces, or with `IN_MASK_ADD` extends, its mask) or the kernel's error —
    /// `ENOSPC` for the per-user watch limit. Any thread.
    package func addWatch(_ path: String, mask: UInt32) -> Result<Int32, Errno> {
        PathBytes.withCString(path) { path in valueOrErrno { inotify_add_watch(inotify, path, mask) } }
    }

    /// Stops the watch `descriptor`; the kernel then queues `IN_IGNORED` for it. Any thread.
    package func removeWatch(_ descriptor: Int32) {
        _ = inotify_rm_watch(inotify, descriptor)
    }

    // MARK: Reading (the loop's thread)

    /// Reads what the kernel has queued, without waiting: up to `maximumReads` reads (fewer once
    /// ``stop()`` was called), each read's events handed to `body` in the kernel's order. Returns
    /// how many reads brought events, or the error of a failed read (`EAGAIN`, nothing queued, is
    /// no error). The loop's thread only — the loop itself reads this way; a client calls it to
    /// read outside a turn's own reads.
    @discardableResult
    package func readQueued(maximumReads: Int = .max, _ body: ([InotifyEvent]) -> Void) -> Result<Int, Errno> {
        readQueuedBatches(maximumReads: maximumReads) { body($0.decoded) }
    }

    /// ``readQueued(maximumReads:_:)`` without decoding: each read's events as the kernel wrote
    /// them (an ``InotifyReadBatch``, valid only during `body`). A read that leaves room in the
    /// buffer for another report emptied the queue, so no further read is made for it (reports
    /// queued after it are read at the next turn: `poll` sees them). The loop's thread only.
    @discardableResult
    package func readQueuedBatches(maximumReads: Int = .max, _ body: (InotifyReadBatch) -> Void) -> Result<Int, Errno> {
        assertInLoop()
        var reads = 0
        while reads < maximumReads, !isStopRequested {
            switch valueOrErrno({ read(inotify, buffer, Self.bufferSize) }) {
            case .success(let count) where count > 0:
                reads += 1
                body(InotifyReadBatch(buffer, count: count))
                if count <= Self.bufferSize - Self.largestEvent { return .success(reads) }
            case .success:
                return .success(reads)
            case .failure(let error) where error.rawValue == EAGAIN:
                return .success(reads)
            case .failure(let error):
                return .failure(error)
            }
        }
        return .success(reads)
    }

    /// Reads and drops everything the kernel has queued (a client about to look at the folders
    /// anew, which sees the effects of those reports anyway). The loop's thread only.
    package func discardQueued() {
        _ = readQueued { _ in }
    }

    // MARK: The loop

    private func run(_ makeClient: (InotifyLoop) -> any InotifyLoopClient) {
        Self.nameCurrentThread(name)
        thread.bindToCurrentThread()
        let client = makeClient(self)
        client.inotifyLoopDidStart(self)
        let failure = turns(client)
        client.inotifyLoopDidEnd(self, error: failure)
        thread.unbind()
        ended.store(true, ordering: .releasing)
        endedSignal.signal()
    }

    /// Runs turns until a stop (nil) or a failure (its error).
    private func turns(_ client: any InotifyLoopClient) -> Errno? {
        while !isStopRequested {
            let deadline = client.inotifyLoopDeadline(self)
            let timeout = Self.milliseconds(until: deadline)
            var ready = (inotify: false, woken: false)
            let polled = withUnsafeTemporaryAllocation(of: pollfd.self, capacity: 2) { descriptors -> Result<Int32, Errno> in
                descriptors[0] = pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)
                descriptors[1] = pollfd(fd: wakeChannel, events: Int16(POLLIN), revents: 0)
                // Not retried here: after a signal the turn starts again with the deadline anew.
                let result = valueOrErrno(retryOnInterrupt: false) { poll(descriptors.baseAddress, 2, timeout) }
                ready = (descriptors[0].revents != 0, descriptors[1].revents != 0)
                return result
            }
            switch polled {
            case .success: break
            case .failure(let error) where error == .interrupted: continue
            case .failure(let error): return error
            }
            if ready.inotify, !ready.woken, gatherMilliseconds > 0, !isStopRequested {
                ready.woken = gather(until: deadline)
            }
            if ready.woken {
                var counter: UInt64 = 0
                _ = valueOrErrno { read(wakeChannel, &counter, MemoryLayout<UInt64>.size) }  // resets it
            }
            // The flag is checked before every client call: once it is seen, none starts.
            if isStopRequested { return nil }
            if ready.woken {
                client.inotifyLoopWasWoken(self)
                if isStopRequested { return nil }
            }
            if ready.inotify {
                if case .failure(let error) = readQueuedBatches(maximumReads: maximumReadsPerTurn, { client.inotifyLoop(self, didReadBatch: $0) }) {
                    return error
                }
                if isStopRequested { return nil }
            }
            client.inotifyLoopDidFinishTurn(self, readEvents: ready.inotify)
        }
        return nil
    }

    /// Waits ``gatherMilliseconds`` (less if `deadline` comes first) for more reports to be queued;
    /// true when a wake or a stop ended the wait (then the turn handles it at once). A failed or
    /// interrupted wait just ends the gathering: the turn reads what is queued.
    private func gather(until deadline: ContinuousClock.Instant?) -> Bool {
        let timeout = min(gatherMilliseconds, Self.milliseconds(until: deadline).clampedGather)
        guard timeout > 0 else { return false }
        var descriptor = pollfd(fd: wakeChannel, events: Int16(POLLIN), revents: 0)
        let result = valueOrErrno(retryOnInterrupt: false) { poll(&descriptor, 1, timeout) }
        guard case .success(let ready) = result else { return false }
        return ready > 0 && descriptor.revents != 0
    }

    /// Names the calling thread for debuggers, `top -H` and `/proc` (`Thread.name` does not reach
    /// the system on Linux, and the Glibc module leaves out `pthread_setname_np`): its first 15
    /// bytes, as the kernel keeps them. Best effort.
    private static func nameCurrentThread(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { bytes in valueOrErrno { write(descriptor, bytes.baseAddress, bytes.count) } }
        close(descriptor)
    }

    /// The `poll` timeout for `deadline`: -1 (none), 0 (passed), or the milliseconds until it,
    /// rounded up (a wait never ends before the deadline), at most `Int32.max`.
    package static func milliseconds(until deadline: ContinuousClock.Instant?) -> Int32 {
        guard let deadline else { return -1 }
        let remaining = deadline - ContinuousClock.now
        if remaining <= .zero { return 0 }
        let (seconds, attoseconds) = remaining.components
        let milliseconds = seconds.multipliedReportingOverflow(by: 1000)
        guard !milliseconds.overflow else { return Int32.max }
        return Int32(clamping: milliseconds.partialValue + attoseconds / 1_000_000_000_000_000 + 1)
    }

    /// `duration` in whole milliseconds, rounded up, within 0...`Int32.max`.
    private static func wholeMilliseconds(_ duration: Duration) -> Int32 {
        guard duration > .zero else { return 0 }
        let (seconds, attoseconds) = duration.components
        let milliseconds = seconds.multipliedReportingOverflow(by: 1000)
        guard !milliseconds.overflow else { return Int32.max }
        let rest = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds.partialValue.addingReportingOverflow(rest).partialValue)
    }

    // MARK: The wake channel

    /// A new `eventfd`, close-on-exec and non-blocking from the start (`<sys/eventfd.h>` comes
    /// through CSystemShim: the Glibc module leaves it out).
    private static func makeEventDescriptor() -> Result<Int32, Errno> {
        valueOrErrno { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }
    }

    /// Tests: the two descriptors (to check their flags).
    package var descriptorsForTesting: (inotify: Int32, wake: Int32) { (inotify, wakeChannel) }
}

/// What an ``InotifyLoop`` calls, always on its thread, one call at a time (see the loop's
/// comment for the order). Only ``inotifyLoop(_:didRead:)`` is required.
package protocol InotifyLoopClient: AnyObject {
    /// First, once, before the first wait: a client may add watches and walk its folders here.
    func inotifyLoopDidStart(_ loop: InotifyLoop)
    /// When the loop must come back even if nothing happens (a hold or a batch falling due); nil
    /// waits for reports or a wake. Asked before every wait.
    func inotifyLoopDeadline(_ loop: InotifyLoop) -> ContinuousClock.Instant?
    /// ``InotifyLoop/wake()`` was called (once for several wakes). Not called once a stop is seen.
    func inotifyLoopWasWoken(_ loop: InotifyLoop)
    /// One read's reports, in the kernel's order (`IN_Q_OVERFLOW` and `IN_IGNORED` included).
    func inotifyLoop(_ loop: InotifyLoop, didRead events: [InotifyEvent])
    /// The same read as the kernel wrote it (valid only during the call: see
    /// ``InotifyReadBatch``), for a client that decodes only the reports it needs. By default
    /// decodes every report and calls ``inotifyLoop(_:didRead:)``; a client that implements this
    /// is not called there by the loop.
    func inotifyLoop(_ loop: InotifyLoop, didReadBatch events: InotifyReadBatch)
    /// The end of a turn: after a wait that ended (reports, a wake or the deadline) and what it
    /// brought. `readEvents`: the kernel had reports queued, and they were read this turn.
    func inotifyLoopDidFinishTurn(_ loop: InotifyLoop, readEvents: Bool)
    /// Last: the loop ends because of ``InotifyLoop/stop()`` (`error` nil) or a failed `poll` or
    /// `read` (its error).
    func inotifyLoopDidEnd(_ loop: InotifyLoop, error: Errno?)
}

extension InotifyLoopClient {
    package func inotifyLoopDidStart(_ loop: InotifyLoop) {}
    package func inotifyLoopDeadline(_ loop: InotifyLoop) -> ContinuousClock.Instant? { nil }
    package func inotifyLoopWasWoken(_ loop: InotifyLoop) {}
    package func inotifyLoop(_ loop: InotifyLoop, didReadBatch events: InotifyReadBatch) {
        inotifyLoop(loop, didRead: events.decoded)
    }
    package func inotifyLoopDidFinishTurn(_ loop: InotifyLoop, readEvents: Bool) {}
    package func inotifyLoopDidEnd(_ loop: InotifyLoop, error: Errno?) {}
}

extension Int32 {
    /// A `poll` timeout as a bound of a gathering wait: none (-1) bounds nothing.
    fileprivate var clampedGather: Int32 { self < 0 ? .max : self }
}
