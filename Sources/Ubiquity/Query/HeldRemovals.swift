import Foundation

/// Removals a live query waits a moment before reporting, because what comes next often makes
/// them a change (Docs/MetadataQuery.md, "Events and live updates"):
///
/// - **A deleted file.** Syncthing delivers an update by deleting the file and renaming its
///   temporary file into place; other programs save by deleting and writing anew. The name coming
///   back within the hold is a change of the same item (same identifier), never a removal and an
///   addition. The presenters' change monitor holds a deletion just as long before it reports it.
/// - **The first half of a rename** (`IN_MOVED_FROM`) whose second half (`IN_MOVED_TO`, same
///   cookie) has not been read yet: the kernel queues the two one after the other, and a read can
///   come between. Without its second half within the hold, the item moved out of the scopes.
///
/// A hold never blocks anything else: the engine goes on reading and delivering, and its `poll`
/// wakes at the earliest deadline (``nextDeadline()``). Held items are detached from the results
/// (not reported): the delivered results keep them until the hold ends. Deadlines are kept in the
/// order they were set (every hold is one interval long), so the earliest is found in O(1).
/// Owned by the query's thread; unsynchronized.
struct HeldRemovals {
    /// A rename's first half: the item (if it was a result) and, for a folder, its path and the
    /// items inside it, by path relative to it.
    struct Move {
        var item: MetadataItem?
        var folderPath: String?
        var subtree: [ExactName: MetadataItem] = [:]
    }

    private enum Key: Hashable {
        case deletion(ExactName)
        case move(UInt32)
    }

    /// What a hold that ended without a comeback leaves to report.
    enum Expired {
        case deletion(MetadataItem)
        case move(Move)
    }

    private var deletions: [ExactName: (item: MetadataItem, serial: UInt64)] = [:]
    private var moves: [UInt32: (move: Move, serial: UInt64)] = [:]
    /// Deadlines in the order set; an entry whose serial no longer matches its key's is stale.
    private var deadlines: [(deadline: ContinuousClock.Instant, key: Key, serial: UInt64)] = []
    private var head = 0
    private var nextSerial: UInt64 = 0

    var isEmpty: Bool { deletions.isEmpty && moves.isEmpty }

    /// Holds the removal of `item`, deleted from `path`, until `deadline`. Returns the item a
    /// hold of the same path held before (to be reported removed now), if any.
    mutating func holdDeletion(_ item: MetadataItem, at path: String, until deadline: ContinuousClock.Instant) -> MetadataItem? {
        let key = ExactName(path)
        let serial = makeSerial()
        let previous = deletions.updateValue((item, serial), forKey: key)
        deadlines.append((deadline, .deletion(key), serial))
        return previous?.item
    }

    /// The item whose deletion from `path` is held, taken out of the hold (its name came back).
    mutating func takeDeletion(at path: String) -> MetadataItem? {
        guard !deletions.isEmpty else { return nil }
        return deletions.removeValue(forKey: ExactName(path))?.item
    }

    /// Holds a rename's first half, by its cookie, until `deadline`. Returns a first half held
    /// before with the same cookie (to be reported removed now), if any.
    mutating func holdMove(_ move: Move, cookie: UInt32, until deadline: ContinuousClock.Instant) -> Move? {
        let serial = makeSerial()
        let previous = moves.updateValue((move, serial), forKey: cookie)
        deadlines.append((deadline, .move(cookie), serial))
        return previous?.move
    }

    /// The first half of the rename with `cookie`, taken out of the hold (its second half came).
    mutating func takeMove(cookie: UInt32) -> Move? {
        guard !moves.isEmpty else { return nil }
        return moves.removeValue(forKey: cookie)?.move
    }

    /// Every first half held, taken out (their second halves were lost: a queue overflow).
    mutating func takeAllMoves() -> [Move] {
        defer { moves = [:] }
        return moves.values.map(\.move)
    }

    /// When the earliest hold ends, or nil when nothing is held.
    mutating func nextDeadline() -> ContinuousClock.Instant? {
        dropStale()
        return head < deadlines.count ? deadlines[head].deadline : nil
    }

    /// Ends the holds whose deadline is `now` or earlier; returns what they held, in the order held.
    mutating func expire(asOf now: ContinuousClock.Instant) -> [Expired] {
        var expired: [Expired] = []
        while head < deadlines.count, deadlines[head].deadline <= now {
            let entry = deadlines[head]
            head += 1
            switch entry.key {
            case .deletion(let path):
                if let held = deletions[path], held.serial == entry.serial {
                    deletions[path] = nil
                    expired.append(.deletion(held.item))
                }
            case .move(let cookie):
                if let held = moves[cookie], held.serial == entry.serial {
                    moves[cookie] = nil
                    expired.append(.move(held.move))
                }
            }
        }
        compact()
        return expired
    }

    private mutating func makeSerial() -> UInt64 {
        nextSerial += 1
        return nextSerial
    }

    /// Skips deadlines whose hold was taken out (the name came back, the second half came).
    private mutating func dropStale() {
        while head < deadlines.count {
            let entry = deadlines[head]
            let live: Bool
            switch entry.key {
            case .deletion(let path): live = deletions[path]?.serial == entry.serial
            case .move(let cookie): live = moves[cookie]?.serial == entry.serial
            }
            if live { break }
            head += 1
        }
        compact()
    }

    private mutating func compact() {
        if head == deadlines.count {
            deadlines.removeAll(keepingCapacity: deadlines.count <= 1024)
            head = 0
        } else if head >= 1024, head * 2 >= deadlines.count {
            deadlines.removeFirst(head)
            head = 0
        }
    }
}
