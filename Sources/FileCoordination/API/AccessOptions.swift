extension Coordinator {
    /// How a coordinated read behaves (Apple's `NSFileCoordinator.ReadingOptions`).
    public struct ReadingOptions: OptionSet, Sendable, Hashable {
        /// The option bits.
        public let rawValue: UInt
        /// Options from their bits (unknown bits are kept and ignored).
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Do not ask presenters to save their unsaved changes first.
        public static let withoutChanges = ReadingOptions(rawValue: 1 << 0)
        /// If the item is a symbolic link, the accessor receives the URL of the item it points to,
        /// and that item is the one coordinated.
        public static let resolvesSymbolicLink = ReadingOptions(rawValue: 1 << 1)
        /// Only metadata is read: presenters are not asked to save. (There is no download to
        /// skip on Linux; contents are always local.)
        public static let immediatelyAvailableMetadataOnly = ReadingOptions(rawValue: 1 << 2)
        /// The accessor receives a temporary snapshot of the item (a ZIP archive for directories),
        /// removed when the accessor returns; the lock on the original is released as soon as the
        /// snapshot is made.
        public static let forUploading = ReadingOptions(rawValue: 1 << 3)
    }

    /// How a coordinated write behaves (Apple's `NSFileCoordinator.WritingOptions`).
    /// Use at most one option per write.
    public struct WritingOptions: OptionSet, Sendable, Hashable {
        /// The option bits.
        public let rawValue: UInt
        /// Options from their bits (unknown bits are kept and ignored).
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// The item will be deleted: presenters are asked to accommodate the deletion; for a
        /// directory, everything inside it is locked too.
        public static let forDeleting = WritingOptions(rawValue: 1 << 0)
        /// The item will be moved: for a directory, everything inside it is locked too.
        public static let forMoving = WritingOptions(rawValue: 1 << 1)
        /// Presenters are asked to save first, so their changes can be merged.
        public static let forMerging = WritingOptions(rawValue: 1 << 2)
        /// The item will be replaced: treated like a deletion.
        public static let forReplacing = WritingOptions(rawValue: 1 << 3)
        /// Only metadata that does not depend on the contents changes: presenters are not asked
        /// to save.
        public static let contentIndependentMetadataOnly = WritingOptions(rawValue: 1 << 4)
        /// The item's local copy will be evicted (files on demand — for sync providers such as the
        /// agent): its presenters, and for a folder or package those of everything inside, are
        /// asked ``FilePresenter/accommodatePresentedItemEviction(completionHandler:)`` before the
        /// accessor runs; one refusal fails the access with ``CoordinationError/presenterFailed(_:)``.
        /// Locks like `.forDeleting` (a directory: everything inside).
        public static let forEvicting = WritingOptions(rawValue: 1 << 5)
    }
}
