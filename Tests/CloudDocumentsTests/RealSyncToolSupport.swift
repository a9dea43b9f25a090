import Foundation
import Testing
@testable import CloudDocuments

// Helpers shared by the tests that run real Syncthing and rclone (SyncthingConflictTests,
// RcloneBisyncConflictTests). The fixtures themselves are in Tests/TestSupport.

/// The sync tools' conflict copies of `original` in `folder`, by name (SyncConflictNaming), sorted
/// by name.
func conflictCopies(of original: String, in folder: URL) -> [SyncConflictCopy] {
    listing(folder).compactMap { SyncConflictNaming.conflictCopy(named: $0) }
        .filter { $0.originalName == original }
        .sorted { $0.name < $1.name }
}
