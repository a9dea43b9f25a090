import FileCoordination
import Foundation
import Glibc

/// Whether a thread sleeps in the kernel waiting for a lock — how tests tell "this access must
/// wait" without a timeout.
///
/// A coordinated access that has to wait sleeps in `fcntl(F_OFD_SETLKW)` on a lock file of the
/// lock directory (`<lock directory>/<item path>/@`). Linux shows the system call a sleeping
/// thread is in, with its arguments, in `/proc/<pid>/task/<tid>/syscall`, and the file behind the
/// descriptor in `/proc/<pid>/fd/<fd>`. Seeing the thread there *is* the fact "it waits for a
/// lock"; a timeout could only guess it (and guesses wrong both ways on a loaded machine).
public enum LockWait {
    /// The kernel's id of the calling thread (`gettid`, read from `/proc/thread-self`).
    public static func currentThreadID() -> pid_t? {
        var buffer = [CChar](repeating: 0, count: 64)
        let count = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return target.split(separator: "/").last.flatMap { pid_t($0) }   // "<pid>/task/<tid>"
    }

    /// The path of the lock file (a file named `@`) thread `thread` of process `process` sleeps on
    /// in `fcntl(F_OFD_SETLKW)` or `fcntl(F_SETLKW)`; nil when it is running or in any other call.
    public static func lockFileWaitedFor(thread: pid_t, process: pid_t = getpid()) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/\(process)/task/\(thread)/syscall", encoding: .utf8) else {
            return nil
        }
        // "<nr> <arg1> <arg2> … <sp> <pc>" (hex arguments), or "running", or "-1 <sp> <pc>".
        let fields = text.split(separator: " ")
        guard fields.count >= 3, Int(fields[0]) == fcntlNumber,
              let fd = hex(fields[1]), let command = hex(fields[2]),
              command == setLockWait || command == ofdSetLockWait else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/\(process)/fd/\(fd)", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let path = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return path.hasSuffix("/@") ? path : nil
    }

    /// Whether thread `thread` of process `process` sleeps waiting for a lock file.
    public static func isWaitingForLock(thread: pid_t, process: pid_t = getpid()) -> Bool {
        lockFileWaitedFor(thread: thread, process: process) != nil
    }

    private static func hex(_ field: Substring) -> Int? {
        Int(field.hasPrefix("0x") ? field.dropFirst(2) : field, radix: 16)
    }

    #if arch(x86_64)
    private static let fcntlNumber = 72
    #elseif arch(arm64)
    private static let fcntlNumber = 25
    #else
    private static let fcntlNumber = -1   // not known here: no thread is ever seen waiting
    #endif
    /// `F_SETLKW` and `F_OFD_SETLKW` (Linux, every architecture).
    private static let setLockWait = 7
    private static let ofdSetLockWait = 38
}

/// What a contending access did while the test held something (see ``contend(_:hangGuard:_:)``).
public enum Contention: Equatable, Sendable, CustomStringConvertible {
    /// It got its locks and ran its accessor.
    case gotIn
    /// It was seen sleeping in the kernel for a lock file; then it was cancelled.
    case waited
    /// It threw something other than the cancellation, or neither got in nor waited before the
    /// hang guard.
    case failed(String)

    public var description: String {
        switch self {
        case .gotIn: "got in"
        case .waited: "waited for a lock"
        case .failed(let why): "failed: \(why)"
        }
    }
}

/// Runs `access` (a coordinated access made through `coordinator`, which must have no short
/// timeout) on a thread of its own and reports what it did: `.gotIn` when its accessor ran,
/// `.waited` as soon as the thread is seen sleeping in the kernel for a lock file (then the
/// coordinator is cancelled and the thread ends with `.cancelled`). Nothing here depends on how
/// long anything takes: `hangGuard` only ends a contender that neither gets in nor waits for a
/// lock (a presenter that never answers, say), as `.failed`.
public func contend(_ coordinator: Coordinator = Coordinator(), hangGuard: Duration = Polling.hangGuard,
                    _ access: @escaping @Sendable (Coordinator) throws -> Void) -> Contention {
    contend(cancel: { coordinator.cancel() }, hangGuard: hangGuard) { try access(coordinator) }
}

/// The same for any blocking `access` that `cancel` makes end (by throwing) — a lock taken
/// through the library's internals with a cancellation token, say.
public func contend(cancel: @escaping @Sendable () -> Void, hangGuard: Duration = Polling.hangGuard,
                    _ access: @escaping @Sendable () throws -> Void) -> Contention {
    let thread = Locked<pid_t?>(nil)
    let outcome = Locked<Contention?>(nil)
    let started = DispatchSemaphore(value: 0), finished = DispatchSemaphore(value: 0)
    Thread {
        thread.withLock { $0 = LockWait.currentThreadID() }
        started.signal()
        let result: Contention
        do {
            try access()
            result = .gotIn
        } catch {
            result = .failed("\(error)")
        }
        outcome.withLock { $0 = result }
        finished.signal()
    }.start()
    started.wait()
    guard let tid = thread.withLock({ $0 }) else {
        finished.wait()
        return .failed("the contender's thread id could not be read")
    }
    var sawWaiting = false
    let settled = Polling.holds(within: hangGuard) {
        if outcome.withLock({ $0 }) != nil { return true }
        if LockWait.isWaitingForLock(thread: tid) { sawWaiting = true; return true }
        return false
    }
    if sawWaiting || !settled { cancel() }
    finished.wait()
    if sawWaiting { return .waited }
    guard settled else { return .failed("neither got in nor waited for a lock within \(hangGuard)") }
    return outcome.withLock { $0 } ?? .failed("no outcome")
}
