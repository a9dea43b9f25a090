import Synchronization

/// Remembers recent coordinated moves, so a coordination that waited while its item was moved
/// can hand its accessor the item's new URL.
enum MoveLog {
    private static let state = Mutex<(sequence: Int, moves: [(sequence: Int, old: String, new: String)])>((0, []))
    private static let limit = 256

    static var sequence: Int { state.withLock { $0.sequence } }

    static func record(from old: String, to new: String) {
        state.withLock { state in
            state.sequence += 1
            state.moves.append((state.sequence, old, new))
            if state.moves.count > limit { state.moves.removeFirst(state.moves.count - limit) }
        }
    }

    /// Where `path` is now, applying the moves recorded after `sequence`.
    static func currentPath(of path: String, since sequence: Int) -> String {
        state.withLock { state in
            guard state.sequence != sequence else { return path }
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
