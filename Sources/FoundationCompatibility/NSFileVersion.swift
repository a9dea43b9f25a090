import Foundation
internal import CloudDocuments
internal import FileCoordination

/// A version of a file or folder — its current contents, an earlier version kept aside, or a
/// conflict version: Apple's `NSFileVersion`, with Apple's names and Swift shapes, for Linux. It is
/// a thin layer over CloudDocuments' `FileVersion`; the model, the version store and the guarantees
/// are in Docs/Versions.md.
///
/// ```swift
/// for conflict in NSFileVersion.unresolvedConflictVersionsOfItem(at: url) ?? [] {
///     conflict.isResolved = true
/// }
/// try NSFileVersion.removeOtherVersionsOfItem(at: url)
/// ```
///
/// ## Errors
/// As on Apple platforms, the queries return `nil` when they fail, and the changing calls throw an
/// `NSError` in `NSCocoaErrorDomain` (codes in Docs/FoundationCompatibility.md, "NSFileVersion"),
/// with the item's URL and path in its user info and the `FileVersionError` under
/// `NSUnderlyingErrorKey`. The setters of ``isResolved`` and ``isDiscardable`` cannot throw (as on
/// Apple platforms): a failure leaves the value as it was and is written as one line on standard
/// error (`CloudDocuments: …`), the way Apple's frameworks log theirs.
///
/// ## Threading
/// Every member may be used from any thread. Every change runs inside a coordinated write of the
/// item (it waits for other coordinated readers and writers of it, in any process); the queries do
/// not coordinate. Called from inside the accessor of a coordinated access of the item — Apple's
/// recipe: "call this method from a block passed to a file coordinator", with any writing options,
/// `.forDeleting` included — a change runs inside that access and reuses its lock instead of
/// waiting for it. Nothing calls back.
///
/// ## In version messages
/// The `NSFileVersion` an ``NSFilePresenter`` receives in `presentedItemDidGain(_:)`,
/// `presentedItemDidLose(_:)` or `presentedItemDidResolveConflict(_:)` is looked up in the store
/// when the message is delivered. A version no longer there — always so for `presentedItemDidLose(_:)`
/// — is described from the message alone: ``url``, ``persistentIdentifier`` and ``isConflict``
/// are the version's, ``localizedName`` is the item's name, ``localizedNameOfSavingComputer`` and
/// ``modificationDate`` are `nil`, ``isResolved`` is `true` (it is no unresolved conflict any
/// more), ``hasLocalContents`` is `false`, and ``remove()`` and ``replaceItem(at:options:)``
/// throw `NSFileNoSuchFileError`.
open class NSFileVersion: NSObject, @unchecked Sendable {
    // @unchecked Sendable: the only stored state is `source`, immutable: either a reference to a
    // Sendable `FileVersion` (whose two mutable flags are behind its own lock) or a Sendable
    // value. Subclasses that add state must protect it.
    let source: Source

    /// Where an instance's answers come from.
    enum Source: Sendable {
        /// A version found in the store, or the current version.
        case stored(FileVersion)
        /// A version a version message named that is not in the store (any more).
        case gone(FileVersionReference)
    }

    init(_ version: FileVersion) {
        source = .stored(version)
        super.init()
    }

    /// A version that is not in the store, described by the message that named it.
    init(gone reference: FileVersionReference) {
        source = .gone(reference)
        super.init()
    }

    /// The stored version, `nil` for one that is gone.
    private var version: FileVersion? {
        if case .stored(let version) = source { return version }
        return nil
    }

    /// Apple's options of ``addOfItem(at:withContentsOf:options:)``.
    public struct AddingOptions: OptionSet, Sendable {
        /// The option bits (OptionSet).
        public let rawValue: UInt
        /// Options from their bits; unknown bits are kept and ignored. Never fails.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Move the contents into the version store instead of copying them.
        public static let byMoving = AddingOptions(rawValue: 1 << 0)
    }

    /// Apple's options of ``replaceItem(at:options:)``.
    public struct ReplacingOptions: OptionSet, Sendable {
        /// The option bits (OptionSet).
        public let rawValue: UInt
        /// Options from their bits; unknown bits are kept and ignored. Never fails.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Move the version's contents to the item instead of copying them; the version is removed.
        public static let byMoving = ReplacingOptions(rawValue: 1 << 0)
    }

    // MARK: Finding versions

    /// The current version of the item at `url` (the item itself), or `nil` when there is no item.
    open class func currentVersionOfItem(at url: URL) -> NSFileVersion? {
        guard FileManager.default.fileExists(atPath: url.path),
              let version = try? FileVersion.currentVersionOfItem(at: url) else { return nil }
        return NSFileVersion(version)
    }

    /// Every version of the item at `url` except the current one, oldest first (conflict versions
    /// included, resolved or not); `nil` when the store cannot be read or there is no item.
    open class func otherVersionsOfItem(at url: URL) -> [NSFileVersion]? {
        (try? FileVersion.otherVersionsOfItem(at: url))?.map { NSFileVersion($0) }
    }

    /// The conflict versions of the item at `url` not resolved yet, oldest first; `nil` on failure.
    open class func unresolvedConflictVersionsOfItem(at url: URL) -> [NSFileVersion]? {
        (try? FileVersion.unresolvedConflictVersionsOfItem(at: url))?.map { NSFileVersion($0) }
    }

    /// The version of the item at `url` whose ``persistentIdentifier`` is `persistentIdentifier`
    /// (the object itself, or what `NSKeyedUnarchiver` gave back for it: an `NSString` or a
    /// `String`); `nil` when the item has no such version (any more) or the identifier is not one.
    open class func version(itemAt url: URL, forPersistentIdentifier persistentIdentifier: Any) -> NSFileVersion? {
        let text: String
        switch persistentIdentifier {
        case let string as String: text = string
        case let string as NSString: text = string as String
        default: return nil
        }
        guard let version = try? FileVersion.version(itemAt: url, forPersistentIdentifier: .init(rawValue: text)) else {
            return nil
        }
        return NSFileVersion(version)
    }

    /// Versions stored elsewhere (iCloud on Apple platforms). There is no such place here: the
    /// handler is called at once, on the calling thread, with an empty array.
    open class func getNonlocalVersionsOfItem(at url: URL,
                                              completionHandler: @escaping @Sendable ([NSFileVersion]?, (any Error)?) -> Void) {
        completionHandler([], nil)
    }

    // MARK: Adding and removing versions

    /// Adds the file or folder at `contentsURL` as a new version of the item at `url`, inside a
    /// coordinated write of the item, and returns it. With `.byMoving` the contents are moved into
    /// the store. Throws an `NSError` (Cocoa's domain) when nothing was added.
    open class func addOfItem(at url: URL, withContentsOf contentsURL: URL,
                              options: NSFileVersion.AddingOptions = []) throws -> NSFileVersion {
        do {
            let added = try FileVersion.addOfItem(at: url, withContentsOf: contentsURL,
                                                  options: options.contains(.byMoving) ? .byMoving : [])
            return NSFileVersion(added)
        } catch {
            throw FileVersionErrorMapping.nsError(for: error, item: url)
        }
    }

    /// A new empty folder where you can write a new version's contents, then add them with
    /// `.byMoving`. Apple's method cannot fail; when the version store cannot make the folder,
    /// a new folder in the system's temporary folder is returned instead (adding from it then
    /// copies across file systems), and if even that fails, the system's temporary folder itself.
    open class func temporaryDirectoryURLForNewVersionOfItem(at url: URL) -> URL {
        if let folder = try? FileVersion.temporaryDirectoryURLForNewVersionOfItem(at: url) { return folder }
        let fallback = FileManager.default.temporaryDirectory
            .appendingPathComponent("clouddocuments-version-\(UUID().uuidString)", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: fallback, withIntermediateDirectories: true)
            return fallback
        } catch {
            return FileManager.default.temporaryDirectory
        }
    }

    /// Removes every other version of the item at `url` (conflict versions too, and the conflict
    /// copies sync tools left beside it), inside a coordinated write of the item — yours, when
    /// called from the block of your `NSFileCoordinator`'s write of the item, as Apple advises. The
    /// item itself is untouched. Throws an `NSError`.
    open class func removeOtherVersionsOfItem(at url: URL) throws {
        do { try FileVersion.removeOtherVersionsOfItem(at: url) } catch {
            throw FileVersionErrorMapping.nsError(for: error, item: url)
        }
    }

    // MARK: The version

    /// Where the version's contents are: the item for the current version, a file or folder in
    /// the version store otherwise. Read it; do not change it.
    open var url: URL {
        switch source {
        case .stored(let version): return version.url
        case .gone(let reference): return reference.url
        }
    }

    /// The item's name when the version was made (for a version that is gone: the item's name).
    open var localizedName: String? {
        switch source {
        case .stored(let version): return version.localizedName
        case .gone(let reference): return reference.itemURL.lastPathComponent
        }
    }

    /// The host name of the computer that made the version (or, for a sync tool's conflict copy,
    /// the device or user its name carries); `nil` for the current version and one that is gone.
    open var localizedNameOfSavingComputer: String? { version?.localizedNameOfSavingComputer }

    /// The person who made the version: not known here, always `nil`.
    open var originatorNameComponents: PersonNameComponents? { nil }

    /// When the version's contents were last modified; `nil` for a version that is gone.
    open var modificationDate: Date? { version?.modificationDate }

    /// The version's identity, stable across processes and restarts: an `NSString` you may
    /// archive, and later hand to ``version(itemAt:forPersistentIdentifier:)``.
    open var persistentIdentifier: any NSCoding { NSString(string: identifierText) }

    /// The text of ``persistentIdentifier``.
    var identifierText: String {
        switch source {
        case .stored(let version): return version.persistentIdentifier.rawValue
        case .gone(let reference): return reference.persistentIdentifier
        }
    }

    /// Whether this is a conflict version (stays `true` once resolved).
    open var isConflict: Bool {
        switch source {
        case .stored(let version): return version.isConflict
        case .gone(let reference): return reference.isConflict
        }
    }

    /// `false` only for an unresolved conflict version. Setting `true` resolves it, durably and
    /// inside a coordinated write (the caller's, when set from inside one); it can never go back to
    /// `false`. A failure leaves it `false` and is written as one line on standard error.
    open var isResolved: Bool {
        get { version?.isResolved ?? true }
        set { version?.isResolved = newValue }
    }

    /// Whether the store may drop this version first when it needs room. A failure to record a
    /// change leaves the value as it was and is written as one line on standard error.
    open var isDiscardable: Bool {
        get { version?.isDiscardable ?? false }
        set { version?.isDiscardable = newValue }
    }

    /// Whether the version's contents are on this computer (`false` once it was removed).
    open var hasLocalContents: Bool { version?.hasLocalContents ?? false }

    /// Whether a thumbnail is stored with the version: never here.
    open var hasThumbnail: Bool { false }

    /// Puts this version's contents at `url` (usually the item, to restore it), atomically and
    /// inside a coordinated write, and returns where they now are. With `.byMoving` the version's
    /// contents are moved (and the version removed). Throws an `NSError`; then `url` is untouched.
    open func replaceItem(at url: URL, options: NSFileVersion.ReplacingOptions = []) throws -> URL {
        guard let version else {
            throw FileVersionErrorMapping.nsError(for: .versionNotFound(self.url), item: url)
        }
        do {
            return try version.replaceItem(at: url, options: options.contains(.byMoving) ? .byMoving : [])
        } catch {
            throw FileVersionErrorMapping.nsError(for: error, item: url)
        }
    }

    /// Removes this version from the version store, inside a coordinated write of its item.
    /// Throws an `NSError`: `NSFeatureUnsupportedError` for the current version,
    /// `NSFileNoSuchFileError` when it is gone already.
    open func remove() throws {
        guard let version else {
            throw FileVersionErrorMapping.nsError(for: .versionNotFound(url), item: url)
        }
        do { try version.remove() } catch {
            throw FileVersionErrorMapping.nsError(for: error, item: version.url)
        }
    }

    open override var description: String {
        let kind = isConflict ? (isResolved ? " resolved conflict" : " conflict") : ""
        return "<NSFileVersion \(identifierText) of “\(localizedName ?? "")”\(kind)\(version == nil ? ", gone" : "")>"
    }
}
