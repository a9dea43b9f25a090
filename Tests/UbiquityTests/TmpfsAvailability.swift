import Testing
import TestSupport

/// The cross-file-system and full-disk tests of this target need a tmpfs (``SmallTmpfs``).
enum TmpfsAvailability {
    static var isAvailable: Bool { SmallTmpfs.isAvailable }
    static let unavailableMessage = Comment(rawValue: SmallTmpfs.unavailableMessage)
}
