/// Counts a document's unsaved changes with *change tokens*, so that "is the document dirty?" is
/// answered against the exact version that was last saved.
///
/// Every distinct version of the contents gets an identifier. ``ChangeKind/done`` creates a new
/// version (discarding the versions that could have been redone), ``ChangeKind/undone`` steps
/// back to the previous version, ``ChangeKind/redone`` forward again, and ``ChangeKind/cleared``
/// declares the current version saved. A save records the identifier (the *token*) of the version
/// it snapshotted; the document has unsaved changes when the current identifier differs from the
/// saved one. So:
/// - a change made while a save is in flight keeps the document dirty afterwards (its identifier
///   is newer than the token the save recorded);
/// - undoing back to the saved version makes the document clean again, redoing makes it dirty;
/// - undoing past the saved version and then making a *different* change is dirty, although a
///   plain counter would be back at the saved count.
///
/// A value type, always used under the document's lock.
struct ChangeTracker: Sendable {
    /// Identifiers of the versions along the undo/redo chain; `position` is the current one.
    private var history: [UInt64] = [0]
    private var position = 0
    private var nextIdentifier: UInt64 = 1
    private var savedIdentifier: UInt64 = 0
    /// The longest history kept; older entries are dropped (undoing that far back then simply
    /// reaches a version that is not the saved one).
    static let historyLimit = 4096

    /// The identifier of the current version: pass it to ``markSaved(_:)`` when a snapshot taken
    /// now has been saved.
    var token: UInt64 { history[position] }

    /// Whether the current version differs from the last saved one.
    var hasUnsavedChanges: Bool { token != savedIdentifier }

    /// The signed number of steps between the saved version and the current one along the
    /// undo/redo chain (`done` +1, `undone` −1), or `nil` when the saved version is not on it.
    /// For tests and diagnostics.
    var changeCount: Int? {
        guard let saved = history.firstIndex(of: savedIdentifier) else { return nil }
        return position - saved
    }

    mutating func record(_ kind: ChangeKind) {
        switch kind {
        case .done:
            history.removeSubrange((position + 1)...)
            history.append(makeIdentifier())
            position += 1
            trim()
        case .undone:
            if position > 0 {
                position -= 1
            } else {
                // Before the oldest known version: a version nobody saved.
                history.insert(makeIdentifier(), at: 0)
            }
        case .redone:
            if position + 1 < history.count {
                position += 1
            } else {
                history.append(makeIdentifier())
                position += 1
                trim()
            }
        case .cleared:
            savedIdentifier = token
        }
    }

    /// Records that the version with identifier `token` is now what is on disk.
    mutating func markSaved(_ token: UInt64) {
        savedIdentifier = token
    }

    /// Records that no version is known to be safely on disk (a save whose bytes are in place but
    /// not durable): the document has unsaved changes until its next save.
    mutating func forgetSaved() {
        savedIdentifier = .max  // never an identifier: `makeIdentifier` counts up from 1
    }

    /// Forgets every version: the contents just (re)loaded are the saved version.
    mutating func reset() {
        let identifier = makeIdentifier()
        history = [identifier]
        position = 0
        savedIdentifier = identifier
    }

    private mutating func makeIdentifier() -> UInt64 {
        defer { nextIdentifier &+= 1 }
        return nextIdentifier
    }

    private mutating func trim() {
        guard history.count > Self.historyLimit else { return }
        let drop = history.count - Self.historyLimit / 2
        let kept = min(drop, position)
        history.removeFirst(kept)
        position -= kept
    }
}
