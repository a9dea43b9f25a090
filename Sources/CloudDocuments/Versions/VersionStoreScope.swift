import Foundation

/// Which version store ``FileVersion`` calls use, captured in one place and applied in another.
///
/// The store is normally the user's (``FileVersion`` docs, Docs/Versions.md); tests and sandboxes
/// give a task its own with a task-local override. Task-locals do not reach code run later on an
/// `OperationQueue` or `DispatchQueue` — a presenter's messages, say — so code that looks versions
/// up there captures the scope where it is set up (``current``) and runs the look-up in it
/// (``run(_:)``). FoundationCompatibility's presenter bridge does this for the `NSFileVersion` it
/// hands to `presentedItemDidGain(_:)` and the other version messages.
package struct VersionStoreScope: Sendable {
    /// The overriding store, or `nil` for the standard one.
    let store: VersionStore?

    /// The store in effect here: this task's override, if any, else the standard store.
    package static var current: VersionStoreScope { VersionStoreScope(store: VersionStore.override) }

    /// Runs `body` on the calling thread with ``FileVersion`` calls using this scope's store;
    /// returns what it returns.
    package func run<T>(_ body: () -> T) -> T {
        guard let store else { return body() }
        return VersionStore.$override.withValue(store, operation: body)
    }
}
