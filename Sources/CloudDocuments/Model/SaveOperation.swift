/// Why a document is being saved: Apple's `UIDocument.SaveOperation`.
///
/// A value type: usable on any thread.
public enum SaveOperation: Sendable, Hashable {
    /// The file must not exist yet: the save fails with ``DocumentError/alreadyExists(_:)`` when it
    /// does, and the existing file is left untouched.
    case forCreating
    /// The file is replaced (or created if it does not exist yet).
    case forOverwriting
}
