import Foundation

/// An undo manager for documents: Apple's `UndoManager`, which Linux Foundation lacks, reduced to
/// closure-based registration.
///
/// Changes are recorded as *groups* of undo actions; ``undo()`` runs the actions of the most
/// recent group in reverse order, and the actions those register in turn (their inverses) form a
/// group on the redo stack, so ``redo()`` can replay them. A registration made outside
/// ``beginUndoGrouping()``/``endUndoGrouping()`` forms a group by itself (there is no run-loop
/// based `groupsByEvent` here). A new registration, other than from inside an undo or redo,
/// clears the redo stack.
///
/// Targets are held weakly, as by Apple's `UndoManager`: an action whose target has been
/// deallocated is skipped.
///
/// ## Change counting
/// The owning document sets the internal `onChange` callback, which receives ``ChangeKind/done``
/// each time a top-level group is closed (a registration outside any group, or the outermost
/// ``endUndoGrouping()``; not while undoing or redoing, and not for an empty group),
/// ``ChangeKind/undone`` after each ``undo()``, ``ChangeKind/redone`` after each ``redo()``, and
/// ``ChangeKind/cleared`` after ``removeAllActions()``. It is called synchronously on the thread
/// that made the change, after the manager's lock is released.
///
/// ## Threading
/// Use it from one thread or queue at a time, like Apple's `UndoManager`: the document's editing
/// code and its undo/redo commands run on the document's owning thread (the main thread or the
/// queue that edits the document), and the handlers run there, synchronously, inside ``undo()``
/// and ``redo()``. Reading ``canUndo``, ``canRedo`` and the action names from another thread is
/// safe: all state is protected by an internal lock (hence `@unchecked Sendable`), which is never
/// held while a handler or the callback runs, so handlers may call back into the manager.
///
/// Nothing here throws or can fail. Calls that are out of place are ignored, and documented as
/// such (``endUndoGrouping()`` without an open group, ``undo()`` with nothing to undo).
public final class DocumentUndoManager: @unchecked Sendable {
    /// One registered undo action.
    private struct Action {
        weak var target: AnyObject?
        let invoke: (AnyObject) -> Void
    }

    /// A group of actions, undone (or redone) together.
    private struct Group {
        var actions: [Action] = []
        var actionName = ""
    }

    // All of the following is protected by `lock`.
    private let lock = NSLock()
    private var undoStack: [Group] = []
    private var redoStack: [Group] = []
    /// The group being built by explicit grouping, while `groupDepth > 0`.
    private var openGroup = Group()
    private var groupDepth = 0
    /// While undoing or redoing: the group collecting the inverse actions registered.
    private var recordingGroup = Group()
    private var undoing = false
    private var redoing = false
    private var disabledCount = 0
    private var levels = 0
    private var changeHandler: (@Sendable (ChangeKind) -> Void)?

    /// Creates an empty undo manager: nothing to undo or redo, registration enabled, unlimited
    /// levels. Any thread.
    public init() {}

    private func locked<Result>(_ body: () -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    /// Called with each change to report to the document's change count (see "Change counting").
    /// Internal: set by the document that owns this manager. Any thread.
    var onChange: (@Sendable (ChangeKind) -> Void)? {
        get { locked { changeHandler } }
        set { locked { changeHandler = newValue } }
    }

    private func report(_ kind: ChangeKind) {
        locked { changeHandler }?(kind)
    }

    // MARK: Registering

    /// Records `handler` as the way to undo the change just made to `target`.
    ///
    /// Outside ``undo()``/``redo()`` and outside an explicit group, the action forms a group of
    /// its own, the redo stack is cleared and `onChange(.done)` is reported. Inside an explicit
    /// group it joins that group (reported when the outermost group ends). While undoing, it is
    /// recorded for ``redo()``; while redoing, for ``undo()``, without clearing the redo stack.
    /// Ignored while registration is disabled.
    ///
    /// - Parameters:
    ///   - target: Held weakly; if it is gone when the action is undone, the action is skipped.
    ///   - handler: Called with `target` on the thread that calls ``undo()`` or ``redo()``.
    public func registerUndo<Target: AnyObject>(withTarget target: Target, handler: @escaping (Target) -> Void) {
        let action = Action(target: target, invoke: { object in
            if let typed = object as? Target { handler(typed) }
        })
        let closedTopLevelGroup: Bool = locked {
            guard disabledCount == 0 else { return false }
            if undoing || redoing {
                recordingGroup.actions.append(action)
                return false
            }
            redoStack.removeAll()
            if groupDepth > 0 {
                openGroup.actions.append(action)
                return false
            }
            push(Group(actions: [action]), onto: &undoStack)
            return true
        }
        if closedTopLevelGroup { report(.done) }
    }

    /// Appends a group to a stack, dropping the oldest groups beyond ``levelsOfUndo``.
    /// Call with the lock held.
    private func push(_ group: Group, onto stack: inout [Group]) {
        stack.append(group)
        if levels > 0 && stack.count > levels { stack.removeFirst(stack.count - levels) }
    }

    // MARK: Grouping

    /// Opens a group: the actions registered until the matching ``endUndoGrouping()`` are undone
    /// together. Groups nest; only the outermost one counts. Any thread (one at a time).
    public func beginUndoGrouping() {
        locked {
            if groupDepth == 0 && !undoing && !redoing { openGroup = Group() }
            groupDepth += 1
        }
    }

    /// Closes the group opened by the matching ``beginUndoGrouping()``. Closing the outermost group
    /// pushes it onto the undo stack and reports `onChange(.done)`, unless it is empty (then it is
    /// dropped) or an undo or redo is in progress (then its actions already went to the group
    /// being recorded). Ignored when no group is open.
    public func endUndoGrouping() {
        let closedTopLevelGroup: Bool = locked {
            guard groupDepth > 0 else { return false }
            groupDepth -= 1
            guard groupDepth == 0, !undoing, !redoing else { return false }
            let group = openGroup
            openGroup = Group()
            guard !group.actions.isEmpty else { return false }
            push(group, onto: &undoStack)
            return true
        }
        if closedTopLevelGroup { report(.done) }
    }

    /// How many groups are open: 0 outside any group.
    public var groupingLevel: Int { locked { groupDepth } }

    // MARK: Undo and redo

    /// Whether there is a group to undo (an open, non-empty group counts: ``undo()`` closes it first).
    public var canUndo: Bool { locked { !undoStack.isEmpty || (groupDepth > 0 && !openGroup.actions.isEmpty) } }

    /// Whether there is a group to redo.
    public var canRedo: Bool { locked { !redoStack.isEmpty } }

    /// Whether ``undo()`` is running its actions.
    public var isUndoing: Bool { locked { undoing } }

    /// Whether ``redo()`` is running its actions.
    public var isRedoing: Bool { locked { redoing } }

    /// Undoes the most recent group: runs its actions, most recent first, on this thread, records
    /// what they register as one group on the redo stack (named like the undone group), then
    /// reports `onChange(.undone)`.
    ///
    /// If groups are open, they are all closed first (Apple closes one level and raises an
    /// exception for more; there are no exceptions here), so the matching ``endUndoGrouping()``
    /// calls are then ignored. Ignored when there is nothing to undo, or while an undo or redo is
    /// already running (from inside a handler).
    public func undo() {
        runTopGroup(undoing: true)
    }

    /// Redoes the most recently undone group: runs its actions, most recent first, on this thread,
    /// records what they register as one group on the undo stack (without clearing the redo
    /// stack), then reports `onChange(.redone)`. Ignored when there is nothing to redo, or while an
    /// undo or redo is already running.
    public func redo() {
        runTopGroup(undoing: false)
    }

    private func runTopGroup(undoing isUndo: Bool) {
        var closedOpenGroup = false
        let group: Group? = locked {
            guard !undoing, !redoing else { return nil }
            if isUndo && groupDepth > 0 {
                groupDepth = 0
                if !openGroup.actions.isEmpty {
                    push(openGroup, onto: &undoStack)
                    closedOpenGroup = true
                }
                openGroup = Group()
            }
            guard let group = isUndo ? undoStack.popLast() : redoStack.popLast() else { return nil }
            if isUndo { undoing = true } else { redoing = true }
            recordingGroup = Group(actions: [], actionName: group.actionName)
            return group
        }
        if closedOpenGroup { report(.done) }
        guard let group else { return }

        for action in group.actions.reversed() {
            if let target = action.target { action.invoke(target) }
        }

        locked {
            let recorded = recordingGroup
            recordingGroup = Group()
            undoing = false
            redoing = false
            if !recorded.actions.isEmpty {
                if isUndo { push(recorded, onto: &redoStack) } else { push(recorded, onto: &undoStack) }
            }
        }
        report(isUndo ? .undone : .redone)
    }

    // MARK: Limits and clearing

    /// The most groups kept on each of the undo and redo stacks; the oldest are dropped beyond it.
    /// 0 (the default) means unlimited. Setting a smaller value drops the oldest groups at once;
    /// negative values are treated as 0.
    public var levelsOfUndo: Int {
        get { locked { levels } }
        set {
            locked {
                levels = max(newValue, 0)
                if levels > 0 {
                    if undoStack.count > levels { undoStack.removeFirst(undoStack.count - levels) }
                    if redoStack.count > levels { redoStack.removeFirst(redoStack.count - levels) }
                }
            }
        }
    }

    /// Empties both stacks, drops any open group, re-enables registration (as Apple does) and
    /// reports `onChange(.cleared)`. Ignored while an undo or redo is running.
    public func removeAllActions() {
        let cleared: Bool = locked {
            guard !undoing, !redoing else { return false }
            undoStack.removeAll()
            redoStack.removeAll()
            openGroup = Group()
            groupDepth = 0
            disabledCount = 0
            return true
        }
        if cleared { report(.cleared) }
    }

    /// Removes every action whose target is `target` (by identity) from both stacks and from the
    /// open group; groups left empty are dropped. Does not report a change. Use it when an object
    /// that registered actions goes away.
    public func removeAllActions(withTarget target: AnyObject) {
        locked {
            func strip(_ group: inout Group) {
                group.actions.removeAll { $0.target === target }
            }
            for index in undoStack.indices { strip(&undoStack[index]) }
            for index in redoStack.indices { strip(&redoStack[index]) }
            undoStack.removeAll { $0.actions.isEmpty }
            redoStack.removeAll { $0.actions.isEmpty }
            strip(&openGroup)
            strip(&recordingGroup)
        }
    }

    // MARK: Enabling registration

    /// Ignores registrations until the matching ``enableUndoRegistration()``. Calls nest.
    public func disableUndoRegistration() {
        locked { disabledCount += 1 }
    }

    /// Undoes one ``disableUndoRegistration()``; registration resumes when every disable has been
    /// matched. Ignored when registration is already enabled.
    public func enableUndoRegistration() {
        locked { if disabledCount > 0 { disabledCount -= 1 } }
    }

    /// Whether registrations are recorded (no unmatched ``disableUndoRegistration()``).
    public var isUndoRegistrationEnabled: Bool { locked { disabledCount == 0 } }

    // MARK: Action names

    /// Names the current group, for an "Undo <name>" menu item: the open group if there is one,
    /// the group being recorded while undoing or redoing, else the most recent group on the undo
    /// stack. Ignored when there is no such group.
    public func setActionName(_ name: String) {
        locked {
            if undoing || redoing {
                recordingGroup.actionName = name
            } else if groupDepth > 0 {
                openGroup.actionName = name
            } else if !undoStack.isEmpty {
                undoStack[undoStack.count - 1].actionName = name
            }
        }
    }

    /// The name of the group ``undo()`` would undo, or `""`.
    public var undoActionName: String {
        locked {
            if groupDepth > 0 && !openGroup.actions.isEmpty { return openGroup.actionName }
            return undoStack.last?.actionName ?? ""
        }
    }

    /// The name of the group ``redo()`` would redo, or `""`.
    public var redoActionName: String { locked { redoStack.last?.actionName ?? "" } }
}
