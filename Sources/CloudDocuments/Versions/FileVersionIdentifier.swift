import Foundation

extension FileVersion {
    /// A version's identity, stable across processes and restarts: hand it to
    /// ``FileVersion/version(itemAt:forPersistentIdentifier:)`` to get the version back. Encodes as
    /// a single JSON string (Apple's `persistentIdentifier` is an opaque `NSCoding` object).
    public struct PersistentIdentifier: Hashable, Sendable, Codable, CustomStringConvertible {
        /// The identifier's text: a UUID for a stored version, `"current"` for the current version.
        public let rawValue: String

        /// An identifier from its text (as obtained from ``rawValue``).
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The identifier of the current version of any item.
        public static let current = PersistentIdentifier(rawValue: "current")

        /// Decodes the identifier from a single string. Throws `DecodingError` when it is not one.
        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(String.self)
        }

        /// Encodes the identifier as a single string; throws only what `encoder` throws.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }

        /// The identifier's text, as stored.
        public var description: String { rawValue }

        /// Whether `rawValue` could name a stored version (a UUID: no path separators or dots, so
        /// it is safe as a file name in the store).
        var isStoredVersionName: Bool {
            UUID(uuidString: rawValue) != nil
        }
    }

    /// How ``FileVersion/addOfItem(at:withContentsOf:options:)`` takes the contents.
    public struct AddingOptions: OptionSet, Sendable, Hashable {
        /// The option bits (OptionSet).
        public let rawValue: UInt
        /// Options from their bits; unknown bits are kept and ignored. Never fails.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Move the contents into the version store instead of copying them (a rename when they
        /// are on the store's file system, e.g. in
        /// ``FileVersion/temporaryDirectoryURLForNewVersionOfItem(at:)``). The source is gone afterwards.
        public static let byMoving = AddingOptions(rawValue: 1 << 0)
    }

    /// How ``FileVersion/replaceItem(at:options:)`` puts the version's contents in place.
    public struct ReplacingOptions: OptionSet, Sendable, Hashable {
        /// The option bits (OptionSet).
        public let rawValue: UInt
        /// Options from their bits; unknown bits are kept and ignored. Never fails.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Move the version's contents to the item instead of copying them; the version is removed
        /// from the store (its ``FileVersion/hasLocalContents`` becomes `false`).
        public static let byMoving = ReplacingOptions(rawValue: 1 << 0)
    }
}
