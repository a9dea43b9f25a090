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
