import CSystemShim
import Foundation
import Glibc
import SystemSupport

/// Temporary save files and folders (`.<name>.cdsave-<12 hex digits>`, see ``SavePaths``) whose
/// writer died: found and removed by later saves and opens of the same document, and only when
/// their writer is provably gone.
///
/// ## The protocol
/// - **The writer** locks its temporary item as soon as it has created it, and keeps the lock
///   until the item has been renamed into place (or removed after a failure): a temporary *file*
///   with an OFD write lock (`F_OFD_SETLKW`, `F_WRLCK`, whole file), a temporary *package folder*
///   with `flock(LOCK_EX)` on a descriptor of the folder (a folder cannot be opened for writing,
///   which an OFD write lock needs). Between creating the item and holding the lock, a reclaimer
///   may remove it: so after locking, the writer checks that the name still leads to its item, and
///   if not, creates it again under the same name.
/// - **A reclaimer** (every ``SafeSave`` save, and ``CloudDocument/open()``) lists the target's
///   folder, opens each item whose name is `.<name>.cdsave-<12 hex>` for the target's name, and
///   tries a *non-blocking* lock that conflicts with the writer's (`F_OFD_SETLK` `F_RDLCK` for a
///   file, `flock(LOCK_EX | LOCK_NB)` for a folder). It removes the item only when it gets that
///   lock and the name still leads to the item it locked, and removes it while holding the lock.
///
/// The kernel drops a process's OFD and `flock` locks when it dies, `kill -9` included: a
/// temporary item that can be locked has no live writer. Both kinds of lock belong to an open file
/// description, not to a process, so they also conflict between threads of one process: a save
/// never removes the temporary item of another save running in the same process.
///
/// Not reclaimed: `.<name>.cdold-…` items (the old package moved aside where `RENAME_EXCHANGE` is
/// missing; after a crash it may be the only copy of the old contents), items of other documents,
/// and items on file systems that refuse these locks (the reclaimer cannot lock them, so it
/// leaves them; the writer then writes unlocked). All processes writing a folder must use this
/// version of the library: an older writer does not lock its temporary files, so a reclaimer
/// would take them for strays.
///
/// Internal; every function may be called on any thread.
enum StrayTemporaryFiles {
    /// The marker of temporary save items in their names.
    static let marker = "cdsave"
    /// How many times a writer recreates its temporary item after a reclaimer removed it
    /// in the instant between creation and locking (each round needs a new, unlucky race).
    static let creationAttempts = 16

    // MARK: Reclaimer side

    /// Removes the temporary items of saves of `target` (a path whose final symbolic link, if
    /// any, is already resolved, as in ``SavePaths/target``) whose writers are gone. Best effort:
    /// an item that cannot be opened, locked or removed is left, and nothing is reported. Returns
    /// how many items it removed.
    ///
    /// Cost: one read of the folder's entries (`getdents`), plus an open, a lock attempt and a
    /// close for each temporary item of this target found.
    @discardableResult
    static func reclaim(besideTarget target: String) -> Int {
        guard let (folder, _) = split(target) else { return 0 }
        let directory = openFolder(folder)
        guard directory >= 0 else { return 0 }
        defer { _ = Glibc.close(directory) }
        return reclaim(besideTarget: target, inFolder: directory)
    }

    /// ``reclaim(besideTarget:)`` reading the folder through `directory`, a descriptor of the
    /// target's folder opened by the caller (read from its current position: open it anew).
    @discardableResult
    static func reclaim(besideTarget target: String, inFolder directory: Int32) -> Int {
        guard let (folder, name) = split(target) else { return 0 }
        return reclaim(folder: folder, name: name, inFolder: directory)
    }

    /// ``reclaim(besideTarget:inFolder:)`` with the target already split into its folder and the
    /// bytes of its name.
    private static func reclaim(folder: String, name: ArraySlice<UInt8>, inFolder directory: Int32) -> Int {
        guard let (candidates, entryCount) = temporaryEntries(inFolder: directory, forName: name) else { return 0 }
        var removed = 0
        for entry in candidates {
            if reclaimEntry(entry, in: directory, folder: folder) { removed += 1 }
        }
        remember(ScanRecord(time: .now, entryCount: entryCount), for: folder)
        return removed
    }

    /// A descriptor of `folder` for ``reclaim(besideTarget:inFolder:)`` (and for `fsync`), or -1.
    /// Reading the folder through it does not update the folder's access time where the process
    /// may ask for that (`O_NOATIME`: it owns the folder, or is root): a save has just changed the
    /// folder, so under `relatime` every look would otherwise write the folder's inode again.
    static func openFolder(_ folder: String) -> Int32 {
        PathBytes.withCString(folder) { path in
            let flags = O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC
            let descriptor = open(path, flags | CSHIM_O_NOATIME)
            if descriptor < 0 && errno == EPERM { return open(path, flags) }
            return descriptor
        }
    }

    /// ``reclaim(besideTarget:inFolder:)`` as saves call it. A folder of more than
    /// ``largeFolderEntries`` entries is scanned at most once per ``largeFolderInterval`` per
    /// folder and process (the scan costs about a microsecond per entry, which would otherwise be
    /// added to every save). A smaller one is scanned unless this process scanned it less than
    /// ``smallFolderInterval`` ago and the folder has not changed since this process's own last
    /// save there (``noteOwnChange(inFolder:descriptor:)``; one `fstat` of `directory` instead of
    /// reading the folder): a writer killed since then created its temporary item after that
    /// save, which changed the folder. ``CloudDocument/open()`` always scans.
    ///
    /// A stray the look cannot see — created between this process's scan and its own rename, or,
    /// on a kernel without fine-grained ("multigrain", Linux 6.13 and later) time stamps, within
    /// the same clock tick as its own last save — is removed by the first save after
    /// ``smallFolderInterval``, or by the next open.
    @discardableResult
    static func reclaimIfDue(besideTarget target: String, inFolder directory: Int32) -> Int {
        guard let (folder, name) = split(target) else { return 0 }
        if let last = scans.withLock({ $0[folder] }) {
            let elapsed = ContinuousClock.now - last.time
            if last.entryCount > largeFolderEntries && elapsed < largeFolderInterval { return 0 }
            if elapsed < smallFolderInterval, let stamp = last.stampAfterOwnChange, stamp == folderStamp(directory) {
                return 0
            }
        }
        return reclaim(folder: folder, name: name, inFolder: directory)
    }

    /// Records the status of `folder` (open as `directory`) just after this process changed it
    /// (a save's rename), so that ``reclaimIfDue(besideTarget:inFolder:)`` can tell whether anyone
    /// changed it since. Only after a scan of the folder by this process (else the next save
    /// scans anyway). The `fstat` also makes the kernel give the folder's next change a time
    /// stamp of its own (multigrain time stamps), so even a change within the same clock tick is
    /// seen. Any thread.
    static func noteOwnChange(inFolder folder: String, descriptor directory: Int32) {
        // No `fstat` for a folder this process never scanned (a large one, or forgotten).
        guard scans.withLock({ $0[folder] != nil }), let stamp = folderStamp(directory) else { return }
        scans.withLock { scans in scans[folder]?.stampAfterOwnChange = stamp }
    }

    /// The identity of the folder open as `directory` (device, inode, size, modification and
    /// change times), or `nil` when it cannot be examined.
    private static func folderStamp(_ directory: Int32) -> FileIdentity? {
        var info = stat()
        return fstat(directory, &info) == 0 ? FileIdentity(info) : nil
    }

    /// ``reclaimIfDue(besideTarget:inFolder:)`` opening the folder itself.
    @discardableResult
    static func reclaimIfDue(besideTarget target: String) -> Int {
        guard let (folder, _) = split(target) else { return 0 }
        let directory = openFolder(folder)
        guard directory >= 0 else { return 0 }
        defer { _ = Glibc.close(directory) }
        return reclaimIfDue(besideTarget: target, inFolder: directory)
    }

    /// The folder of an absolute `target` path and the bytes of its last component; `nil` when
    /// there is no component.
    private static func split(_ target: String) -> (folder: String, name: ArraySlice<UInt8>)? {
        let path = PathBytes.bytes(of: target)
        guard let slash = path.lastIndex(of: UInt8(ascii: "/")), slash + 1 < path.count else { return nil }
        return (slash == 0 ? "/" : PathBytes.string(fromBytes: path[..<slash]), path[(slash + 1)...])
    }

    /// Folders with more entries than this are scanned by saves at most once per
    /// ``largeFolderInterval``.
    static let largeFolderEntries = 128
    /// How often saves scan a large folder.
    static let largeFolderInterval: Duration = .seconds(10)
    /// How often saves scan a small folder that has not changed since this process's own last
    /// save there.
    static let smallFolderInterval: Duration = .seconds(1)
    /// How many folders' last scans are remembered (the oldest are forgotten beyond it).
    static let rememberedFolders = 64

    private struct ScanRecord {
        var time: ContinuousClock.Instant
        var entryCount: Int
        /// The folder's identity just after this process's last save there since the scan.
        var stampAfterOwnChange: FileIdentity? = nil
    }

    /// The last scan of each folder by this process, by folder path (as derived from the target).
    private static let scans = Locked<[String: ScanRecord]>([:])

    private static func remember(_ record: ScanRecord, for folder: String) {
        scans.withLock { scans in
            if scans[folder] == nil && scans.count >= rememberedFolders,
               let oldest = scans.min(by: { $0.value.time < $1.value.time })?.key {
                scans.removeValue(forKey: oldest)
            }
            scans[folder] = record
        }
    }

    /// ``reclaim(besideTarget:)`` for the item at `url`, with a final symbolic link resolved as a
    /// save would. Nothing happens for a URL a save would reject.
    @discardableResult
    static func reclaim(besideItemAt url: URL) -> Int {
        guard let paths = try? SavePaths(for: url) else { return 0 }
        return reclaim(besideTarget: paths.target)
    }

    /// The names (raw bytes, without the terminating NUL) of the entries of the folder open as
    /// `directory` that are temporary items of a save of `name` — `.` + name + `.cdsave-` + 12
    /// lowercase hex digits, or the same with the name shortened to keep the whole within 255
    /// bytes (``SavePaths``) — and the number of entries in the folder; `nil` when the folder
    /// cannot be read. Reads the whole folder before anything is removed.
    static func temporaryEntries(inFolder directory: Int32, forName name: ArraySlice<UInt8>) -> (names: [[UInt8]], entryCount: Int)? {
        var found: [[UInt8]] = []
        var entryCount = 0
        let suffixLength = marker.utf8.count + 2
        let complete = FolderEntryNames.forEach(inFolder: directory) { raw in
            entryCount += 1
            // Most entries are not ours: rule them out without copying the name.
            let length = raw.count
            guard length > 1 + suffixLength + 12, raw[0] == UInt8(ascii: "."),
                  raw[length - 12 - suffixLength] == UInt8(ascii: ".") else { return }
            let candidate = Array(raw)
            if isTemporaryName(candidate, forName: name) { found.append(candidate) }
        }
        return complete || !found.isEmpty ? (found, entryCount) : nil
    }

    /// Whether `entry` is a temporary item name of a save of `name` (see ``temporaryEntries(in:forName:)``).
    static func isTemporaryName(_ entry: [UInt8], forName name: ArraySlice<UInt8>) -> Bool {
        let suffix = Array(".\(marker)-".utf8)
        let hexDigits = 12
        guard entry.count > 1 + suffix.count + hexDigits, entry[0] == UInt8(ascii: ".") else { return false }
        let hexStart = entry.count - hexDigits
        let suffixStart = hexStart - suffix.count
        guard Array(entry[suffixStart..<hexStart]) == suffix,
              entry[hexStart...].allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return false }
        let stem = entry[1..<suffixStart]
        guard !stem.isEmpty, stem.count <= name.count, name.starts(with: stem) else { return false }
        // A shortened name only where shortening was needed: the whole is then within a
        // character (at most 4 bytes) of the 255-byte limit.
        return stem.count == name.count || entry.count > 255 - 4
    }

    /// Removes one temporary item if its writer is gone; returns whether it did.
    private static func reclaimEntry(_ entry: [UInt8], in directory: Int32, folder: String) -> Bool {
        let cName = entry.map { CChar(bitPattern: $0) } + [0]
        // Look before opening: opening a device can have effects of its own.
        var listed = stat()
        guard fstatat(directory, cName, &listed, AT_SYMLINK_NOFOLLOW) == 0,
              [S_IFREG, S_IFDIR].contains(listed.st_mode & S_IFMT) else { return false }
        let fd = openat(directory, cName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0)
        guard fd >= 0 else { return false }
        defer { _ = Glibc.close(fd) }
        var opened = stat()
        guard fstat(fd, &opened) == 0, opened.st_dev == listed.st_dev, opened.st_ino == listed.st_ino else { return false }
        let isFolder: Bool
        switch opened.st_mode & S_IFMT {
        case S_IFREG:
            var lock = flock()
            lock.l_type = Int16(F_RDLCK)
            lock.l_whence = Int16(SEEK_SET)
            guard fcntl(fd, CSHIM_F_OFD_SETLK, &lock) == 0 else { return false }
            isFolder = false
        case S_IFDIR:
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return false }
            isFolder = true
        default:
            return false  // Never one of ours.
        }
        // Locked: its writer is gone. Remove it, if the name still leads to what we locked.
        var named = stat()
        guard fstatat(directory, cName, &named, AT_SYMLINK_NOFOLLOW) == 0,
              named.st_dev == opened.st_dev, named.st_ino == opened.st_ino else { return false }
        if !isFolder { return unlinkat(directory, cName, 0) == 0 }
        return POSIX.removeTree(SystemPath(lossless: folder).appending(PathBytes.string(fromBytes: entry))) == nil
    }
}
