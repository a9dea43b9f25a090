import Foundation

extension UndoManager {
    // The undo and redo machinery behind undo(), undoNestedGroup() and redo().

    struct Taken {
        var group: UndoGroup
        var nested: Bool
    }

    /// Takes the group to undo or redo, runs it while recording the inverses, and files them.
    func run(undoing isUndo: Bool) {
        let taken: Taken? = locked {
            guard !undoing, !redoing else { return nil }
            var taken: Taken
            if !isUndo {
                guard let group = redoStack.popLast() else { return nil }
                taken = Taken(group: group, nested: false)
            } else if openGroups.isEmpty {
                guard let group = undoStack.popLast() else { return nil }
                taken = Taken(group: group, nested: false)
            } else {
                let innermost = openGroups.count - 1
                guard case .group(let group)? = openGroups[innermost].group.entries.last else { return nil }
                openGroups[innermost].group.entries.removeLast()
                taken = Taken(group: group, nested: true)
                // Nested groups carry no name of their own: the redo step is named like the
                // group the user sees.
                taken.group.actionName = openGroups[0].group.actionName
            }
            setAsideGroups = openGroups
            openGroups = [OpenUndoGroup(group: UndoGroup(actionName: taken.group.actionName), changeReported: true)]
            if isUndo { undoing = true } else { redoing = true }
            return taken
        }
        guard let taken else { return }

        assertLockNotHeld("handlers may register undo actions")
        taken.group.perform()

        let closeAutomaticGroup: Bool = locked {
            // Fold groups a handler left open into the recording group.
            while openGroups.count > 1 {
                let inner = openGroups.removeLast()
                if !inner.group.isEmpty {
                    openGroups[openGroups.count - 1].group.entries.append(.group(inner.group))
                }
            }
            let recorded = openGroups.first?.group ?? UndoGroup()
            openGroups = setAsideGroups
            setAsideGroups = []
            undoing = false
            redoing = false
            if !recorded.isEmpty {
                if isUndo { push(recorded, onto: &redoStack) } else { push(recorded, onto: &undoStack) }
            }
            return automaticCloseIsDue
        }
        if isUndo {
            if !taken.nested { report(.undone) }
            post(Self.didUndoChangeNotification)
        } else {
            report(.redone)
            post(Self.didRedoChangeNotification)
        }
        if closeAutomaticGroup { endUndoGrouping() }
    }
}
