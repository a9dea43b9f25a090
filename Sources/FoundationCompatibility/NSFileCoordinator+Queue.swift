import Foundation
internal import FileCoordination

extension NSFileCoordinator {
    /// Coordinates every intent without blocking the caller: the wait happens on a thread of its
    /// own, then `accessor` runs on `queue` with `nil` while all the items are held (they are
    /// released when it returns). Inside it, use each intent's ``NSFileAccessIntent/url``.
    ///
    /// If the coordination fails, `accessor` runs on `queue` with an `NSError` in
    /// `NSCocoaErrorDomain` (see ``NSFileCoordinator``) and nothing is held.
    public func coordinate(
        with intents: [NSFileAccessIntent], queue: OperationQueue,
        byAccessor accessor: @escaping @Sendable ((any Error)?) -> Void
    ) {
        let access = CocoaErrorMapping.Access.intents(intents)
        coordinator.coordinate(with: intents.map(\.intent), queue: queue) { error in
            accessor(error.map { CocoaErrorMapping.nsError(for: $0, access: access) })
        }
    }
}
