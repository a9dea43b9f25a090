import Foundation
import Synchronization
import Testing
@testable import FileCoordination

/// A fresh folder for one test, removed at deinit.
final class Scratch: Sendable {
    let url: URL
    init() throws {
        url = URL(fileURLWithPath: "/tmp/cd-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }

    func file(_ name: String, contents: String? = nil) -> URL {
        let file = url.appendingPathComponent(name)
        if let contents {
            try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try? contents.write(to: file, atomically: false, encoding: .utf8)
        }
        return file
    }

    func directory(_ name: String) throws -> URL {
        let directory = url.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }
}

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

/// A coordinator with a short timeout, to show that an access is blocked.
func impatient(_ milliseconds: Int = 150, purpose: String? = nil) -> Coordinator {
    let coordinator = Coordinator()
    coordinator.timeout = .milliseconds(milliseconds)
    if let purpose { coordinator.purposeIdentifier = purpose }
    return coordinator
}

/// True when a read of `url` (by a coordinator with `purpose`, if given) would have to wait.
func readIsBlocked(_ url: URL, options: Coordinator.ReadingOptions = [], purpose: String? = nil) -> Bool {
    fails(with: "timedOut") { try impatient(purpose: purpose).coordinate(readingItemAt: url, options: options) { _ in } }
}

/// True when a write of `url` (by a coordinator with `purpose`, if given) would have to wait.
func writeIsBlocked(_ url: URL, options: Coordinator.WritingOptions = [], purpose: String? = nil) -> Bool {
    fails(with: "timedOut") { try impatient(purpose: purpose).coordinate(writingItemAt: url, options: options) { _ in } }
}

/// A coordinator with the given purpose identifier.
func coordinator(purpose: String) -> Coordinator {
    let coordinator = Coordinator()
    coordinator.purposeIdentifier = purpose
    return coordinator
}
