import Foundation

/// A directory document held in memory: named entries, each either a regular file's bytes or a
/// nested package. Apple's `FileWrapper` for directories, reduced to what documents need.
///
/// Entry names are validated when they are added (see ``isValidEntryName(_:)``), so a package
/// value can always be written to disk with its names unchanged. Reading and writing a package
/// on disk is in `FilePackage+Disk.swift`; replacing a package on disk atomically is
/// ``SafeSave/writePackage(_:to:creating:progress:)``.
///
/// A value type with copy-on-write storage: may be built on one thread and read or written on
/// another. Mutating one copy never affects another.
public struct FilePackage: Sendable, Equatable {
    /// One item of a package.
    public enum Entry: Sendable, Equatable {
        /// A regular file and its bytes.
        case file(Data)
        /// A folder, itself a package.
        case directory(FilePackage)

        /// The number of bytes of the file, or of all the files inside the folder.
        public var byteCount: Int {
            switch self {
            case .file(let data): return data.count
            case .directory(let package): return package.totalByteCount
            }
        }
    }

    /// Every entry, by name. Read-only: change entries with ``setFile(_:named:)``,
    /// ``setDirectory(_:named:)`` and ``removeEntry(named:)``, which validate names.
    public private(set) var entries: [String: Entry]

    /// Creates an empty package. Never fails.
    public init() { entries = [:] }

    /// Creates a package with the given entries.
    ///
    /// - Throws: ``DocumentError/invalidPackageEntryName(_:)`` for the first name (in sorted order)
    ///   that is not a valid entry name. Nested packages are not checked again: they were
    ///   validated when they were built.
    public init(entries: [String: Entry]) throws(DocumentError) {
        for name in entries.keys.sorted() where !Self.isValidEntryName(name) {
            throw .invalidPackageEntryName(name)
        }
        self.entries = entries
    }

    /// Creates a package from entries whose names are known to be valid (read from disk).
    init(validatedEntries entries: [String: Entry]) { self.entries = entries }

    /// The entry with this name, or `nil` if there is none.
    public subscript(name: String) -> Entry? { entries[name] }

    /// The names of the entries, sorted (by Unicode scalar values, like `ls` in the C locale).
    public var names: [String] { entries.keys.sorted() }

    /// The number of entries directly in this package (not counting nested ones).
    public var count: Int { entries.count }

    /// Whether the package has no entry.
    public var isEmpty: Bool { entries.isEmpty }

    /// The total size of all the files in the package, nested packages included.
    public var totalByteCount: Int { entries.values.reduce(0) { $0 + $1.byteCount } }

    /// Adds a regular file, or replaces the entry (file or folder) that has this name.
    ///
    /// - Throws: ``DocumentError/invalidPackageEntryName(_:)`` if `name` is not valid; the
    ///   package is then unchanged.
    public mutating func setFile(_ data: Data, named name: String) throws(DocumentError) {
        try Self.validate(name)
        entries[name] = .file(data)
    }

    /// Adds a folder, or replaces the entry (file or folder) that has this name.
    ///
    /// - Throws: ``DocumentError/invalidPackageEntryName(_:)`` if `name` is not valid; the
    ///   package is then unchanged.
    public mutating func setDirectory(_ package: FilePackage, named name: String) throws(DocumentError) {
        try Self.validate(name)
        entries[name] = .directory(package)
    }

    /// Removes the entry with this name and returns it, or returns `nil` if there was none.
    /// Never fails.
    @discardableResult
    public mutating func removeEntry(named name: String) -> Entry? {
        entries.removeValue(forKey: name)
    }

    /// Whether `name` can name an entry: not empty, not `"."` or `".."`, and without `"/"` or NUL.
    /// Names longer than the file system allows (255 bytes on most) are accepted here and fail
    /// when written.
    public static func isValidEntryName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.utf8.contains(where: { $0 == 0x2F || $0 == 0 })
    }

    static func validate(_ name: String) throws(DocumentError) {
        guard isValidEntryName(name) else { throw .invalidPackageEntryName(name) }
    }
}
