import Foundation
import Glibc
import SystemSupport

/// Finding the item recorded at a path without reading every `item.json` (rule 2 of "Which item a
/// version belongs to", Docs/Versions.md). Every open of a document that never had a version asks
/// it; with one `item.json` read per item the store knows, that cost grew with the store (10–30 ms
/// with 3,000 items).
///
/// `paths/<key>` lists, one per line, the items whose record has named that path; `<key>` is a
/// hash of the path. A record is written only after its path's line is durable
/// (`writeItemRecord`), so every record is listed under the path it names. A line can be stale
/// (the item moved on, or was removed) or belong to another path with the same key: every
/// candidate's `item.json` is read and must name the path. Lines are appended (`O_APPEND`, one
/// `write` each, between line feeds), so two processes adding at once lose neither line; a line
/// cut by a crash is not a UUID and is skipped, and ends before the next one.
///
/// A store made before the index has no `paths/.complete-1`: its first look-up reads every record
/// as before, then lists them all, flushes the file systems (`sync`) and writes the marker. From then on the
/// index is trusted. (A process of an older CloudDocuments writing to the same store afterwards
/// would add records the index does not list: the item is then found by its identity attribute,
/// as most are, and not by its path.)
extension VersionStore {
    /// The index's folder.
    var pathIndexFolder: String { root + "/paths" }
    /// Present once every record in the store is listed in the index.
    var pathIndexCompleteMarker: String { pathIndexFolder + "/.complete-1" }

    /// The index file of `path`: two 64-bit FNV-1a hashes of its bytes, in hex.
    func pathIndexFile(_ path: String) -> String {
        func fnv1a(_ seed: UInt64) -> UInt64 {
            var hash = seed
            for byte in path.utf8 {
                hash ^= UInt64(byte)
                hash &*= 0x100_0000_01b3
            }
            return hash
        }
        let first = String(fnv1a(0xcbf2_9ce4_8422_2325), radix: 16), second = String(fnv1a(0x6c62_272e_07bb_0142), radix: 16)
        return pathIndexFolder + "/" + String(repeating: "0", count: 16 - first.count) + first
            + String(repeating: "0", count: 16 - second.count) + second
    }

    /// Lists `id` under `path`, durably: called before a record naming `path` is written.
    func indexPath(_ path: String, forItem id: String) throws(FileVersionError) {
        try makeFolders(pathIndexFolder)
        let file = pathIndexFile(path)
        do throws(SystemCallError) {
            let created: Bool
            let descriptor: FileDescriptor
            do {
                descriptor = try POSIX.open(file, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, mode: 0o600)
                created = true
            } catch where error.code == EEXIST {
                descriptor = try POSIX.open(file, O_WRONLY | O_APPEND | O_CLOEXEC)
                created = false
            }
            do throws(SystemCallError) {
                // Between line feeds: a line cut short by a crash does not swallow this one.
                try VersionContents.writeAll(Data(("\n" + id + "\n").utf8), to: descriptor)
                try descriptor.sync()
            } catch {
                _ = Glibc.close(descriptor.rawValue)
                throw error
            }
            try descriptor.close()
            if created { try POSIX.syncDirectory(pathIndexFolder) }
        } catch {
            throw .storeFailed(path: file, call: error.call, errno: error.errno)
        }
    }

    /// The items listed under `path` (each once, in the order listed), or nil when the index is not
    /// complete yet.
    func indexedItems(at path: String) -> [String]? {
        guard access(pathIndexCompleteMarker, F_OK) == 0 else { return nil }
        guard let data = FileManager.default.contents(atPath: pathIndexFile(path)) else { return [] }
        var seen = Set<String>()
        return data.split(separator: UInt8(ascii: "\n")).compactMap { line in
            let id = String(decoding: line, as: UTF8.self)
            guard UUID(uuidString: id) != nil, seen.insert(id).inserted else { return nil }
            return id
        }
    }

    /// Lists every record of the store under its path, flushes the file system, then writes the
    /// marker that makes the index trusted. Best effort: on any failure the marker is not written,
    /// and look-ups go on reading every record.
    func completePathIndex(_ records: [(id: String, path: String)]) {
        do throws(FileVersionError) {
            try makeFolders(pathIndexFolder)
        } catch {
            return
        }
        for record in records {
            guard let descriptor = try? POSIX.open(pathIndexFile(record.path), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, mode: 0o600) else { return }
            let written = (try? VersionContents.writeAll(Data((record.id + "\n").utf8), to: descriptor)) != nil
            _ = Glibc.close(descriptor.rawValue)
            guard written else { return }
        }
        // One flush of the file system for all the lines (a rebuild happens once per store; a new
        // store has no line to flush).
        let folder = open(pathIndexFolder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { return }
        defer { _ = Glibc.close(folder) }
        if !records.isEmpty { sync() }  // `syncfs` is not in Glibc's module; this runs once per store
        let marker = open(pathIndexCompleteMarker, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard marker >= 0 else { return }
        _ = fsync(marker)
        _ = Glibc.close(marker)
        _ = fsync(folder)
    }
}
