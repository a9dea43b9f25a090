import Glibc

/// A value behind a `pthread_mutex_t`, used everywhere in this package instead of
/// `Synchronization.Mutex`.
///
/// Why not `Mutex`: on Linux it sleeps with raw `futex` calls, which ThreadSanitizer cannot see,
/// so every access it protects is reported as a data race and real races drown in the noise.
/// A pthread mutex costs a few nanoseconds more (about 14 ns against 11 ns uncontended, with a
/// second thread alive) and keeps `swift test --sanitize=thread` meaningful.
///
/// Never call back into code that may take the same lock from inside `withLock`: it is not
/// recursive.
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only read or written while `mutex` is held.
    // The mutex and the value share one allocated block (not stored properties): accessing the
    // value `inout` through a pointer needs no dynamic exclusivity check (the mutex already
    // guarantees exclusivity), and one allocation is cheaper than two.
    private let block: UnsafeMutableRawPointer
    private static var valueOffset: Int {
        let alignment = MemoryLayout<Value>.alignment
        return (MemoryLayout<pthread_mutex_t>.stride + alignment - 1) / alignment * alignment
    }
    private var mutex: UnsafeMutablePointer<pthread_mutex_t> { block.assumingMemoryBound(to: pthread_mutex_t.self) }
    private var value: UnsafeMutablePointer<Value> { (block + Self.valueOffset).assumingMemoryBound(to: Value.self) }

    package init(_ value: Value) {
        block = .allocate(byteCount: Self.valueOffset + MemoryLayout<Value>.size,
                          alignment: max(MemoryLayout<pthread_mutex_t>.alignment, MemoryLayout<Value>.alignment))
        let mutex = block.bindMemory(to: pthread_mutex_t.self, capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        (block + Self.valueOffset).bindMemory(to: Value.self, capacity: 1).initialize(to: value)
    }

    deinit {
        value.deinitialize(count: 1)
        pthread_mutex_destroy(mutex)
        block.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
