import Foundation
import Glibc
import SystemSupport

/// The contents of one store file: the writes one device made (and writes it took over from a
/// sync tool's conflict copy), key by key. JSON, keys sorted, written whole by `SafeSave`:
///
/// ```json
/// {"device":"7c2f…","entries":{"colour":{"device":"7c2f…","time":1764150000123456789,"value":{"string":"blue"}},
///                             "old":{"deleted":true,"device":"7c2f…","time":1764150000223456789}},"format":1}
/// ```
///
/// See Docs/KeyValueStore.md, "File format".
struct KeyValueStoreFile: Sendable {
    /// The format this code writes; files of a later format are not read (nor overwritten).
    static let currentFormat = 1
    /// The largest file read (64 MiB): far above what a store can hold (1 MB of values, written
    /// at most six times larger as escaped JSON, plus keys and tombstones), so a larger file is
    /// damaged and is refused before it is read into memory.
    static let maximumFileSize = 64 << 20

    var format: Int = Self.currentFormat
    /// The device whose file this is (informative: the file name says it too).
    var device: String
    var entries: [String: KeyValueStoreEntry] = [:]

    init(device: String, entries: [String: KeyValueStoreEntry] = [:]) {
        self.device = device
        self.entries = entries
    }

    /// The file's bytes (``KeyValueJSONWriter``).
    func encoded() -> Data {
        var writer = KeyValueJSONWriter()
        writer.file(self)
        return Data(writer.bytes)
    }

    /// A read file: its contents and the identity of what was read (to skip reading it again
    /// while it is unchanged).
    struct Snapshot: Sendable {
        var file: KeyValueStoreFile
        var identity: FileIdentity
    }

    /// Reads and decodes the file at `path`, or `nil` when there is none.
    ///
    /// - Throws: ``KeyValueStoreError/storeFileUnusable(path:reason:)`` when it cannot be read,
    ///   is larger than ``maximumFileSize``, is not a store file, or has a later format.
    static func read(_ path: String) throws(KeyValueStoreError) -> Snapshot? {
        let descriptor = PathBytes.withCString(path) { open($0, O_RDONLY | O_CLOEXEC) }
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw .storeFileUnusable(path: path, reason: Errno.current.message)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .storeFileUnusable(path: path, reason: Errno.current.message) }
        guard info.st_size <= maximumFileSize else {
            throw .storeFileUnusable(path: path, reason: "it is \(info.st_size) bytes, more than a store file can be (\(maximumFileSize))")
        }
        let data: Data
        do { data = try readToEnd(descriptor, sizeHint: Int(info.st_size)) } catch {
            throw .storeFileUnusable(path: path, reason: error.message)
        }
        return Snapshot(file: try decode(data, path: path), identity: FileIdentity(info))
    }

    static func decode(_ data: Data, path: String) throws(KeyValueStoreError) -> KeyValueStoreFile {
        let members: [String: KeyValueJSON]
        do { members = try KeyValueJSONParser.parse(data).object() } catch {
            throw .storeFileUnusable(path: path, reason: "it is not a key-value store file (\(error))")
        }
        guard case .number(let text)? = members["format"], let format = Int(text) else {
            throw .storeFileUnusable(path: path, reason: "it is not a key-value store file (no format number)")
        }
        guard format <= currentFormat else {
            throw .storeFileUnusable(path: path, reason: "it has format \(format), newer than this program's \(currentFormat)")
        }
        do throws(KeyValueJSON.Mismatch) {
            var file = KeyValueStoreFile(device: try members["device"]?.text() ?? "")
            file.format = format
            for (key, entry) in try members["entries"]?.object() ?? [:] { file.entries[key] = try entry.entry() }
            return file
        } catch {
            throw .storeFileUnusable(path: path, reason: "it is damaged (\(error.reason))")
        }
    }
}
