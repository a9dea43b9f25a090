import Foundation

// The notifications an undo manager posts, with Apple's string values, so that code observing
// them by name (or by the raw string) matches. Posted on `NotificationCenter.default`, on the
// thread that called the manager, with `object` the manager; see each method for when.

extension UndoManager {
    /// Posted when groups are opened or closed, before an undo or redo, and by ``canRedo``, so
    /// that observers can register the undo actions of changes they have delayed.
    public static let checkpointNotification = Notification.Name("NSUndoManagerCheckpointNotification")
    /// Posted after a group is opened (also an automatic or single-action one).
    public static let didOpenUndoGroupNotification = Notification.Name("NSUndoManagerDidOpenUndoGroupNotification")
    /// Posted just before a group is closed; observers may still register into it.
    public static let willCloseUndoGroupNotification = Notification.Name("NSUndoManagerWillCloseUndoGroupNotification")
    /// Posted after a group is closed.
    public static let didCloseUndoGroupNotification = Notification.Name("NSUndoManagerDidCloseUndoGroupNotification")
    /// Posted before an undo runs its actions.
    public static let willUndoChangeNotification = Notification.Name("NSUndoManagerWillUndoChangeNotification")
    /// Posted after an undo ran its actions.
    public static let didUndoChangeNotification = Notification.Name("NSUndoManagerDidUndoChangeNotification")
    /// Posted before a redo runs its actions.
    public static let willRedoChangeNotification = Notification.Name("NSUndoManagerWillRedoChangeNotification")
    /// Posted after a redo ran its actions.
    public static let didRedoChangeNotification = Notification.Name("NSUndoManagerDidRedoChangeNotification")
}

/// The same names as Apple's SDK spells them in Swift (`.NSUndoManagerDidUndoChange`, …).
extension Notification.Name {
    /// ``UndoManager/checkpointNotification``.
    public static let NSUndoManagerCheckpoint = UndoManager.checkpointNotification
    /// ``UndoManager/didOpenUndoGroupNotification``.
    public static let NSUndoManagerDidOpenUndoGroup = UndoManager.didOpenUndoGroupNotification
    /// ``UndoManager/willCloseUndoGroupNotification``.
    public static let NSUndoManagerWillCloseUndoGroup = UndoManager.willCloseUndoGroupNotification
    /// ``UndoManager/didCloseUndoGroupNotification``.
    public static let NSUndoManagerDidCloseUndoGroup = UndoManager.didCloseUndoGroupNotification
    /// ``UndoManager/willUndoChangeNotification``.
    public static let NSUndoManagerWillUndoChange = UndoManager.willUndoChangeNotification
    /// ``UndoManager/didUndoChangeNotification``.
    public static let NSUndoManagerDidUndoChange = UndoManager.didUndoChangeNotification
    /// ``UndoManager/willRedoChangeNotification``.
    public static let NSUndoManagerWillRedoChange = UndoManager.willRedoChangeNotification
    /// ``UndoManager/didRedoChangeNotification``.
    public static let NSUndoManagerDidRedoChange = UndoManager.didRedoChangeNotification
}
