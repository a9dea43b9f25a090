import Synchronization

/// Remembers recent coordinated moves, so a coordination that waited while its item was moved
/// can hand its accessor the item's new URL. One per `CoordinationRuntime`: moves announced in one
/// runtime are not seen by another's coordinators (as between processes).
final class MoveLog: Sendable {
    private let state = Locked<(sequence: Int, moves: [(sequence: Int, old: String, new: String)])>((0, []))
    private static let limit = 256

    /// How many times one coordination locks an item again after finding it moved while it
    /// waited, before giving up with ``CoordinationError/itemKeptMoving(_:)``.
    static let retryLimit = 8

    /// Mirrors `state.sequence` so the common "nothing moved" check takes no lock.
    private let published = Atomic<Int>(0)

    var sequence: Int { published.load(ordering: .acquiring) }

    func record(from old: String, to new: String) {
        state.withLock { state in
            state.sequence += 1
            published.store(state.sequence, ordering: .releasing)
            state.moves.append((state.sequence, old, new))
            if state.moves.count > Self.limit { state.moves.removeFirst(state.moves.count - Self.limit) }
        }
    }

    /// Where `path` is now, applying the moves recorded after `sequence`.
    func currentPath(of path: String, since sequence: Int) -> String {
        guard published.load(ordering: .acquiring) != sequence else { return path }
        return state.withLock { state in
            var current = path
            for move in state.moves where move.sequence > sequence {
                if current == move.old {
                    current = move.new
                } else if CanonicalPath.isInside(current, move.old) {
                    current = move.new + current.dropFirst(move.old.count)
                }
            }
            return current
        }
    }
}
