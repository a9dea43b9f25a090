import Glibc

/// A list of values kept per thread (pthread-specific storage): each thread sees and changes only
/// its own list. `ThreadClaims` and `AccessorFrames` push and pop around every accessor, so an
/// operation is one `pthread_getspecific` and an array append or removal.
///
/// `@unchecked Sendable`: the only stored property is the immutable key; each list is reached
/// only by the thread it belongs to (a thread's list is released when the thread exits).
package final class ThreadLocalList<Element>: @unchecked Sendable {
    private final class Box {
        // Unchecked: only the thread the box belongs to reaches it, and never re-entrantly, so
        // the dynamic exclusivity check of every push and pop would only cost time.
        @exclusivity(unchecked) var elements: [Element] = []
    }

    private let key: pthread_key_t

    package init() {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
        }
        self.key = key
    }

    private func box(creating: Bool) -> Box? {
        if let raw = pthread_getspecific(key) {
            return Unmanaged<Box>.fromOpaque(raw).takeUnretainedValue()
        }
        guard creating else { return nil }
        let box = Box()
        pthread_setspecific(key, Unmanaged.passRetained(box).toOpaque())
        return box
    }

    /// Appends `element` to this thread's list.
    package func append(_ element: Element) {
        box(creating: true)?.elements.append(element)
    }

    /// Appends `elements` to this thread's list.
    func append(contentsOf elements: some Sequence<Element>) {
        box(creating: true)?.elements.append(contentsOf: elements)
    }

    /// Removes the last `count` elements of this thread's list (all of them if it holds fewer).
    package func removeLast(_ count: Int = 1) {
        guard count > 0, let box = box(creating: false) else { return }
        // One `removeLast()` at a time: `removeLast(_:)` goes through `replaceSubrange`, which
        // costs more than the usual single pop of an access (measured with callgrind).
        for _ in 0..<min(count, box.elements.count) { box.elements.removeLast() }
    }

    /// This thread's list (empty if it never appended).
    var elements: [Element] { box(creating: false)?.elements ?? [] }

    /// The last element of this thread's list.
    package var last: Element? { box(creating: false)?.elements.last }

    /// Whether this thread's list is empty.
    var isEmpty: Bool { box(creating: false)?.elements.isEmpty ?? true }
}
