// Code written the way apps for Apple platforms handle versions and conflicts with NSFileVersion,
// compiled here unchanged. The only Linux-specific lines are the imports below.
import Foundation
#if canImport(FoundationCompatibility)
import FoundationCompatibility
#endif

/// What a document-based app does with versions: snapshots before risky edits, restoring one,
/// and the two usual conflict resolutions.
enum VersionKeeper {
    /// Keeps the contents as they are now as a version; returns its archived persistent identifier
    /// (what an app stores to find the version again after a restart).
    static func snapshot(_ url: URL) throws -> Data {
        let version = try NSFileVersion.addOfItem(at: url, withContentsOf: url, options: [])
        return try NSKeyedArchiver.archivedData(withRootObject: version.persistentIdentifier,
                                                requiringSecureCoding: true)
    }

    /// Restores the version whose archived identifier is `archived`; `false` when it is gone.
    static func restore(_ url: URL, from archived: Data) throws -> Bool {
        guard let identifier = try NSKeyedUnarchiver.unarchivedObject(ofClass: NSString.self, from: archived),
              let version = NSFileVersion.version(itemAt: url, forPersistentIdentifier: identifier) else {
            return false
        }
        _ = try version.replaceItem(at: url, options: [])
        return true
    }

    /// Adds `data` as a version written in the folder the system provides for it (no copy).
    static func addVersion(of url: URL, holding data: Data) throws -> NSFileVersion {
        let folder = NSFileVersion.temporaryDirectoryURLForNewVersionOfItem(at: url)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent(url.lastPathComponent)
        try data.write(to: file)
        return try NSFileVersion.addOfItem(at: url, withContentsOf: file, options: .byMoving)
    }

    /// "Keep this version": every conflict is marked resolved, then the other versions removed.
    static func keepCurrent(_ url: URL) throws {
        for conflict in NSFileVersion.unresolvedConflictVersionsOfItem(at: url) ?? [] {
            conflict.isResolved = true
        }
        try NSFileVersion.removeOtherVersionsOfItem(at: url)
    }

    /// "Newest wins": the newest of the current version and the conflicts becomes current.
    static func keepNewest(_ url: URL) throws {
        guard let current = NSFileVersion.currentVersionOfItem(at: url) else {
            throw CocoaError(.fileNoSuchFile)
        }
        let conflicts = NSFileVersion.unresolvedConflictVersionsOfItem(at: url) ?? []
        let date = { (version: NSFileVersion) in version.modificationDate ?? .distantPast }
        if let newest = conflicts.max(by: { date($0) < date($1) }), date(newest) > date(current) {
            _ = try newest.replaceItem(at: url, options: [])
        }
        for conflict in conflicts { conflict.isResolved = true }
        try NSFileVersion.removeOtherVersionsOfItem(at: url)
    }

    /// Deletes one version the Cocoa way, returning the error's domain and code if it fails.
    static func delete(_ version: NSFileVersion) -> (domain: String, code: Int)? {
        do {
            try version.remove()
            return nil
        } catch let error as NSError {
            return (error.domain, error.code)
        }
    }
}

/// A presenter that keeps a document's conflict badge up to date from the version messages, as an
/// app's document controller does: it records what it was told and about which version.
final class ConflictBadgeWatcher: NSObject, NSFilePresenter {
    /// One version message, as the app saw it.
    struct Message: Sendable, Equatable {
        let kind: String
        let url: URL
        let persistentIdentifier: String
        let isConflict: Bool
        let isResolved: Bool
        let savingComputer: String?
        let hasLocalContents: Bool
    }

    let presentedItemURL: URL?
    let presentedItemOperationQueue: OperationQueue = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return queue
    }()
    private let lock = NSLock()
    private var received: [Message] = []
    private var versionsTold: [NSFileVersion] = []
    /// Signalled after every message.
    let arrived = DispatchSemaphore(value: 0)

    init(url: URL) {
        presentedItemURL = url
        super.init()
    }

    /// The messages so far, oldest first.
    var messages: [Message] {
        lock.lock(); defer { lock.unlock() }
        return received
    }

    /// The `NSFileVersion` objects the messages carried, oldest first.
    var versions: [NSFileVersion] {
        lock.lock(); defer { lock.unlock() }
        return versionsTold
    }

    func presentedItemDidGain(_ version: NSFileVersion) { record("gain", version) }
    func presentedItemDidLose(_ version: NSFileVersion) { record("lose", version) }
    func presentedItemDidResolveConflict(_ version: NSFileVersion) { record("resolve", version) }

    private func record(_ kind: String, _ version: NSFileVersion) {
        let identifier = (version.persistentIdentifier as? NSString).map { String($0) } ?? "?"
        let message = Message(kind: kind, url: version.url, persistentIdentifier: identifier,
                              isConflict: version.isConflict, isResolved: version.isResolved,
                              savingComputer: version.localizedNameOfSavingComputer,
                              hasLocalContents: version.hasLocalContents)
        lock.lock()
        received.append(message)
        versionsTold.append(version)
        lock.unlock()
        arrived.signal()
    }
}
