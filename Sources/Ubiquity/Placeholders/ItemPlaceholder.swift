import CloudDocuments
import Foundation
import SystemSupport

/// What stays on disk of an evicted item (issue 19, files on demand): a small hidden file beside
/// where the item was, `.NAME.clouddocs-placeholder`, that says what the item is — its real name,
/// size and dates, whether it is a package, and the server's tag of the copy it stands for.
///
/// The real name stays **empty** while the item is evicted: no empty or partial file an editor
/// could open and save over, and a program that knows nothing of this package sees only a hidden
/// file with another name. A program that creates a file under the real name meanwhile makes a
/// new local item; the sync agent then treats it as a local edit of the evicted one (uploaded if
/// the server still has the evicted copy, a conflict version if not). Apple's `.NAME.icloud`
/// placeholders follow the same idea.
///
/// The format is a UTF-8 JSON object of at most ``maximumSize`` bytes with a `format` number;
/// readers refuse formats newer than theirs (``UbiquityError/placeholderInvalid(path:reason:)``).
/// A placeholder is written once, atomically (temporary file, `fsync`, rename, `fsync` of the
/// folder), before the real item is removed, so a crash leaves the item, or the placeholder, or
/// both — never neither.
///
/// A value; reading and writing work on any thread.
public struct ItemPlaceholder: Codable, Sendable, Hashable {
    /// The format this release writes and the newest it reads.
    public static let currentFormat = 1
    /// The longest placeholder file read, in bytes (a placeholder is about 300).
    public static let maximumSize = 16 * 1024
    /// The end of every placeholder's name.
    public static let nameSuffix = ".clouddocs-placeholder"

    /// The placeholder's format number.
    public var format: Int
    /// The evicted item's name (its last path component).
    public var name: String
    /// The item's size in bytes when it was evicted (a package: the sum of its files).
    public var size: Int64
    /// The item's modification date when it was evicted.
    public var modificationDate: Date
    /// The item's creation (birth) date, when the file system knew it.
    public var creationDate: Date?
    /// Whether the item is a package document (a folder the user sees as one document).
    public var isPackage: Bool
    /// The server's tag (ETag) of the copy the placeholder stands for, when the provider knows it.
    public var remoteTag: String?

    /// A placeholder of the current format.
    public init(name: String, size: Int64, modificationDate: Date, creationDate: Date? = nil,
                isPackage: Bool = false, remoteTag: String? = nil) {
        self.format = Self.currentFormat
        self.name = name
        self.size = size
        self.modificationDate = modificationDate
        self.creationDate = creationDate
        self.isPackage = isPackage
        self.remoteTag = remoteTag
    }

    // MARK: Names

    /// The name of the placeholder of an item named `name`, or `nil` when it would not fit in a
    /// file name (255 bytes) — such an item cannot be evicted.
    public static func placeholderName(forItemNamed name: String) -> String? {
        let placeholder = "." + name + nameSuffix
        return placeholder.utf8.count <= 255 ? placeholder : nil
    }

    /// The real name of the item whose placeholder is named `name`, or `nil` when `name` is not a
    /// placeholder's.
    public static func itemName(forPlaceholderNamed name: String) -> String? {
        guard name.hasPrefix("."), name.hasSuffix(nameSuffix) else { return nil }
        let item = String(name.dropFirst().dropLast(nameSuffix.count))
        return item.isEmpty || item == "." || item == ".." || item.contains("/") ? nil : item
    }

    /// Whether `name` is a placeholder's name.
    public static func isPlaceholderName(_ name: String) -> Bool {
        itemName(forPlaceholderNamed: name) != nil
    }

    /// The placeholder's URL for the item at `url`, or `nil` when the name would be too long.
    public static func placeholderURL(forItemAt url: URL) -> URL? {
        let item = url.standardizedFileURL
        return placeholderName(forItemNamed: item.lastPathComponent).map {
            item.deletingLastPathComponent().appendingPathComponent($0, isDirectory: false)
        }
    }

    /// The URL of the item the placeholder at `url` stands for, or `nil` when `url` does not name
    /// a placeholder.
    public static func itemURL(forPlaceholderAt url: URL) -> URL? {
        let placeholder = url.standardizedFileURL
        return itemName(forPlaceholderNamed: placeholder.lastPathComponent).map {
            placeholder.deletingLastPathComponent().appendingPathComponent($0, isDirectory: false)
        }
    }

    // MARK: Reading and writing

    /// The placeholder of the item at `url`, or `nil` when the item has none.
    ///
    /// - Throws: ``UbiquityError/placeholderInvalid(path:reason:)`` when a placeholder is there but
    ///   is not a regular file, is too large, is not valid JSON of a known format, or names
    ///   another item.
    public static func read(forItemAt url: URL) throws(UbiquityError) -> ItemPlaceholder? {
        guard let placeholderURL = placeholderURL(forItemAt: url) else { return nil }
        guard (try? POSIX.linkStatus(SystemPath(fileURL: placeholderURL))) ?? nil != nil else { return nil }
        let placeholder = try read(at: placeholderURL)
        guard placeholder.name == url.standardizedFileURL.lastPathComponent else {
            throw .placeholderInvalid(path: placeholderURL.path, reason: "it names another item (\(placeholder.name))")
        }
        return placeholder
    }

    /// The placeholder in the file at `url`.
    ///
    /// - Throws: ``UbiquityError/placeholderInvalid(path:reason:)`` as ``read(forItemAt:)``.
    public static func read(at url: URL) throws(UbiquityError) -> ItemPlaceholder {
        let path = PathBytes.path(of: url)
        guard let data = readSmallRegularFile(atPath: path, limit: maximumSize) else {
            throw .placeholderInvalid(path: path, reason: "it is not a readable regular file of at most \(maximumSize) bytes")
        }
        return try decode(data, path: path)
    }

    /// Decodes a placeholder's bytes (`path` only names it in errors).
    static func decode(_ data: Data, path: String) throws(UbiquityError) -> ItemPlaceholder {
        struct Header: Decodable { var format: Int }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        guard let header = try? decoder.decode(Header.self, from: data) else {
            throw .placeholderInvalid(path: path, reason: "it is not a placeholder (no JSON object with a format number)")
        }
        guard header.format <= currentFormat, header.format >= 1 else {
            throw .placeholderInvalid(path: path, reason: "its format \(header.format) is newer than this release reads (\(currentFormat)); update CloudDocuments")
        }
        let placeholder: ItemPlaceholder
        do { placeholder = try decoder.decode(ItemPlaceholder.self, from: data) } catch {
            throw .placeholderInvalid(path: path, reason: "a field is missing or has the wrong type")
        }
        guard placeholder.size >= 0, placeholderName(forItemNamed: placeholder.name) != nil,
              itemName(forPlaceholderNamed: placeholderName(forItemNamed: placeholder.name) ?? "") == placeholder.name else {
            throw .placeholderInvalid(path: path, reason: "its name or size is not valid")
        }
        return placeholder
    }

    /// The placeholder's bytes.
    func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        // Encoding a struct of strings, numbers and dates cannot fail.
        return (try? encoder.encode(self)) ?? Data()
    }

    /// Writes this placeholder beside the item at `url` (durably, replacing an older placeholder);
    /// the item itself is not touched. Call it inside a coordinated write of the item.
    ///
    /// - Throws: ``UbiquityError/invalidName(name:reason:)`` when the placeholder's name would be
    ///   too long; ``UbiquityError/placeholderWriteFailed(path:errno:)`` when the file system
    ///   refuses (full, read-only): nothing is left under the placeholder's name then.
    public func write(besideItemAt url: URL) throws(UbiquityError) {
        guard let placeholderURL = Self.placeholderURL(forItemAt: url) else {
            throw .invalidName(name: name, reason: "the name is too long for a placeholder beside it (\(Self.nameSuffix) must fit in 255 bytes)")
        }
        do {
            try SafeSave.write(encoded(), to: placeholderURL, creating: false)
        } catch {
            throw .placeholderWriteFailed(path: placeholderURL.path, errno: error.errno ?? .ioError)
        }
        // The fast copy of the query's facts; without it readers decode the JSON.
        PlaceholderFacts(self).write(toPlaceholderAt: PathBytes.path(of: placeholderURL))
    }

    /// Removes the placeholder of the item at `url` (durably); nothing happens when there is none.
    ///
    /// - Throws: ``UbiquityError/removeFailed(path:errno:)`` when it cannot be removed.
    public static func remove(forItemAt url: URL) throws(UbiquityError) {
        guard let placeholderURL = placeholderURL(forItemAt: url) else { return }
        let path = SystemPath(fileURL: placeholderURL)
        do {
            try POSIX.unlink(path)
        } catch {
            if error.errno == .noSuchFileOrDirectory { return }
            throw .removeFailed(path: path.display, errno: error.errno)
        }
        _ = try? POSIX.syncDirectory(SystemPath(fileURL: placeholderURL.deletingLastPathComponent()))
    }
}
