import Foundation

extension Coordinator {
    /// Prepares presenters for a batch of coordinated accesses: every presenter of the items is
    /// asked to relinquish them (readers' presenters also to save, unless `.withoutChanges`), once,
    /// before `batchAccessor` runs. Inside `batchAccessor`, make the individual `coordinate` calls,
    /// then call the completion handler it receives — the presenters' reacquirers run then.
    ///
    /// No lock is held by the batch itself. `batchAccessor` runs on the calling thread. Throws
    /// ``CoordinationError`` if a presenter refuses or the wait fails (the batch accessor is not
    /// run), or rethrows what `batchAccessor` throws (reacquirers then run at once).
    public func prepare(
        forReadingItemsAt readingURLs: [URL], options readingOptions: ReadingOptions = [],
        writingItemsAt writingURLs: [URL], options writingOptions: WritingOptions = [],
        byAccessor batchAccessor: (@escaping @Sendable () -> Void) throws -> Void
    ) throws {
        let intents = readingURLs.map { FileAccessIntent.readingIntent(with: $0, options: readingOptions) }
            + writingURLs.map { FileAccessIntent.writingIntent(with: $0, options: writingOptions) }
        guard !intents.isEmpty else {
            try batchAccessor({})
            return
        }
        let context = WaitContext(timeout: timeout, token: cancellation)
        try context.check()
        var messenger = PresenterMessenger(runtime: runtime, ownPresenter: filePresenter,
                                           requester: effectiveOwner, context: context)
        let accesses = ResolvedAccess.resolve(intents, runtime: runtime)
        try messenger.askOtherProcessesBeforeLocking(accesses)
        let reacquirers = try messenger.prepare(accesses)
        let prepared = messenger.concernedPresenters(accesses)
        settings.withLock { settings in for id in prepared { settings.batchPrepared[id, default: 0] += 1 } }
        let once = AnswerOnce()
        let completion: @Sendable () -> Void = { [self] in
            guard once.first() else { return }
            settings.withLock { settings in
                for id in prepared {
                    settings.batchPrepared[id, default: 1] -= 1
                    if settings.batchPrepared[id] == 0 { settings.batchPrepared.removeValue(forKey: id) }
                }
            }
            PresenterMessenger.run(reacquirers)
        }
        do {
            try batchAccessor(completion)
        } catch {
            completion()
            throw error
        }
    }
}
