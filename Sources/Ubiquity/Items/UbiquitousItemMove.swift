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
        case .coordination(let error, let source): return .coordinationFailed(path: source.path, reason: error.description)
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
    /// (`renameat2(RENAME_NOREPLACE)`; across file systems, copied then removed) and
    /// `item(at:didMoveTo:)` tells presenters: each gets `presentedItemDidMove(to:)`, an open
    /// `CloudDocument`'s `fileURL` becomes `destinationURL`.
    ///
    /// Rules (Apple's): for `true`, `destinationURL` must be inside a container (make it from
    /// ``url(forUbiquityContainerIdentifier:)``, usually in its `Documents` folder); for `false`,
    /// `url` must be in a container and `destinationURL` outside every one. `destinationURL`
    /// names the item itself (not the folder to put it in), and its folder must exist.
    ///
    /// **Threading:** blocks the calling thread until the coordination is granted, which waits
    /// for presenters to relinquish the item: as with Apple's, do not call it on the main thread
    /// or main actor (a presenter answering there would deadlock) — use the `async` overload.
    ///
    /// - Throws: `.notSignedIn` and the configuration errors; `.itemNotFound` when nothing is at
    ///   `url`; `.itemNotInContainer` (`false` with `url` outside containers);
    ///   `.destinationNotInContainer` / `.destinationInContainer` for a destination on the wrong
    ///   side; `.destinationExists` when something already has that name (nothing is replaced);
    ///   `.coordinationFailed` when the coordination was refused or cancelled; `.moveFailed` with
    ///   the errno of a rename or copy that failed. After any error the item is where it was —
    ///   except a folder moved across file systems whose original could not be removed entirely
    ///   after the copy: then `.moveFailed` names the removal's errno, the whole copy is at
    ///   `destinationURL` and what could not be removed is left at `url`.
    public func setUbiquitous(_ flag: Bool, itemAt url: URL, destinationURL: URL) throws(UbiquityError) {
        do {
            try moveItem(ubiquitous: flag, itemAt: url, destinationURL: destinationURL)
        } catch {
            throw error.ubiquityError
        }
    }

    /// ``setUbiquitous(_:itemAt:destinationURL:)`` without blocking: the calling task suspends
    /// while the coordination waits (on a thread of its own); the move runs there. Cancelling the
    /// task while it waits ends it with `.coordinationFailed` and nothing moved. Same errors.
    public func setUbiquitous(_ flag: Bool, itemAt url: URL, destinationURL: URL) async throws(UbiquityError) {
        let (source, destination): (URL, URL)
        do {
            (source, destination) = try validateMove(ubiquitous: flag, itemAt: url, destinationURL: destinationURL)
        } catch {
            throw error.ubiquityError
        }
        let coordinator = Coordinator()
        let intents = [FileAccessIntent.writingIntent(with: source, options: .forMoving),
                       FileAccessIntent.writingIntent(with: destination, options: .forReplacing)]
        do {
            try await coordinator.coordinate(with: intents) { (granted: [FileAccessIntent]) throws -> Void in
                try Self.performMove(from: granted[0].url, to: granted[1].url, coordinator: coordinator)
            }
        } catch let failure as UbiquitousMoveFailure {
            throw failure.ubiquityError
        } catch let coordination as CoordinationError {
            throw UbiquitousMoveFailure.coordination(coordination, source: source).ubiquityError
        } catch {
            throw .coordinationFailed(path: source.path, reason: "\(error)")
        }
    }

    /// The synchronous move, with the coordination failure kept for Cocoa's mapping.
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

    /// Inside the coordinated write: renames without replacing (copies then removes across file
    /// systems) and tells presenters.
    static func performMove(from source: URL, to destination: URL, coordinator: Coordinator) throws(UbiquitousMoveFailure) {
        let from = PathBytes.path(of: source), to = PathBytes.path(of: destination)
        switch RenameAt2.rename(from, to: to, flag: .noReplace) {
        case .success:
            break
        case .failure(let error) where error == .fileExists:
            throw .ubiquity(.destinationExists(path: destination.path))
        case .failure(let error) where RenameAt2.isUnsupported(error):
            // The check and the rename are both under the coordinated write of the destination.
            guard !itemExists(destination) else { throw .ubiquity(.destinationExists(path: destination.path)) }
            if case .failure(let error) = PathBytes.withCString(from, { a in PathBytes.withCString(to) { b in valueOrErrno { rename(a, b) } } }) {
                if error.rawValue == EXDEV { try copyThenRemove(from, to) } else {
                    throw .ubiquity(.moveFailed(source: from, destination: to, errno: error.rawValue))
                }
            }
        case .failure(let error) where error.rawValue == EXDEV:
            try copyThenRemove(from, to)
        case .failure(let error):
            throw .ubiquity(.moveFailed(source: from, destination: to, errno: error.rawValue))
        }
        coordinator.item(at: source, didMoveTo: destination)
    }

    /// A move across file systems: copy (the destination name is checked free just before, under
    /// the coordinated write), then remove the original; a failed copy leaves nothing behind. An
    /// item that took the destination's name meanwhile is never replaced nor removed.
    private static func copyThenRemove(_ from: String, _ to: String) throws(UbiquitousMoveFailure) {
        // `renameat2` answers EXDEV before it looks at the destination, so nothing checked it yet.
        guard !itemExists(PathBytes.fileURL(to)) else { throw .ubiquity(.destinationExists(path: PathBytes.display(to))) }
        do {
            try FileManager.default.copyItem(atPath: from, toPath: to)
        } catch {
            let code = posixCode(of: error)
            // EEXIST: the name was taken after the check — by someone else's item, which stays.
            if code == EEXIST || (error as? CocoaError)?.code == .fileWriteFileExists {
                throw .ubiquity(.destinationExists(path: PathBytes.display(to)))
            }
            try? FileManager.default.removeItem(atPath: to)
            throw .ubiquity(.moveFailed(source: from, destination: to, errno: code))
        }
        do {
            try FileManager.default.removeItem(atPath: from)
        } catch {
            // A file (or link) that cannot be removed — a read-only or immutable original — is still
            // whole where it was: take the copy back, so the item is in one place. A folder may have
            // lost part of its contents already, so its copy, the one whole item, stays.
            var info = stat()
            if PathBytes.withCString(from, { lstat($0, &info) }) == 0, info.st_mode & S_IFMT != S_IFDIR {
                try? FileManager.default.removeItem(atPath: to)
            }
            throw .ubiquity(.moveFailed(source: from, destination: to, errno: posixCode(of: error)))
        }
    }

    /// The errno under a FileManager error (corelibs puts an `NSPOSIXErrorDomain` error under
    /// `NSUnderlyingErrorKey`), else EIO.
    private static func posixCode(of error: any Error) -> Int32 {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey].flatMap { $0 as? any Error }.map { $0 as NSError }
        guard let underlying, underlying.domain == NSPOSIXErrorDomain else { return EIO }
        return Int32(truncatingIfNeeded: underlying.code)
    }

    /// Whether something (even a dangling link) is at `url`.
    static func itemExists(_ url: URL) -> Bool {
        var info = stat()
        return PathBytes.withCString(PathBytes.path(of: url)) { lstat($0, &info) } == 0
    }
}
