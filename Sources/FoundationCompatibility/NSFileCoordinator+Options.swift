import Foundation
internal import FileCoordination

extension NSFileCoordinator {
    /// How a coordinated read behaves: Apple's `NSFileCoordinator.ReadingOptions`, with Apple's
    /// member names and bit values.
    public struct ReadingOptions: OptionSet, Sendable, Hashable {
        /// The option bits (the same as Apple's).
        public let rawValue: UInt
        /// Options from their bits; unknown bits are kept and ignored.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Do not ask presenters to save their unsaved changes first.
        public static let withoutChanges = ReadingOptions(rawValue: 1 << 0)
        /// If the item is a symbolic link, coordinate (and pass the accessor) the item it points to.
        public static let resolvesSymbolicLink = ReadingOptions(rawValue: 1 << 1)
        /// Only metadata is read: presenters are not asked to save. (Contents are always local on
        /// Linux, so there is no download to skip.)
        public static let immediatelyAvailableMetadataOnly = ReadingOptions(rawValue: 1 << 2)
        /// The accessor gets a temporary snapshot of the item (a ZIP archive for a directory),
        /// removed when the accessor returns.
        public static let forUploading = ReadingOptions(rawValue: 1 << 3)
    }

    /// How a coordinated write behaves: Apple's `NSFileCoordinator.WritingOptions`, with Apple's
    /// member names and bit values. Use at most one option per item.
    public struct WritingOptions: OptionSet, Sendable, Hashable {
        /// The option bits (the same as Apple's).
        public let rawValue: UInt
        /// Options from their bits; unknown bits are kept and ignored.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// The item will be deleted: presenters are asked to accommodate the deletion.
        public static let forDeleting = WritingOptions(rawValue: 1 << 0)
        /// The item will be moved: for a directory, everything inside it is locked too.
        public static let forMoving = WritingOptions(rawValue: 1 << 1)
        /// Presenters are asked to save first, so their changes can be merged.
        public static let forMerging = WritingOptions(rawValue: 1 << 2)
        /// The item will be replaced: treated like a deletion.
        public static let forReplacing = WritingOptions(rawValue: 1 << 3)
        /// Only metadata that does not depend on the contents changes: presenters are not asked to save.
        public static let contentIndependentMetadataOnly = WritingOptions(rawValue: 1 << 4)
    }
}

extension NSFileCoordinator.ReadingOptions {
    /// The same options for FileCoordination (the bits are identical).
    var native: Coordinator.ReadingOptions { Coordinator.ReadingOptions(rawValue: rawValue) }
}

extension NSFileCoordinator.WritingOptions {
    /// The same options for FileCoordination (the bits are identical).
    var native: Coordinator.WritingOptions { Coordinator.WritingOptions(rawValue: rawValue) }
}
