import CloudDocuments
import CSystemShim
import Foundation
import Glibc
import SystemSupport

/// The temporary item a move across file systems copies into, beside its destination, and the
/// reclaiming of such items left by a move that died (`kill -9`, a crash, a power cut).
///
/// **The name** is `.syncthing.<name>.cdmove-<12 hex digits>.tmp`, with `<name>` shortened (at a
/// character boundary) when the whole would pass 255 bytes. It is hidden, and it is a name the
/// sync-tool layer already treats as a transfer temporary (`SyncInternalItems`), so presenters
/// and metadata queries never report it; Syncthing itself never syncs names starting with
/// `.syncthing.`, and Nextcloud skips hidden names by default.
///
/// **The protocol** is the save path's (`StrayTemporaryFiles` in CloudDocuments): the mover locks
/// the item as soon as it has created it — a file with an OFD write lock, a folder with
/// `flock(LOCK_EX)` — and keeps the lock until the item has been renamed into place or removed.
/// A reclaimer (every later move to the same destination) tries a non-blocking lock that
/// conflicts with the mover's and removes the item only when it gets it: the kernel drops the
/// locks of a dead process, so an item that can be locked has no live mover. On file systems
/// that refuse these locks the item is written unlocked and never reclaimed.
///
/// Internal; any thread.
enum MoveTemporaryItems {
    static let prefix = Array(".syncthing.".utf8)
    static let marker = Array(".cdmove-".utf8)
    static let suffix = Array(".tmp".utf8)
    static let hexDigits = 12

    /// A fresh temporary name for an item to be named `name` (bytes).
    static func name(for name: [UInt8]) -> [UInt8] {
        SyncToolRules.registerWithCoordination()  // the policy that hides this name from presenters
        let fixed = prefix.count + marker.count + hexDigits + suffix.count
        var stem = name
        if stem.count + fixed > 255 {
            stem = Array(stem.prefix(255 - fixed))
            // Cut at a character boundary: drop a partial UTF-8 sequence at the end.
            while let last = stem.last, last & 0xC0 == 0x80 { stem.removeLast() }
            if let last = stem.last, last >= 0xC0 { stem.removeLast() }
        }
        let random = UInt64.random(in: 0..<(1 << 48))
        var hex = Array(String(random, radix: 16).utf8)
        hex.insert(contentsOf: Array(repeating: UInt8(ascii: "0"), count: hexDigits - hex.count), at: 0)
        return prefix + stem + marker + hex + suffix
    }

    /// Whether `entry` is a temporary name made by ``name(for:)`` for `name`.
    static func isTemporary(_ entry: [UInt8], for name: [UInt8]) -> Bool {
        let fixed = prefix.count + marker.count + hexDigits + suffix.count
        guard entry.count > fixed, entry.starts(with: prefix), entry.suffix(suffix.count).elementsEqual(suffix) else { return false }
        let hexStart = entry.count - suffix.count - hexDigits
        let markerStart = hexStart - marker.count
        guard entry[markerStart..<hexStart].elementsEqual(marker),
              entry[hexStart..<(hexStart + hexDigits)].allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { return false }
        let stem = entry[prefix.count..<markerStart]
        guard !stem.isEmpty, stem.count <= name.count, name.starts(with: stem) else { return false }
        // A shortened name only where shortening was needed (the whole then near 255 bytes).
        return stem.count == name.count || entry.count > 255 - 4
    }

    // MARK: The mover's side

    /// Creates the temporary file `path` (owner-only until its attributes are set) and
    /// write-locks it; the lock lasts while the returned descriptor is open.
    static func createLockedFile(_ path: String) -> Result<Int32, Errno> {
        createLocked(path) { cPath in
            switch valueOrErrno({ open(cPath, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0o600) }) {
            case .success(let descriptor): return .created(descriptor)
            case .failure(let error): return .failed(error)
            }
        } lock: { descriptor in
            var lock = flock()
            lock.l_type = Int16(F_WRLCK)
            lock.l_whence = Int16(SEEK_SET)
            return valueOrErrno { fcntl(descriptor, CSHIM_F_OFD_SETLKW, &lock) }
        }
    }

    /// Creates the temporary folder `path` (owner-only until its attributes are set) and locks
    /// it; the lock lasts while the returned descriptor (of the folder) is open.
    static func createLockedFolder(_ path: String) -> Result<Int32, Errno> {
        createLocked(path) { cPath in
            guard mkdir(cPath, 0o700) == 0 else { return .failed(.current) }
            switch valueOrErrno({ open(cPath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }) {
            case .success(let descriptor): return .created(descriptor)
            // Reclaimed (or replaced) before it could be opened.
            case .failure(let error) where error.rawValue == ENOENT || error.rawValue == ELOOP: return .vanished
            case .failure(let error): return .failed(error)
            }
        } lock: { descriptor in
            valueOrErrno { flock(descriptor, LOCK_EX) }
        }
    }

    /// Creates with `create`, locks with `lock`, then checks that `path` still names the item (a
    /// reclaimer may have removed it between the two) and creates it again if not.
    private static func createLocked(_ path: String, create: (UnsafePointer<CChar>) -> Creation,
                                     lock: (Int32) -> Result<Int32, Errno>) -> Result<Int32, Errno> {
        for _ in 0..<16 {
            let descriptor: Int32
            switch PathBytes.withCString(path, { create($0) }) {
            case .created(let created): descriptor = created
            case .vanished: continue
            case .failed(let error): return .failure(error)
            }
            // A file system without the lock is not an error: the item is then written unlocked.
            if case .failure(let error) = lock(descriptor), ![EINVAL, ENOLCK, EOPNOTSUPP, ENOSYS].contains(error.rawValue) {
                _ = Glibc.close(descriptor)
                return .failure(error)
            }
            var opened = stat(), named = stat()
            if fstat(descriptor, &opened) == 0, PathBytes.withCString(path, { lstat($0, &named) }) == 0,
               opened.st_dev == named.st_dev, opened.st_ino == named.st_ino {
                return .success(descriptor)
            }
            _ = Glibc.close(descriptor)
        }
        return .failure(Errno(rawValue: EAGAIN))
    }

    private enum Creation {
        case created(Int32)
        /// Made, then gone before it could be opened: try again.
        case vanished
        case failed(Errno)
    }

    // MARK: The reclaimer's side

    /// Removes the temporary items beside `destination` (a path) left for its name by moves that
    /// died. Best effort: what cannot be opened, locked or removed stays. Returns how many it
    /// removed.
    @discardableResult
    static func reclaim(beside destination: String) -> Int {
        guard let (folder, name) = ItemTree.split(destination) else { return 0 }
        guard case .success(let directory) = PathBytes.withCString(folder, { path in
            valueOrErrno { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        }) else { return 0 }
        defer { _ = Glibc.close(directory) }
        guard case .success(let entries) = ItemTree.names(inFolder: directory) else { return 0 }
        var removed = 0
        for entry in entries where isTemporary(entry, for: name) {
            if reclaimEntry(entry, in: directory, folder: folder) { removed += 1 }
        }
        return removed
    }

    /// Removes one temporary item if its mover is gone; returns whether it did.
    private static func reclaimEntry(_ entry: [UInt8], in directory: Int32, folder: String) -> Bool {
        let cName = entry.map { CChar(bitPattern: $0) } + [0]
        var listed = stat()
        guard fstatat(directory, cName, &listed, AT_SYMLINK_NOFOLLOW) == 0,
              [S_IFREG, S_IFDIR].contains(listed.st_mode & S_IFMT) else { return false }
        let descriptor = openat(directory, cName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { _ = Glibc.close(descriptor) }
        var opened = stat()
        guard fstat(descriptor, &opened) == 0, opened.st_dev == listed.st_dev, opened.st_ino == listed.st_ino else { return false }
        let isFolder = opened.st_mode & S_IFMT == S_IFDIR
        if isFolder {
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return false }
        } else {
            var lock = flock()
            lock.l_type = Int16(F_RDLCK)
            lock.l_whence = Int16(SEEK_SET)
            guard fcntl(descriptor, CSHIM_F_OFD_SETLK, &lock) == 0 else { return false }
        }
        // Locked: its mover is gone. Remove it, if the name still leads to what was locked.
        var named = stat()
        guard fstatat(directory, cName, &named, AT_SYMLINK_NOFOLLOW) == 0,
              named.st_dev == opened.st_dev, named.st_ino == opened.st_ino else { return false }
        if !isFolder { return unlinkat(directory, cName, 0) == 0 }
        return ItemTree.remove(ItemTree.join(folder, entry)) == nil
    }
}
