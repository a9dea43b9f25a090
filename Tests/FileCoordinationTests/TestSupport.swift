import Foundation
import Synchronization
import Testing
@testable import FileCoordination

/// A one-shot signal between threads (a semaphore with a generous safety timeout so a broken
/// test fails instead of hanging; the timeout is never part of the sequencing).
final class Signal: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    func fire() { semaphore.signal() }
    func wait(seconds: Double = 30) -> Bool { semaphore.wait(timeout: .now() + seconds) == .success }
}

/// Runs `body` on a new thread; `done` fires when it returns.
@discardableResult
func onThread(_ body: @escaping @Sendable () -> Void) -> Signal {
    let done = Signal()
    Thread {
        body()
        done.fire()
    }.start()
    return done
}

/// A value shared between test threads.
final class Box<Value: Sendable>: Sendable {
    private let storage: Locked<Value>
    init(_ value: Value) { storage = Locked(value) }
    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
    func mutate(_ body: (inout Value) -> Void) { storage.withLock { body(&$0) } }
}

/// Whether a coordination attempt failed with the given error.
func fails(with expected: String, _ body: () throws -> Void) -> Bool {
    do {
        try body()
        return false
    } catch let error as CoordinationError {
        return "\(error)".contains(expected) || caseName(error) == expected
    } catch {
        return false
    }
}

func caseName(_ error: CoordinationError) -> String {
    switch error {
    case .cancelled: return "cancelled"
    case .timedOut: return "timedOut"
    case .wouldDeadlock: return "wouldDeadlock"
    case .presenterFailed: return "presenterFailed"
    case .lockDirectoryUnusable: return "lockDirectoryUnusable"
    case .lockFailed: return "lockFailed"
    case .ioFailed: return "ioFailed"
    case .invalidRequest: return "invalidRequest"
    case .itemKeptMoving: return "itemKeptMoving"
    case .itemNotDownloaded: return "itemNotDownloaded"
    }
}

/// Holds an access on another thread until `release()` — for in-process exclusion tests.
final class Holder: Sendable {
    let held = Signal()
    private let go = Signal()
    let finished: Signal
    let error = Box<String?>(nil)

    init(_ coordinator: Coordinator = Coordinator(), _ body: @escaping @Sendable (Coordinator, @escaping @Sendable () -> Void) throws -> Void) {
        let held = self.held, go = self.go, error = self.error
        finished = onThread {
            do {
                try body(coordinator) {
                    held.fire()
                    _ = go.wait()
                }
            } catch let thrown {
                error.value = "\(thrown)"
                held.fire()
            }
        }
        #expect(held.wait(), "the holder never got its access")
    }

    static func reading(_ url: URL, options: Coordinator.ReadingOptions = [], coordinator: Coordinator = Coordinator()) -> Holder {
        Holder(coordinator) { c, inside in try c.coordinate(readingItemAt: url, options: options) { _ in inside() } }
    }

    static func writing(_ url: URL, options: Coordinator.WritingOptions = [], coordinator: Coordinator = Coordinator()) -> Holder {
        Holder(coordinator) { c, inside in try c.coordinate(writingItemAt: url, options: options) { _ in inside() } }
    }

    func release() {
        go.fire()
        #expect(finished.wait(), "the holder never finished")
    }
}

/// A coordinator (of `runtime`, with `purpose`) whose timeout is only a hang guard.
func patient(purpose: String? = nil, in runtime: CoordinationRuntime? = nil) -> Coordinator {
    let coordinator = runtime.map { Coordinator(runtime: $0) } ?? Coordinator()
    coordinator.timeout = Polling.hangGuard
    if let purpose { coordinator.purposeIdentifier = purpose }
    return coordinator
}

// Whether an access must wait is seen, not guessed from a timeout: `…Waits` runs the access on a
// thread of its own and answers true once that thread sleeps in the kernel for a lock (then cancels
// it); `…GetsIn` makes the access and answers true when its accessor ran. Neither depends on how
// long anything takes (`contend`, Tests/TestSupport/LockWait.swift).

/// True when a read of `url` (by a coordinator with `purpose`, of `runtime`) waits for a lock.
func readWaits(_ url: URL, options: Coordinator.ReadingOptions = [], purpose: String? = nil,
               in runtime: CoordinationRuntime? = nil) -> Bool {
    contend(patient(purpose: purpose, in: runtime)) { try $0.coordinate(readingItemAt: url, options: options) { _ in } } == .waited
}

/// True when a write of `url` (by a coordinator with `purpose`, of `runtime`) waits for a lock.
func writeWaits(_ url: URL, options: Coordinator.WritingOptions = [], purpose: String? = nil,
                in runtime: CoordinationRuntime? = nil) -> Bool {
    contend(patient(purpose: purpose, in: runtime)) { try $0.coordinate(writingItemAt: url, options: options) { _ in } } == .waited
}

/// True when a read of `url` (by a coordinator with `purpose`, of `runtime`) gets in while the
/// test holds what it holds.
func readGetsIn(_ url: URL, options: Coordinator.ReadingOptions = [], purpose: String? = nil,
                in runtime: CoordinationRuntime? = nil) -> Bool {
    var ran = false
    try? patient(purpose: purpose, in: runtime).coordinate(readingItemAt: url, options: options) { _ in ran = true }
    return ran
}

/// True when a write of `url` (by a coordinator with `purpose`, of `runtime`) gets in while the
/// test holds what it holds.
func writeGetsIn(_ url: URL, options: Coordinator.WritingOptions = [], purpose: String? = nil,
                 in runtime: CoordinationRuntime? = nil) -> Bool {
    var ran = false
    try? patient(purpose: purpose, in: runtime).coordinate(writingItemAt: url, options: options) { _ in ran = true }
    return ran
}

/// A coordinator with the given purpose identifier.
func coordinator(purpose: String) -> Coordinator {
    let coordinator = Coordinator()
    coordinator.purposeIdentifier = purpose
    return coordinator
}
