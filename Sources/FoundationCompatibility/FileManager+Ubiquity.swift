import Foundation
internal import FileCoordination
internal import Ubiquity

// Apple's iCloud methods of `FileManager`, over the Ubiquity module's `UbiquityAccount.shared`
// (configured by ~/.config/clouddocuments/ubiquity.conf or the CLOUDDOCUMENTS_UBIQUITY_*
// variables; Docs/Ubiquity.md). swift-corelibs-foundation has none of them.
//
// Errors are `NSError`s in `NSCocoaErrorDomain` with the codes a Cocoa developer checks
// (UbiquityErrorMapping.swift has the table), the item's URL and path in `userInfo`, and the
// Swift-native `UbiquityError` under `NSUnderlyingErrorKey`.
extension FileManager {
    /// The container folder for `containerIdentifier` (`nil`: the first configured), created with
    /// its `Documents` folder on first use; `nil` when signed out (no root configured), when no
    /// identifier is configured, or when the folder cannot be made. Cheap here (one `stat` of the
    /// configuration file), but calling it off the main thread, as Apple asks, does no harm.
    public func url(forUbiquityContainerIdentifier containerIdentifier: String?) -> URL? {
        UbiquityAccount.shared.url(forUbiquityContainerIdentifier: containerIdentifier)
    }

    /// An opaque token for the configured cloud root (equal tokens: the same root; a different
    /// token: another root), or `nil` when signed out. It is an `NSString` you may compare with
    /// `isEqual(_:)` and archive with `NSKeyedArchiver`, as Apple's token; do not read it.
    ///
    /// The first read starts watching the configuration for the rest of the process, so that
    /// `.NSUbiquityIdentityDidChange` is posted when it changes (Apple's pattern: read the token at
    /// launch, then observe the notification). The notification is posted on a private serial
    /// queue, not the main thread (`UbiquityAccount.identityDidChangeNotification`).
    public var ubiquityIdentityToken: (any NSCoding & NSCopying & NSObjectProtocol)? {
        UbiquityCompatibility.startWatchingIdentity()
        guard let token = UbiquityAccount.shared.identityToken else { return nil }
        return NSString(string: token.rawValue)
    }

    /// Moves the item at `url` into a container (`flag == true`, `destinationURL` inside a
    /// container) or out of every container (`false`, `destinationURL` outside), in one
    /// coordinated move: presenters get `presentedItemDidMove(to:)`, open documents follow.
    ///
    /// **Threading:** blocks while it waits for presenters: as Apple says, do not call it on the
    /// main thread — call it from a dispatch queue or a thread of your own. It is unavailable
    /// from asynchronous contexts (it would block a thread of the cooperative pool): there,
    /// `try await` the `async` overload.
    ///
    /// - Throws: `NSFileWriteFileExistsError` (516) when something is at `destinationURL`;
    ///   `NSFileNoSuchFileError` (4) when nothing is at `url`; `NSUbiquitousFileUnavailableError`
    ///   (4353) when moving out an item that is not in a container; `NSFileWriteInvalidFileNameError`
    ///   (514) for a destination on the wrong side; `NSUbiquitousFileUbiquityServerNotAvailable`
    ///   (4355) when signed out; the coordination codes of `NSFileCoordinator` (`NSFileLockingError`,
    ///   `NSUserCancelledError`, a presenter's error) when the coordination fails; the write codes
    ///   for a failed rename (640 out of space, 513 no permission, …).
    @available(*, noasync, message: "it blocks while presenters answer: use `try await setUbiquitous(_:itemAt:destinationURL:)`")
    public func setUbiquitous(_ flag: Bool, itemAt url: URL, destinationURL: URL) throws {
        do {
            try UbiquityAccount.shared.moveItem(ubiquitous: flag, itemAt: url, destinationURL: destinationURL)
        } catch {
            throw Self.nsError(for: error, item: url)
        }
    }

    /// ``setUbiquitous(_:itemAt:destinationURL:)`` for asynchronous code (not in Apple's SDK):
    /// the calling task suspends while the coordination waits, on a thread of its own, so any
    /// actor may call it — the main actor included. Cancelling the task while it waits ends it
    /// with `NSUserCancelledError` and nothing moved. Same move, same errors.
    public func setUbiquitous(_ flag: Bool, itemAt url: URL, destinationURL: URL) async throws {
        do {
            try await UbiquityAccount.shared.moveItem(ubiquitous: flag, itemAt: url, destinationURL: destinationURL)
        } catch {
            throw Self.nsError(for: error, item: url)
        }
    }

    private static func nsError(for failure: UbiquitousMoveFailure, item url: URL) -> NSError {
        switch failure {
        case .ubiquity(let ubiquityError):
            return UbiquityErrorMapping.nsError(for: ubiquityError, item: url)
        case .coordination(let coordinationError, _):
            return CocoaErrorMapping.nsError(for: coordinationError, access: .writing(url))
        }
    }

    /// Whether the item at `url` is in the cloud: it exists and is inside a container. `false`
    /// when nothing is there.
    public func isUbiquitousItem(at url: URL) -> Bool {
        UbiquityAccount.shared.isUbiquitousItem(at: url)
    }

    /// Drops the local copy of a cloud item. Today's providers keep every item whole and have no
    /// placeholders, so this throws `NSFeatureUnsupportedError` (3328) for an item in a
    /// container rather than doing nothing silently; `NSUbiquitousFileUnavailableError` (4353)
    /// for an item outside containers; `NSFileNoSuchFileError` (4) when nothing is there.
    public func evictUbiquitousItem(at url: URL) throws {
        do {
            try UbiquityAccount.shared.evictUbiquitousItem(at: url)
        } catch {
            throw UbiquityErrorMapping.nsError(for: error, item: url)
        }
    }

    /// Starts downloading a cloud item and returns at once. Same errors as
    /// ``evictUbiquitousItem(at:)``: with today's providers every item is already whole, and the
    /// call says so with `NSFeatureUnsupportedError` (3328) — `try?` it where Apple's code does.
    public func startDownloadingUbiquitousItem(at url: URL) throws {
        do {
            try UbiquityAccount.shared.startDownloadingUbiquitousItem(at: url)
        } catch {
            throw UbiquityErrorMapping.nsError(for: error, item: url)
        }
    }
}

extension Notification.Name {
    /// Apple's `NSUbiquityIdentityDidChange`: the cloud configuration changed (signed in, signed
    /// out, another root). Posted to `NotificationCenter.default` on a private serial queue (not
    /// the main thread) once the process has read `FileManager.default.ubiquityIdentityToken`.
    public static let NSUbiquityIdentityDidChange = UbiquityAccount.identityDidChangeNotification
}

/// The process-long identity observation the token getter starts.
enum UbiquityCompatibility {
    private static let observation = Locked<UbiquityIdentityObservation?>(nil)

    static func startWatchingIdentity() {
        observation.withLock { current in
            if current == nil { current = UbiquityAccount.shared.beginObservingIdentityChanges() }
        }
    }
}
