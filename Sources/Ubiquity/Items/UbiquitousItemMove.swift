import Foundation
import FileCoordination
import Glibc
import SystemSupport

/// Why a move into or out of the cloud failed, before it becomes a ``UbiquityError`` (the
/// Swift-native API) or an `NSError` (FoundationCompatibility, which maps the coordination
/// failure with Cocoa's codes for coordination).
package enum UbiquitousMoveFailure: Error {
    case ubiquity(UbiquityError)
    case coordination(CoordinationError, source: URL)

    /// The Swift-native form.
    package var ubiquityError: UbiquityError {
        switch self {
        case .ubiquity(let error): return error
        case .coordination(let error, let source): return .coordinationFailed(path: source.path, underlying: error)
        }
    }
}

extension UbiquityAccount {
    /// Apple's `FileManager.setUbiquitous(_:itemAt:destinationURL:)`: moves the item at `url` into
    /// a container (`flag == true`) or out of every container (`false`) in one coordinated move,
    /// so that presenters and open documents — in this process and in others — follow it.
    ///
    /// The move is a coordinated write of `url` with `.forMoving` and of `destinationURL` with
    /// `.forReplacing`; inside it the item is renamed without replacing anything
    /// (`renameat2(RENAME_NOREPLACE)`) and `item(at:didMoveTo:)` tells presenters: each gets
    /// `presentedItemDidMove(to:)`, an open `CloudDocument`'s `fileURL` becomes `destinationURL`.
    /// Across file systems the item is copied under a hidden temporary name beside the
    /// destination, every file and folder of it flushed (`fsync`), renamed into place, and only
    /// then is the original removed: a move that is killed leaves the original whole and nothing
    /// under the final name, and the next move to that destination removes its leftover.
    ///
    /// Rules (Apple's): for `true`, `destinationURL` must be inside a container (make it from
    /// ``url(forUbiquityContainerIdentifier:)``, usually in its `Documents` folder); for `false`,
    /// `url` must be in a container and `destinationURL` outside every one. `destinationURL`
    /// names the item itself (not the folder to put it in; a trailing `/` is ignored), and its
    /// folder must exist.
    ///
    /// **Threading:** the calling task suspends while the coordination waits for presenters to
    /// relinquish the item; the wait and the move run on a thread of their own, so any actor
    /// (the main actor included) may call it. Cancelling the task while it waits ends it with
    /// `.coordinationFailed` and nothing moved; once the move has begun it runs to the end.
    ///
    /// - Throws: `.notSignedIn` and the configuration errors; `.itemNotFound` when nothing is at
    ///   `url`; `.itemNotInContainer` (`false` with `url` outside containers);
    ///   `.destinationNotInContainer` / `.destinationInContainer` for a destination on the wrong
    ///   side; `.destinationExists` when something already has that name (nothing is replaced);
    ///   `.coordinationFailed` when the coordination was refused or cancelled; `.moveFailed` with
    ///   the errno of a rename or copy that failed (ENOSPC when the destination is full). After
    ///   any error the item is where it was and nothing is left at `destinationURL` — except a
    ///   folder moved across file systems whose original could not be removed entirely after the
    ///   copy: then `.moveFailed` names the removal's errno, the whole copy is at
    ///   `destinationURL` and what could not be removed is left at `url`.
    public func setUbiquitous(_ flag: Bool, itemAt url: URL, destinationURL: URL) async throws(UbiquityError) {
        do {
            try await moveItem(ubiquitous: flag, itemAt: url, destinationURL: destinationURL)
        } catch {
            throw error.ubiquityError
        }
    }

    /// ``setUbiquitous(_:itemAt:destinationURL:)``, blocking the calling thread until the move is
    /// done: for threads of your own and dispatch queues that may wait. Same move, same errors.
    ///
    /// **Threading:** never on the main thread or main actor — a presenter answering there would
    /// deadlock — and unavailable from asynchronous contexts (a task would block a thread of the
    /// cooperative pool): `await` ``setUbiquitous(_:itemAt:destinationURL:)`` there.
    @available(*, noasync, message: "it blocks while presenters answer: use `await setUbiquitous(_:itemAt:destinationURL:)`")
    public func setUbiquitousBlocking(_ flag: Bool, itemAt url: URL, destinationURL: URL) throws(UbiquityError) {
        do {
            try moveItem(ubiquitous: flag, itemAt: url, destinationURL: destinationURL)
        } catch {
            throw error.ubiquityError
        }
    }

    /// The blocking move, with the coordination failure kept for Cocoa's mapping.
    @available(*, noasync, message: "it blocks while presenters answer: use the async moveItem")
    package func moveItem(ubiquitous flag: Bool, itemAt url: URL, destinationURL: URL) throws(UbiquitousMoveFailure) {
        let (source, destination) = try validateMove(ubiquitous: flag, itemAt: url, destinationURL: destinationURL)
        let coordinator = Coordinator()
        do {
            try coordinator.coordinate(writingItemAt: source, options: .forMoving,
                                       writingItemAt: destination, options: .forReplacing) { from, to in
                try Self.performMove(from: from, to: to, coordinator: coordinator)
            }
        } catch let failure as UbiquitousMoveFailure {
            throw failure
        } catch let coordination as CoordinationError {
            throw .coordination(coordination, source: source)
        } catch {
            throw .coordination(.invalidRequest("\(error)"), source: source)
        }
    }

    /// The move without blocking (the coordination waits on a thread of its own), with the
    /// coordination failure kept for Cocoa's mapping.
    package func moveItem(ubiquitous flag: Bool, itemAt url: URL, destinationURL: URL) async throws(UbiquitousMoveFailure) {
        let (source, destination) = try validateMove(ubiquitous: flag, itemAt: url, destinationURL: destinationURL)
        let coordinator = Coordinator()
        let intents = [FileAccessIntent.writingIntent(with: source, options: .forMoving),
                       FileAccessIntent.writingIntent(with: destination, options: .forReplacing)]
        do {
            try await coordinator.coordinate(with: intents) { (granted: [FileAccessIntent]) throws -> Void in
                try Self.performMove(from: granted[0].url, to: granted[1].url, coordinator: coordinator)
            }
        } catch let failure as UbiquitousMoveFailure {
            throw failure
        } catch let coordination as CoordinationError {
            throw .coordination(coordination, source: source)
        } catch {
            throw .coordination(.invalidRequest("\(error)"), source: source)
        }
    }

    /// Checks Apple's rules before coordinating; returns the standardized source and destination.
    private func validateMove(ubiquitous flag: Bool, itemAt url: URL, destinationURL: URL)
        throws(UbiquitousMoveFailure) -> (URL, URL) {
        let configuration: UbiquityConfiguration
        do { configuration = try self.configuration() } catch { throw .ubiquity(error) }
        guard let root = configuration.root else { throw .ubiquity(.notSignedIn) }
        let source = url.standardizedFileURL, destination = destinationURL.standardizedFileURL
        guard Self.itemExists(source) else { throw .ubiquity(.itemNotFound(path: source.path)) }
        if flag {
            guard containerOfItem(at: destination) != nil else { throw .ubiquity(.destinationNotInContainer(path: destination.path)) }
        } else {
            guard containerOfItem(at: source) != nil else { throw .ubiquity(.itemNotInContainer(path: source.path)) }
            guard !UbiquityContainer.path(destination.path, isInside: root.standardizedFileURL.path),
                  containerOfItem(at: destination) == nil else {
                throw .ubiquity(.destinationInContainer(path: destination.path))
            }
        }
        if source.path == destination.path || Self.itemExists(destination) {
            throw .ubiquity(.destinationExists(path: destination.path))
        }
        return (source, destination)
    }

    /// Inside the coordinated write: renames without replacing (``CrossFileSystemMove`` across
    /// file systems) and tells presenters. Paths lose any trailing `/`: the item is named the same
    /// either way.
    static func performMove(from source: URL, to destination: URL, coordinator: Coordinator) throws(UbiquitousMoveFailure) {
        let from = ItemTree.withoutTrailingSlashes(PathBytes.path(of: source))
        let to = ItemTree.withoutTrailingSlashes(PathBytes.path(of: destination))
        switch RenameAt2.rename(from, to: to, flag: .noReplace) {
        case .success:
            break
        case .failure(let error) where error == .fileExists:
            throw .ubiquity(.destinationExists(path: destination.path))
        case .failure(let error) where RenameAt2.isUnsupported(error):
            // The check and the rename are both under the coordinated write of the destination.
            guard !itemExists(destination) else { throw .ubiquity(.destinationExists(path: destination.path)) }
            if case .failure(let error) = PathBytes.withCString(from, { a in PathBytes.withCString(to) { b in valueOrErrno { rename(a, b) } } }) {
                if error.rawValue == EXDEV { try CrossFileSystemMove.move(from, to: to) } else {
                    throw .ubiquity(.moveFailed(source: from, destination: to, errno: error))
                }
            }
        case .failure(let error) where error.rawValue == EXDEV:
            try CrossFileSystemMove.move(from, to: to)
        case .failure(let error):
            throw .ubiquity(.moveFailed(source: from, destination: to, errno: error))
        }
        coordinator.item(at: source, didMoveTo: destination)
    }

    /// Whether something (even a dangling link) is at `url`.
    static func itemExists(_ url: URL) -> Bool {
        var info = stat()
        return PathBytes.withCString(PathBytes.path(of: url)) { lstat($0, &info) } == 0
    }
}
