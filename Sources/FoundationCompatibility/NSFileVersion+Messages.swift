import Foundation
internal import CloudDocuments
internal import FileCoordination

extension NSFileVersion {
    /// The `NSFileVersion` for a version message (`presentedItemDidGain(_:)` and the others), whose
    /// FileCoordination form names the version by a `FileVersionReference`.
    ///
    /// The version is looked up in `scope`'s store by the item's URL as the message gives it, then,
    /// if the item has moved since, by `presentedItemURL`. When it is in neither — after a removal,
    /// or when it changed again before the message was delivered — the instance is described from
    /// the reference alone (see "In version messages" on ``NSFileVersion``). Never fails; reads
    /// the store on the calling thread (the presenter's queue).
    static func named(by reference: FileVersionReference, presentedItemURL: URL?,
                      in scope: VersionStoreScope) -> NSFileVersion {
        let identifier = FileVersion.PersistentIdentifier(rawValue: reference.persistentIdentifier)
        var places = [reference.itemURL]
        if let presentedItemURL, presentedItemURL.standardizedFileURL != reference.itemURL.standardizedFileURL {
            places.append(presentedItemURL)
        }
        let found = scope.run {
            places.lazy.compactMap { try? FileVersion.version(itemAt: $0, forPersistentIdentifier: identifier) }.first
        }
        guard let found else { return NSFileVersion(gone: reference) }
        return NSFileVersion(found)
    }
}
