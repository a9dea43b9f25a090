/// The name this package gave its undo manager before it took Apple's name: the same class as
/// ``UndoManager``. Kept so that existing code compiles; new code says `UndoManager`.
public typealias DocumentUndoManager = UndoManager
