/// A save of the document over its own file that runs on the lifecycle queue (explicit, autosave,
/// close), seen by the save requests of other coordinators (`savePresentedItemChanges`).
///
/// Such a save writes the version its snapshot holds — the version of the moment it was asked
/// for, or a later one when the snapshot is taken again under the write lock. A save request that
/// arrives while it runs would write the same version a second time (a second `fsync`ed save
/// behind the first: two processes editing one file did it for most of their edits). So the
/// request waits for the running save to end, and is then answered as it would have been at
/// once: nothing to save when the running save wrote everything (the usual case), else a save of
/// its own — so the asker still reads every change made before it asked.
///
/// The wait adds no new dependency: the presenter's own save would need the same write lock and
/// the document's `saveLock`, which the running save holds or waits for. It is never taken for a
/// reader of this process that lends its locks (that save must not wait behind anything that may
/// need those locks). Kept in `DocumentStorage`, under the document's storage lock.
struct RunningOwnSave {
    /// The open session the save runs in.
    var session: Int
    /// Called once the save has ended (written, failed or given up), on the thread that ran it:
    /// they must only queue work, never block.
    var waiters: [@Sendable () -> Void] = []
}
