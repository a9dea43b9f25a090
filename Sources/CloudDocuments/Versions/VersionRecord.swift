import Foundation

/// What the version store keeps about one version, as the small JSON file `version.json` next to
/// its contents. Written to a temporary name, `fsync`ed and renamed into place, so a reader sees
/// the old record or the new one, never a mix.
struct VersionRecord: Codable, Sendable, Equatable {
    /// The version's identifier (a UUID string; also the name of its folder in the store).
    var id: String
    /// The item's name when the version was added (also the name of the contents in the store).
    var itemName: String
    /// The modification date of the contents when they were added.
    var modificationDate: Date
    /// When the version was added to the store (the order of the bounding policy).
    var addedDate: Date
    /// The host name of the computer that added it.
    var savingComputer: String?
    var isConflict: Bool
    var isResolved: Bool
    var isDiscardable: Bool
    /// The size of the contents in bytes (for the store's byte limit).
    var size: Int64

    /// Whether the bounding policy may drop this version: anything but an unresolved conflict.
    var isDroppable: Bool { !isConflict || isResolved }
}

/// What the store keeps about one item: the path where it was last seen. Lets a query find the
/// item's versions when its identity attribute is gone (a save that replaced the file by a new
/// one), and tells a copy (which carries the same attribute) from the original.
struct ItemRecord: Codable, Sendable, Equatable {
    var id: String
    var path: String
}
