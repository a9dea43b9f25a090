import Foundation
import Glibc
import SystemSupport

/// Where and how other versions of items are kept: a per-user folder outside every synced or
/// document folder (so sync tools never copy it and the user never sees it), with one folder per
/// item and one folder per version. See Docs/Versions.md, "The version store".
///
/// Layout under ``root``:
///
///     items/<item id>/item.json                  the item's last known path (ItemRecord)
///     items/<item id>/<version id>.version/      one complete version:
///         version.json                           its metadata (VersionRecord)
///         data/<item name>                       its contents
///     items/<item id>/.tmp-<uuid>                a version being added (locked by its writer)
///     items/<item id>/.trash-<uuid>              a version being removed
///     tmp/<uuid>/                                temporaryDirectoryURLForNewVersionOfItem(at:)
///     store.lock                                 serialises the store-wide byte-limit pass
///
/// A value type holding only configuration; every method may be called on any thread, and the
/// store's consistency between threads and processes comes from the file system (atomic
/// renames, `flock`) and from the coordinated write of the item around every change.
struct VersionStore: Sendable {
    /// The bounding policy (Docs/Versions.md).
    struct Limits: Sendable, Equatable {
        /// At most this many droppable versions (non-conflict or resolved) per item; beyond it the
        /// oldest are dropped when a version is added.
        var maximumVersionsPerItem: Int = 32
        /// At most this many bytes of version contents in the whole store; beyond it the oldest
        /// droppable versions of any item are dropped when a version is added.
        var maximumTotalBytes: Int64 = 2 << 30
    }

    /// The store's folder (a lossless path string).
    let root: String
    var limits: Limits

    init(root: String, limits: Limits = Limits()) {
        SyncToolRules.registerWithCoordination()  // every FileVersion call makes a store first (see its doc)
        self.root = root
        self.limits = limits
    }

    /// The environment variable that overrides the store's location (tests, sandboxes).
    static let environmentVariable = "CLOUDDOCUMENTS_VERSION_STORE"

    /// A store that this task (and the tasks it starts) uses instead of ``standard``: for tests.
    @TaskLocal static var override: VersionStore?

    /// The store every ``FileVersion`` call uses: ``override`` if set, else
    /// `$CLOUDDOCUMENTS_VERSION_STORE` if set and absolute, else
    /// `<home>/.local/share/clouddocuments/versions` with `<home>` the passwd home of the real user
    /// id (not `$HOME` or `$XDG_DATA_HOME`, so that every process of the user agrees on it).
    static var standard: VersionStore {
        if let override { return override }
        if let explicit = ProcessInfo.processInfo.environment[environmentVariable], explicit.hasPrefix("/") {
            return VersionStore(root: explicit)
        }
        return VersionStore(root: passwdHome() + "/.local/share/clouddocuments/versions")
    }

    /// The home folder of the real user id from the password database; `/tmp/clouddocuments-<uid>`
    /// when there is none (a container without an entry for the uid).
    static func passwdHome() -> String {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        let status = getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result)
        if status == 0, result != nil, let directory = entry.pw_dir {
            let home = String(cString: directory)
            if home.hasPrefix("/") { return home == "/" ? "" : home }
        }
        return "/tmp/clouddocuments-\(getuid())"
    }

    // MARK: Paths

    var itemsFolder: String { root + "/items" }
    var temporaryFolder: String { root + "/tmp" }
    func itemFolder(_ itemID: String) -> String { itemsFolder + "/" + itemID }
    func itemRecordPath(_ itemID: String) -> String { itemFolder(itemID) + "/item.json" }
    func versionFolder(_ itemID: String, _ versionID: String) -> String {
        itemFolder(itemID) + "/" + versionID + Self.versionSuffix
    }
    func contentsPath(_ itemID: String, _ record: VersionRecord) -> String {
        versionFolder(itemID, record.id) + "/data/" + record.itemName
    }

    static let versionSuffix = ".version"
    static let temporaryPrefix = ".tmp-"
    static let trashPrefix = ".trash-"

    /// Creates `path` and its missing parents with mode 0700 (the store is private to the user).
    func makeFolders(_ path: String) throws(FileVersionError) {
        var current = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            current += "/" + component
            do {
                if try POSIX.status(current) != nil { continue }
                try POSIX.makeDirectory(current, mode: 0o700)
            } catch {
                if error.code == EEXIST { continue }
                throw FileVersionError(error)
            }
        }
    }
}
