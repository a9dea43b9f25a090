import Foundation

/// A value protected by a lock, with `Mutex`'s `withLock` interface.
///
/// Used instead of `Synchronization.Mutex` because on Linux `Mutex` waits with raw futex calls
/// that ThreadSanitizer does not see, so every `Mutex`-protected access shows up as a race in TSan
/// runs; `NSLock` is a pthread mutex, which TSan understands. The cost is the same uncontended.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched while `lock` is held.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value. `body` must not call back into code that
    /// takes the same lock (it is not recursive).
    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
