import Foundation
import Synchronization
import SystemSupport

/// A general-purpose recorder of operations for undo and redo: Apple's `UndoManager`, which the
/// Linux Foundation does not provide.
///
/// Code written for Apple platforms compiles unchanged with `import CloudDocuments` (which
/// re-exports Foundation): `let undo = UndoManager()`, ``registerUndo(withTarget:handler:)``,
/// grouping, ``undoNestedGroup()``, action names and menu titles, ``levelsOfUndo`` and the
/// `NSUndoManager…` notifications behave as Apple documents them, with the differences listed
/// below. `DocumentUndoManager` is another name for this class.
///
/// ## Groups
/// Changes are recorded as *groups* of undo actions. ``undo()`` runs the actions of the most
/// recent group, most recent first; what they register in turn (their inverses) becomes one group
/// on the redo stack, so ``redo()`` can replay it. ``beginUndoGrouping()`` and
/// ``endUndoGrouping()`` make one group of everything registered between them; groups nest.
///
/// A registration made while no group is open starts a group:
/// - with ``groupsByEvent`` `true`, on the main queue, an *automatic* group that collects every
///   registration made until the main queue's next turn (see ``groupsByEvent``): Apple's "one
///   undo step per event";
/// - otherwise a group of that one registration, closed at once. Apple raises an exception here
///   (with ``groupsByEvent`` off you must open groups yourself); this manager is lenient.
///
/// ## Notifications
/// Posted synchronously on `NotificationCenter.default`, on the thread that called the method,
/// with `object` the manager and no `userInfo`, never with the manager's lock held (observers may
/// call back into it). Names: ``checkpointNotification``, ``didOpenUndoGroupNotification``,
/// ``willCloseUndoGroupNotification``, ``didCloseUndoGroupNotification``,
/// ``willUndoChangeNotification``, ``didUndoChangeNotification``, ``willRedoChangeNotification``,
/// ``didRedoChangeNotification`` (also as Apple's `Notification.Name.NSUndoManagerCheckpoint`, …).
/// Each method's documentation says which it posts, in order.
///
/// ## Change counting
/// The owning document sets the internal `onChange` callback, which receives ``ChangeKind/done``
/// once per top-level group: when an explicit top-level group closes non-empty, or when a
/// registration opens a group by itself (automatic or single); ``ChangeKind/undone`` after each
/// top-level ``undo()``/``undoNestedGroup()`` (none for undoing a group nested in an open group:
/// the enclosing group is counted when it closes), ``ChangeKind/redone`` after each ``redo()``,
/// and ``ChangeKind/cleared`` after ``removeAllActions()``. Registrations made while undoing or
/// redoing are not changes. It is called synchronously on the calling thread, lock released,
/// before the notification that goes with it.
///
/// ## Threading
/// Like Apple's (which is `@MainActor`), it is meant to be used from one thread at a time: the
/// main actor, or the thread or queue that edits the document. Handlers run there,
/// synchronously, inside ``undo()`` and ``redo()``. The class is `Sendable` so that documents and
/// other threads can hold it: all state is behind an internal lock (hence `@unchecked`), never held
/// while a handler, observer or callback runs, so reading ``canUndo``, ``canRedo`` or the action
/// names from another thread is safe. Only ``groupsByEvent`` depends on the thread: see there.
///
/// ## Differences from Apple's
/// Nothing throws or traps. Calls Apple answers with an exception are ignored, or do the evident
/// repair, as documented on each method. ``groupsByEvent`` is `false` by default. Menu titles are
/// English. Not provided: `registerUndo(withTarget:selector:object:)` and
/// `prepare(withInvocationTarget:)` (they need the Objective-C runtime; use
/// ``registerUndo(withTarget:handler:)``), `runLoopModes`, discardable actions and action user
/// info.
open class UndoManager: NSObject, @unchecked Sendable {
    // Everything below is protected by `lock`; none of it is touched without holding it.
    private let lock = NSLock()
    var undoStack: [UndoGroup] = []
    var redoStack: [UndoGroup] = []
    /// The open groups, outermost first: `openGroups.count` is the grouping level. While undoing
    /// or redoing, `openGroups[0]` is the group recording the inverse actions, and the groups
    /// that were open before are in `setAsideGroups`.
    var openGroups: [OpenUndoGroup] = []
    var setAsideGroups: [OpenUndoGroup] = []
    var undoing = false
    var redoing = false
    var disabledCount = 0
    var levels = 0
    var groupsEvents = false
    /// Numbers the automatic groups, so an end-of-turn close only closes its own.
    var lastAutomaticGeneration: UInt64 = 0
    /// Set when an automatic group's turn ended while it could not be closed (a nested group was
    /// still open, or an undo was running): it is closed as soon as it can be.
    var automaticClosePending = false
    private var changeHandler: (@Sendable (ChangeKind) -> Void)?
    #if DEBUG
    /// The thread holding `lock` (its `pthread_t`; 0: none), for `assertLockHeld` /
    /// `assertLockNotHeld`. Debug builds only.
    private let lockHolder = Atomic<UInt>(0)
    #endif

    /// Creates an empty undo manager: nothing to undo or redo, registration enabled, unlimited
    /// levels, ``groupsByEvent`` `false`. Any thread.
    public override init() {
        super.init()
    }

    func locked<Result>(_ body: () -> Result) -> Result {
        assertLockNotHeld("the lock is not recursive")
        lock.lock()
        defer { lock.unlock() }
        #if DEBUG
        lockHolder.store(UInt(pthread_self()), ordering: .relaxed)
        defer { lockHolder.store(0, ordering: .relaxed) }  // runs before the unlock above
        #endif
        return body()
    }

    /// Asserts, in debug builds, that the caller holds the manager's lock (runs inside `locked`).
    @inline(__always)
    func assertLockHeld(file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        assert(lockHolder.load(ordering: .relaxed) == UInt(pthread_self()), "must be called with the undo manager's lock held",
               file: file, line: line)
        #endif
    }

    /// Asserts, in debug builds, that the caller does not hold the manager's lock: handlers,
    /// observers and the change callback are never called with it held.
    @inline(__always)
    func assertLockNotHeld(_ why: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        assert(lockHolder.load(ordering: .relaxed) != UInt(pthread_self()),
               "must not be called with the undo manager's lock held: \(why())", file: file, line: line)
        #endif
    }

    /// Called with each change to report to the document's change count (see "Change counting").
    /// Internal: set by the document that owns this manager. Any thread.
    var onChange: (@Sendable (ChangeKind) -> Void)? {
        get { locked { changeHandler } }
        set { locked { changeHandler = newValue } }
    }

    func report(_ kind: ChangeKind) {
        locked { changeHandler }?(kind)
    }

    func post(_ name: Notification.Name) {
        assertLockNotHeld("observers may call the manager")
        NotificationCenter.default.post(name: name, object: self)
    }

    /// Appends a group to a stack, dropping the oldest groups beyond ``levelsOfUndo``.
    /// Call with the lock held (asserted).
    func push(_ group: UndoGroup, onto stack: inout [UndoGroup]) {
        assertLockHeld()
        stack.append(group)
        if levels > 0 && stack.count > levels { stack.removeFirst(stack.count - levels) }
    }

    // MARK: Registering

    private enum Registration {
        case ignored, joined, openedAlone, openedAutomatic(UInt64)
    }

    /// Records `handler` as the way to undo the change just made to `target`: Apple's
    /// `registerUndo(withTarget:handler:)`.
    ///
    /// - While an undo or redo runs: the action joins the group recording the inverses (for
    ///   ``redo()`` while undoing, for ``undo()`` while redoing); the redo stack is kept.
    /// - Otherwise the redo stack is cleared, and the action joins the innermost open group; if
    ///   none is open, it opens one: an automatic group (``groupsByEvent`` on the main queue,
    ///   closed on the main queue's next turn), or a group of this action alone, closed at once.
    ///   Opening posts ``didOpenUndoGroupNotification`` (no checkpoint: Apple posts none when it
    ///   opens a top-level group) after reporting the change to the document; closing at once
    ///   then posts what ``endUndoGrouping()`` posts.
    /// - Ignored while registration is disabled.
    ///
    /// - Parameters:
    ///   - target: Held weakly; if it is gone when the action is due, the action is skipped.
    ///   - handler: Called with `target` on the thread that calls ``undo()`` or ``redo()``.
    open func registerUndo<TargetType: AnyObject>(withTarget target: TargetType,
                                                  handler: @escaping (TargetType) -> Void) {
        let action = UndoAction(target: target, invoke: { object in
            if let typed = object as? TargetType { handler(typed) }
        })
        let automatic = MainQueueCheck.isMainQueue
        let registration: Registration = locked {
            guard disabledCount == 0 else { return .ignored }
            if !(undoing || redoing) { redoStack.removeAll() }
            if !openGroups.isEmpty {
                openGroups[openGroups.count - 1].group.entries.append(.action(action))
                return .joined
            }
            var group = OpenUndoGroup(group: UndoGroup(entries: [.action(action)]), changeReported: true)
            guard groupsEvents && automatic else {
                openGroups = [group]
                return .openedAlone
            }
            lastAutomaticGeneration &+= 1
            group.automaticGeneration = lastAutomaticGeneration
            openGroups = [group]
            return .openedAutomatic(lastAutomaticGeneration)
        }
        switch registration {
        case .ignored, .joined:
            return
        case .openedAlone:
            report(.done)
            post(Self.didOpenUndoGroupNotification)
            endUndoGrouping()
        case .openedAutomatic(let generation):
            report(.done)
            post(Self.didOpenUndoGroupNotification)
            DispatchQueue.main.async { [weak self] in self?.endOfTurn(ofAutomaticGroup: generation) }
        }
    }

    // MARK: Grouping

    /// Whether a registration made while no group is open, on the main queue, opens an automatic
    /// group that collects every registration until the main queue's next turn: Apple's grouping
    /// "by event" (one undo step per pass of the event loop). `false` by default here (Apple:
    /// `true`); Docs/Documents.md says why.
    ///
    /// Exactly: with `true`, the first such registration made on the main queue (main-actor code,
    /// a block on `DispatchQueue.main`, or the main thread of a program that does not drain the
    /// main queue) opens the group (``groupingLevel`` becomes 1, the document counts `.done`) and
    /// queues its closing with `DispatchQueue.main.async`. Until that block runs — after the
    /// current main-queue work item or main-actor job, and after those queued before it — every
    /// registration joins the group, and explicit groups nest inside it. The block closes it as
    /// ``endUndoGrouping()`` does, unless it was closed already (by ``endUndoGrouping()``,
    /// ``undo()`` or ``removeAllActions()``); if a nested group is still open then, the automatic
    /// group closes right after that nested group ends. A program that never drains the main
    /// queue keeps the group open until ``undo()`` closes it, as Apple's does on a thread whose
    /// run loop does not run. Registrations on other queues are not grouped by event (they have
    /// no event loop): each opens a group of its own, as with `false`. Turning the property off
    /// does not close an automatic group already open: its turn still does.
    open var groupsByEvent: Bool {
        get { locked { groupsEvents } }
        set { locked { groupsEvents = newValue } }
    }

    /// Opens a group: the actions registered until the matching ``endUndoGrouping()`` are undone
    /// together. Groups nest; a nested group becomes one entry of the group around it (see
    /// ``undoNestedGroup()``).
    ///
    /// Posts ``checkpointNotification`` (unless an undo or redo is running), then
    /// ``didOpenUndoGroupNotification``.
    open func beginUndoGrouping() {
        if !locked({ undoing || redoing }) { post(Self.checkpointNotification) }
        locked { openGroups.append(OpenUndoGroup()) }
        post(Self.didOpenUndoGroupNotification)
    }

    /// Closes the innermost open group. A nested group becomes one entry of its parent (dropped
    /// if empty). The outermost one goes onto the undo stack (the oldest group is dropped beyond
    /// ``levelsOfUndo``) and is reported to the document as `.done`, unless it is empty (then it
    /// is dropped) or it was reported when it opened.
    ///
    /// Posts ``checkpointNotification`` and ``willCloseUndoGroupNotification`` before closing
    /// (observers may still register into the group), ``didCloseUndoGroupNotification`` after.
    /// Ignored when no group is open (Apple raises an exception), and while an undo or redo runs
    /// when only the group recording it is open.
    open func endUndoGrouping() {
        guard locked({ openGroups.count > minimumOpenGroups }) else { return }
        post(Self.checkpointNotification)
        post(Self.willCloseUndoGroupNotification)
        let closing = closeInnermostGroup()
        guard closing.closed else { return }
        if closing.reportDone { report(.done) }
        post(Self.didCloseUndoGroupNotification)
        if closing.closeAutomaticGroupToo { endUndoGrouping() }
    }

    /// How many groups are open: 0 outside any group. While an undo or redo runs, the group
    /// recording it counts as one.
    open var groupingLevel: Int { locked { openGroups.count } }

    // MARK: State

    /// Whether there is something to undo: a group on the undo stack, or an open group holding
    /// actions (``undo()`` closes it first). As Apple notes, `true` does not mean ``undo()`` can
    /// run now: an undo or redo may be running.
    open var canUndo: Bool {
        locked {
            let groups = undoing || redoing ? setAsideGroups : openGroups
            return !undoStack.isEmpty || groups.contains { !$0.group.isEmpty }
        }
    }

    /// Whether there is a group to redo. Posts ``checkpointNotification`` first (as Apple does:
    /// observers may register pending changes, and a registration clears the redo stack).
    open var canRedo: Bool {
        post(Self.checkpointNotification)
        return locked { !redoStack.isEmpty }
    }

    /// Whether ``undo()`` or ``undoNestedGroup()`` is running its actions (read it in a handler).
    open var isUndoing: Bool { locked { undoing } }

    /// Whether ``redo()`` is running its actions.
    open var isRedoing: Bool { locked { redoing } }

    // MARK: Undo and redo

    /// Closes the open top-level group if there is one, then undoes the most recent group
    /// (``undoNestedGroup()``): runs its actions, most recent first, on this thread, and records
    /// what they register as one group on the redo stack, named like the undone group.
    ///
    /// Posts what ``endUndoGrouping()`` posts if a group was open, then what
    /// ``undoNestedGroup()`` posts. With more than one group open, Apple raises an exception;
    /// here every open group is closed first (the matching ``endUndoGrouping()`` calls are then
    /// ignored). Ignored while an undo or redo runs (from inside a handler).
    open func undo() {
        let level: Int? = locked { undoing || redoing ? nil : openGroups.count }
        guard let level else { return }
        for _ in 0..<level { endUndoGrouping() }
        undoNestedGroup()
    }

    /// Undoes the last group: with no group open, the top group of the undo stack (then the
    /// document counts `.undone`); with a group open, the nested group most recently closed inside
    /// the innermost open group, provided nothing was registered in that group since (then the
    /// document is told nothing: the enclosing group counts when it closes). What the actions
    /// register goes onto the redo stack as one group.
    ///
    /// Posts ``checkpointNotification``; then, if there is such a group,
    /// ``willUndoChangeNotification`` before running it and ``didUndoChangeNotification`` after.
    /// Ignored when there is no such group (Apple raises an exception when actions were
    /// registered after the nested group), and while an undo or redo runs.
    open func undoNestedGroup() {
        post(Self.checkpointNotification)
        let available: Bool = locked {
            guard !undoing, !redoing else { return false }
            guard let innermost = openGroups.last else { return !undoStack.isEmpty }
            if case .group? = innermost.group.entries.last { return true }
            return false
        }
        guard available else { return }
        post(Self.willUndoChangeNotification)
        run(undoing: true)
    }

    /// Redoes the most recently undone group: runs its actions, most recent first, on this thread,
    /// records what they register as one group on the undo stack (without clearing the redo
    /// stack), and counts `.redone` for the document.
    ///
    /// Posts ``checkpointNotification``; then, if there is a group to redo,
    /// ``willRedoChangeNotification`` before running it and ``didRedoChangeNotification`` after.
    /// Ignored when there is nothing to redo, and while an undo or redo runs.
    open func redo() {
        post(Self.checkpointNotification)
        guard locked({ !undoing && !redoing && !redoStack.isEmpty }) else { return }
        post(Self.willRedoChangeNotification)
        run(undoing: false)
    }

    // MARK: Limits and clearing

    /// The most top-level groups kept on each of the undo and redo stacks; when a new group
    /// exceeds it, the oldest is dropped. 0 (the default) means unlimited. Setting a smaller
    /// value drops the oldest groups at once; negative values are treated as 0.
    open var levelsOfUndo: Int {
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
    /// reports `.cleared` to the document. Posts nothing. Ignored while an undo or redo runs.
    open func removeAllActions() {
        let cleared: Bool = locked {
            guard !undoing, !redoing else { return false }
            undoStack.removeAll()
            redoStack.removeAll()
            openGroups.removeAll()
            automaticClosePending = false
            disabledCount = 0
            return true
        }
        if cleared { report(.cleared) }
    }

    /// Removes every action whose target is `target` (by identity) from both stacks and from the
    /// open groups; groups left empty are dropped (open ones stay open). Does not re-enable
    /// registration, reports nothing and posts nothing. Use it when an object that registered
    /// actions goes away.
    open func removeAllActions(withTarget target: AnyObject) {
        locked {
            for index in undoStack.indices { undoStack[index].removeActions(withTarget: target) }
            for index in redoStack.indices { redoStack[index].removeActions(withTarget: target) }
            undoStack.removeAll { $0.isEmpty }
            redoStack.removeAll { $0.isEmpty }
            for index in openGroups.indices { openGroups[index].group.removeActions(withTarget: target) }
            for index in setAsideGroups.indices { setAsideGroups[index].group.removeActions(withTarget: target) }
        }
    }

    // MARK: Enabling registration

    /// Ignores registrations until the matching ``enableUndoRegistration()``. Calls nest.
    open func disableUndoRegistration() {
        locked { disabledCount += 1 }
    }

    /// Matches one ``disableUndoRegistration()``; registration resumes when every disable has been
    /// matched. Ignored when registration is already enabled (Apple raises an exception).
    open func enableUndoRegistration() {
        locked { if disabledCount > 0 { disabledCount -= 1 } }
    }

    /// Whether registrations are recorded (no unmatched ``disableUndoRegistration()``).
    open var isUndoRegistrationEnabled: Bool { locked { disabledCount == 0 } }

    // MARK: Action names and menu titles

    /// Names the current undo step, for an "Undo <name>" menu item: the outermost open group (the
    /// group being recorded, while an undo or redo runs), else the most recent group on the undo
    /// stack. An empty name removes the name. Ignored when there is no such group.
    open func setActionName(_ actionName: String) {
        locked {
            if !openGroups.isEmpty {
                openGroups[0].group.actionName = actionName
            } else if !undoStack.isEmpty {
                undoStack[undoStack.count - 1].actionName = actionName
            }
        }
    }

    /// The name of the step ``undo()`` would undo (the open group, if it holds actions), or `""`
    /// when it has none or there is nothing to undo.
    open var undoActionName: String {
        locked {
            let groups = undoing || redoing ? setAsideGroups : openGroups
            if let outermost = groups.first, groups.contains(where: { !$0.group.isEmpty }) {
                return outermost.group.actionName
            }
            return undoStack.last?.actionName ?? ""
        }
    }

    /// The name of the step ``redo()`` would redo, or `""`.
    open var redoActionName: String { locked { redoStack.last?.actionName ?? "" } }

    /// The title of the Undo menu item: ``undoMenuTitle(forUndoActionName:)`` of
    /// ``undoActionName`` — "Undo Typing", or "Undo" when the step has no name or there is
    /// nothing to undo (Apple's Objective-C API returns `nil` then; its Swift API, like this
    /// one, a `String`).
    open var undoMenuItemTitle: String { undoMenuTitle(forUndoActionName: undoActionName) }

    /// The title of the Redo menu item: "Redo <name>", or "Redo".
    open var redoMenuItemTitle: String { redoMenuTitle(forUndoActionName: redoActionName) }

    /// The Undo menu title for an action name: "Undo" followed by the name, or "Undo" for `""`.
    /// In English only (Apple localizes); override to localize, as on Apple platforms.
    open func undoMenuTitle(forUndoActionName actionName: String) -> String {
        actionName.isEmpty ? "Undo" : "Undo \(actionName)"
    }

    /// The Redo menu title for an action name: "Redo" followed by the name, or "Redo" for `""`.
    /// In English only; override to localize.
    open func redoMenuTitle(forUndoActionName actionName: String) -> String {
        actionName.isEmpty ? "Redo" : "Redo \(actionName)"
    }
}
