import Synchronization

/// For each open lock-file descriptor (by number), the reclaim epoch at which it was last seen
/// still linked while it held a lock — so a later holder that finds the epoch unchanged can skip
/// the `fstat` (see `LockFile.confirmLinked` and Docs/Coordination.md, "Reclaiming lock files").
///
/// A slot holds `epoch + 1`; 0 means "never verified". Every lock-file descriptor is closed
/// through `LockFile.close`, which clears its slot first, so a reused descriptor number never
/// inherits a verification. Descriptors numbered `capacity` or more are simply always checked.
final class VerifiedDescriptors: @unchecked Sendable {
    // @unchecked: the slots are atomics, allocated once and never freed (the object lives as long
    // as the process); a slot is only changed by the thread that holds its descriptor.
    /// Process-wide, not per `CoordinationRuntime`: it is indexed by descriptor number, and a
    /// number closed through one runtime may at once be reused by another.
    static let shared = VerifiedDescriptors(capacity: 4096)

    private let slots: UnsafeMutablePointer<Atomic<UInt64>>
    let capacity: Int

    private init(capacity: Int) {
        self.capacity = capacity
        slots = .allocate(capacity: capacity)
        for index in 0..<capacity { (slots + index).initialize(to: Atomic(0)) }
    }

    @inline(__always)
    func isVerified(_ fd: Int32, at epoch: UInt64) -> Bool {
        guard fd >= 0, Int(fd) < capacity else { return false }
        return slots[Int(fd)].load(ordering: .relaxed) == epoch &+ 1
    }

    @inline(__always)
    func mark(_ fd: Int32, at epoch: UInt64) {
        guard fd >= 0, Int(fd) < capacity else { return }
        slots[Int(fd)].store(epoch &+ 1, ordering: .relaxed)
    }

    @inline(__always)
    func forget(_ fd: Int32) {
        guard fd >= 0, Int(fd) < capacity else { return }
        slots[Int(fd)].store(0, ordering: .relaxed)
    }
}
