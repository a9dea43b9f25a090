/// One registered undo action: a weakly held target and the closure to run with it.
struct UndoAction {
    weak var target: AnyObject?
    let invoke: (AnyObject) -> Void
}

/// What an undo group holds, in registration order: actions, and nested groups closed inside it
/// (``UndoManager/undoNestedGroup()`` can undo the most recent of those on its own).
enum UndoEntry {
    case action(UndoAction)
    case group(UndoGroup)
}

/// A group of undo actions, undone (or redone) together. A value type, kept under the manager's
/// lock; ``perform()`` runs on a copy with the lock released.
struct UndoGroup {
    var entries: [UndoEntry] = []
    /// The name for "Undo <name>" menu items; only the top-level group's name is shown.
    var actionName = ""

    var isEmpty: Bool { entries.isEmpty }

    /// Runs the actions, most recent first (a nested group's actions likewise, in its place).
    /// Actions whose target is gone are skipped.
    func perform() {
        for entry in entries.reversed() {
            switch entry {
            case .action(let action):
                if let target = action.target { action.invoke(target) }
            case .group(let nested):
                nested.perform()
            }
        }
    }

    /// Removes every action whose target is `target` (by identity), and nested groups left empty.
    mutating func removeActions(withTarget target: AnyObject) {
        entries = entries.compactMap { entry in
            switch entry {
            case .action(let action):
                return action.target === target ? nil : entry
            case .group(var nested):
                nested.removeActions(withTarget: target)
                return nested.isEmpty ? nil : .group(nested)
            }
        }
    }
}

/// A group opened by ``UndoManager/beginUndoGrouping()``, by a registration outside any group,
/// or (while undoing or redoing) to record the inverse actions.
struct OpenUndoGroup {
    var group = UndoGroup()
    /// Set for a group opened automatically by a registration with ``UndoManager/groupsByEvent``
    /// on the main queue: the number that the scheduled end-of-turn close looks for.
    var automaticGeneration: UInt64?
    /// Whether `.done` was already reported to the document for this group (at its opening), so
    /// that closing it reports nothing more.
    var changeReported = false
}
