import Glibc
import Synchronization

/// A value behind a `pthread_mutex_t`, used everywhere in this package instead of
/// `Synchronization.Mutex`.
///
/// Why not `Mutex`: on Linux it sleeps with raw `futex` calls, which ThreadSanitizer cannot see,
/// so every access it protects is reported as a data race and real races drown in the noise.
/// A pthread mutex costs a few nanoseconds more (about 14 ns against 11 ns uncontended, with a
/// second thread alive) and keeps `swift test --sanitize=thread` meaningful.
///
/// Never call back into code that may take the same lock from inside `withLock`: it is not
/// recursive (debug builds trap there instead of hanging). Code documented to run with the lock
/// held — or never with it held — says so with ``assertHeld(_:file:line:)`` /
/// ``assertNotHeld(_:file:line:)`` (debug builds only; release builds do not track the holder).
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
    #if DEBUG
    /// The thread holding `mutex` (its `pthread_t`; 0: none), for the assertions. Written by the
    /// holder only, so the current thread reads its own id here exactly when it holds the lock.
    private let holder = Atomic<UInt>(0)
    #endif

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
        #if DEBUG
        assert(holder.load(ordering: .relaxed) != UInt(pthread_self()), "Locked.withLock re-entered on the thread that holds it (it is not recursive)")
        #endif
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        #if DEBUG
        holder.store(UInt(pthread_self()), ordering: .relaxed)
        defer { holder.store(0, ordering: .relaxed) }  // runs before the unlock above
        #endif
        return try body(&value.pointee)
    }

    /// Asserts, in debug builds, that the calling thread holds the lock (it runs inside `withLock`).
    @inline(__always)
    package func assertHeld(_ what: @autoclosure () -> String = "", file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        assert(holder.load(ordering: .relaxed) == UInt(pthread_self()),
               "must be called with the lock held\(what().isEmpty ? "" : ": " + what())", file: file, line: line)
        #endif
    }

    /// Asserts, in debug builds, that the calling thread does not hold the lock: for code that
    /// calls out, waits, or takes the lock itself.
    @inline(__always)
    package func assertNotHeld(_ what: @autoclosure () -> String = "", file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        assert(holder.load(ordering: .relaxed) != UInt(pthread_self()),
               "must not be called with the lock held\(what().isEmpty ? "" : ": " + what())", file: file, line: line)
        #endif
    }
}
