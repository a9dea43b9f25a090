import Foundation

extension UndoManager {
    // The closing of groups behind endUndoGrouping(), and the end-of-turn close of automatic
    // groups (groupsByEvent).

    /// What closing the innermost group did, for ``endUndoGrouping()`` to report and post.
    struct Closing {
        var closed = false
        var reportDone = false
        var closeAutomaticGroupToo = false
    }

    /// Closes the innermost open group, unless only the groups that must stay open are left:
    /// a nested group becomes an entry of its parent (unless empty); the outermost one goes onto
    /// the undo stack (unless empty).
    func closeInnermostGroup() -> Closing {
        locked {
            var result = Closing()
            guard openGroups.count > minimumOpenGroups else { return result }
            result.closed = true
            let closed = openGroups.removeLast()
            if !openGroups.isEmpty {
                if !closed.group.isEmpty {
                    openGroups[openGroups.count - 1].group.entries.append(.group(closed.group))
                }
                result.closeAutomaticGroupToo = automaticCloseIsDue
                return result
            }
            if closed.automaticGeneration != nil { automaticClosePending = false }
            guard !closed.group.isEmpty else { return result }
            push(closed.group, onto: &undoStack)
            result.reportDone = !closed.changeReported
            return result
        }
    }

    /// The open groups that ``endUndoGrouping()`` must leave: the recording group while an undo
    /// or redo runs. Call with the lock held (asserted).
    var minimumOpenGroups: Int {
        assertLockHeld()
        return undoing || redoing ? 1 : 0
    }

    /// Whether an automatic group whose turn has ended is now alone at the top and can close.
    /// Call with the lock held (asserted).
    var automaticCloseIsDue: Bool {
        assertLockHeld()
        return automaticClosePending && !undoing && !redoing
            && openGroups.count == 1 && openGroups[0].automaticGeneration != nil
    }

    /// The end of the main-queue turn in which the automatic group `generation` opened.
    func endOfTurn(ofAutomaticGroup generation: UInt64) {
        let closeNow: Bool = locked {
            let groups = undoing || redoing ? setAsideGroups : openGroups
            guard groups.first?.automaticGeneration == generation else { return false }
            automaticClosePending = true
            return automaticCloseIsDue
        }
        if closeNow { endUndoGrouping() }
    }
}
