import Foundation

extension Coordinator {
    /// Coordinates every intent without blocking the caller: the waiting happens on a thread of its
    /// own, then `accessor` runs on `queue` with `nil` while all the locks are held (they are
    /// released when it returns). If the coordination fails, `accessor` runs on `queue` with the
    /// ``CoordinationError`` and no lock is held.
    ///
    /// As with Apple's, read each intent's ``FileAccessIntent/url`` inside `accessor`: it is set,
    /// before `accessor` runs, to the URL to use — the item's new place if a coordinated move moved
    /// it while this call waited, a link's target for `.resolvesSymbolicLink`, the snapshot for
    /// `.forUploading`.
    public func coordinate(
        with intents: [FileAccessIntent], queue: OperationQueue,
        byAccessor accessor: @escaping @Sendable ((any Error)?) -> Void
    ) {
        Self.onWaitingThread {
            do {
                let access = try CoordinatedAccess.begin(intents, coordinator: self)
                queue.addOperation {
                    var access = access
                    access.run { accessor(nil) }
                    access.end()
                }
            } catch {
                queue.addOperation { accessor(error) }
            }
        }
    }

    /// Coordinates every intent, suspending (not blocking) the calling task while waiting, then runs
    /// `accessor` on a thread of its own with the same intent objects (their `url`s updated, as for
    /// the queue variant) while all the locks are held, and returns its result.
    ///
    /// Cancelling the calling `Task` ends the wait with ``CoordinationError/cancelled``; once the
    /// accessor has started it runs to completion. Throws ``CoordinationError`` when the
    /// coordination fails (the accessor did not run), or what the accessor throws.
    public func coordinate<T: Sendable>(
        with intents: [FileAccessIntent],
        byAccessor accessor: @escaping @Sendable ([FileAccessIntent]) throws -> T
    ) async throws -> T {
        let taskCancellation = CancellationToken()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                Self.onWaitingThread {
                    do {
                        var access = try CoordinatedAccess.begin(intents, coordinator: self, taskToken: taskCancellation)
                        let updated = access.intents
                        let result = Result { try access.run { try accessor(updated) } }
                        access.end()
                        continuation.resume(with: result)
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
        } onCancel: {
            taskCancellation.cancel()
        }
    }
}

extension Coordinator {
    /// Runs `body` — which may sleep for a long time waiting for locks — at once on a thread of
    /// the `WaitingThreads.coordinations` pool (an idle one, or a new one). Not on
    /// `DispatchQueue.global()`: blocked global threads starve other work queued there until
    /// libdispatch adds a thread, which takes about a second on a 2-core machine.
    static func onWaitingThread(_ body: @escaping @Sendable () -> Void) {
        WaitingThreads.coordinations.run(body)
    }
}
