import Foundation

/// A `Bool` behind an `NSLock` — a pthread mutex, which ThreadSanitizer sees (it cannot see
/// `Synchronization.Mutex`'s futex). LocalServers depends on no module of the package that has
/// the package's `Locked`. Any thread.
final class LockedFlag: @unchecked Sendable {
    // @unchecked: `value` is only read or written while `lock` is held.
    private let lock = NSLock()
    private var value: Bool

    init(_ value: Bool) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the flag. Not recursive.
    func withLock<Result>(_ body: (inout Bool) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
