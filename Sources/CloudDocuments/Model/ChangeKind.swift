/// A kind of change to a document's contents, passed to the document's change counter:
/// Apple's `UIDocument.ChangeKind`.
///
/// A value type: usable on any thread.
public enum ChangeKind: Sendable, Hashable {
    /// A change was made (the document gains one unsaved change).
    case done
    /// A change was undone (the document loses one unsaved change).
    case undone
    /// An undone change was redone (the document gains one unsaved change again).
    case redone
    /// The changes were saved or discarded: the document has no unsaved change.
    case cleared
}
