/// What one import pass did: the records it changed, and what it could not use (each failure is
/// also reported once through ``ManagedDocument``'s failure notification).
public struct SyncOutcome: Sendable {
    public var summary = ImportSummary()
    /// Logs skipped (damaged, truncated, from a newer schema), a reset container detected, a
    /// baseline that could not be written: reported once each, never silently.
    public var failures: [ManagedStoreError] = []
    /// Whether imported changes wait in the open transaction with unsaved local edits (the next
    /// save commits them).
    public var joinedUnsavedChanges = false

    public init() {}
}
