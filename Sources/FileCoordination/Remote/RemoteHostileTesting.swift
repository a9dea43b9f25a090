import Foundation
/// Hooks for the hostile-peer tests' worker (`CoordinationTestHelper hostile-*`), which cannot see
/// the module's internal types: the documented bounds, valid frames to abuse, and the endpoint's
/// turn counter. Not part of the API.
package enum RemoteHostileTesting {
    /// `RemoteBounds.maximumConnections`.
    package static var maximumConnections: Int { RemoteBounds.maximumConnections }

    /// `RemoteMessageCodec.maximumFrameLength`: the longest frame body accepted.
    package static var maximumFrameLength: Int { RemoteMessageCodec.maximumFrameLength }

    /// The wire version (`RemoteMessageCodec.version`).
    package static var wireVersion: UInt8 { RemoteMessageCodec.version }

    /// Turns of this process's endpoint poll loops since it started (one per return of `poll`):
    /// a thread that spins shows as a count that grows without events.
    package static var endpointTurns: Int { EndpointStatistics.turns.load(ordering: .relaxed) }

    /// A valid lookup frame, as sent (length and body): which presenters present `path`, the
    /// folders above it, or items inside it.
    package static func lookupFrame(id: UInt64, path: String) -> [UInt8] {
        (try? RemoteMessageCodec.encode(.lookup(RemoteLookup(id: id, path: path, scope: .all)))) ?? []
    }

    /// A valid request frame, as sent: `presentedItemDidChange` for presenter `number` at `path`.
    package static func notificationFrame(id: UInt64, number: UInt64, path: String) -> [UInt8] {
        (try? RemoteMessageCodec.encode(.request(RemoteRequest(id: id, presenterNumber: number, presentedPath: path,
                                                               message: .itemDidChange)))) ?? []
    }

    /// A valid request frame, as sent: `presentedSubitemDidChange(at: path + "/x")` for presenter
    /// `number` (a notification that no change monitor stamp deduplicates).
    package static func subitemNotificationFrame(id: UInt64, number: UInt64, path: String) -> [UInt8] {
        let subitem = URL(fileURLWithPath: path + "/x")
        return (try? RemoteMessageCodec.encode(.request(RemoteRequest(id: id, presenterNumber: number, presentedPath: path,
                                                                      message: .subitemDidChange(at: subitem))))) ?? []
    }

    /// The number other processes address `presenter` by.
    package static func presenterNumber(of presenter: any FilePresenter) -> UInt64 {
        UInt64(PresenterID(presenter).number)
    }

    /// Messages from other processes waiting on this process's presenter queues, and the most
    /// that may (the process runtime's `RemotePresence.deliveryBudget`).
    package static var remoteDeliveriesWaiting: Int { CoordinationRuntime.process.remote.deliveryBudget.waitingCount }
    package static var remoteDeliveryLimit: Int { CoordinationRuntime.process.remote.deliveryBudget.limit }
}
