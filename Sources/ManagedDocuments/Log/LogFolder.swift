import Foundation
import Glibc
import SystemSupport

/// Where a store's change logs and baselines live in the container, and how they are written
/// and found.
///
/// `<container>/ManagedDocuments/<store name>/<device id>/` — in the container's data scope
/// (outside `Documents/`), so whatever syncs the container carries it — holds one folder per
/// device. Each device writes only in its own folder, and only new files, each under a name
/// never used before (`<sequence, 16 digits>-<8 random hex>.mdlog`, or `.mdbase` for a
/// baseline), written once (temporary file, `fsync`, `rename`, `fsync` of the folder) and never
/// rewritten: no sync tool can ever make a conflict copy of one. Names starting with a dot
/// (this folder's and sync tools' temporary files) and any other names are ignored. A device
/// deletes only its own files (``StoreSynchronizer``'s compaction).
struct LogFolder: Sendable {
    /// `<container>/ManagedDocuments/<store name>`.
    let root: URL
    let device: String

    static let logExtension = "mdlog"
    static let baselineExtension = "mdbase"

    init(contentURL: URL, storeName: String, device: String) {
        root = contentURL.appending(path: "ManagedDocuments", directoryHint: .isDirectory)
            .appending(path: storeName, directoryHint: .isDirectory)
        self.device = device
    }

    var ownFolder: URL { root.appending(path: device, directoryHint: .isDirectory) }

    /// One file found in the folder.
    struct Entry: Sendable, Hashable {
        var device: String
        var fileName: String
        var kind: ChangeLogFile.Kind
        var sequence: UInt64
        /// `device/fileName`: how the store remembers it applied the file.
        var key: String { device + "/" + fileName }
    }

    /// Parses a file name; `nil` for names that are not logs or baselines.
    static func entry(device: String, fileName: String) -> Entry? {
        guard !fileName.hasPrefix("."), let dot = fileName.lastIndex(of: ".") else { return nil }
        let kind: ChangeLogFile.Kind
        switch fileName[fileName.index(after: dot)...] {
        case logExtension: kind = .log
        case baselineExtension: kind = .baseline
        default: return nil
        }
        let stem = fileName[..<dot]
        guard let dash = stem.firstIndex(of: "-"), let sequence = UInt64(stem[..<dash]) else { return nil }
        return Entry(device: device, fileName: fileName, kind: kind, sequence: sequence)
    }

    /// Every log and baseline of every device, or `nil` when the store's folder does not exist.
    func entries() -> [Entry]? {
        guard let devices = try? FileManager.default.contentsOfDirectory(atPath: root.path) else { return nil }
        var found: [Entry] = []
        for device in devices where DeviceIdentifierRules.isValid(device) {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: root.appending(path: device).path) else { continue }
            for name in names { if let entry = Self.entry(device: device, fileName: name) { found.append(entry) } }
        }
        return found
    }

    func url(of entry: Entry) -> URL {
        root.appending(path: entry.device, directoryHint: .isDirectory).appending(path: entry.fileName)
    }

    /// Reads a file whole (at most ``ChangeLogFile/maximumSize`` bytes).
    ///
    /// - Throws: ``ManagedStoreError/unreadableLog(path:reason:)``.
    func read(_ entry: Entry) throws(ManagedStoreError) -> [UInt8] {
        let path = url(of: entry).path
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadableLog(path: path, reason: Errno.current.message) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .unreadableLog(path: path, reason: Errno.current.message) }
        guard info.st_size <= ChangeLogFile.maximumSize else {
            throw .unreadableLog(path: path, reason: "it is \(info.st_size) bytes, more than a log can be")
        }
        do { return [UInt8](try readToEnd(descriptor, sizeHint: Int(info.st_size))) } catch {
            throw .unreadableLog(path: path, reason: error.message)
        }
    }

    /// Makes this device's folder if it is missing (when the store opens: the first save then
    /// only writes its log). Best effort: a folder that cannot be made now is made, or its error
    /// reported, by the first ``write(_:kind:sequence:removingStaleTemporaries:)``.
    func prepare() {
        try? FileManager.default.createDirectory(atPath: ownFolder.path, withIntermediateDirectories: true)
    }

    /// Writes `bytes` as a new file of this device: a temporary file, flushed, renamed to a name
    /// no file ever had, then the folder flushed. Makes the folders when they are missing.
    /// `removingStaleTemporaries`: first removes the temporary files a killed write left (the
    /// first write of a process does; the caller holds the store's write transaction, so no other
    /// process of this device is writing).
    ///
    /// - Returns: the entry written.
    /// - Throws: ``ManagedStoreError/writeFailed(path:errno:)``; nothing is left behind but,
    ///   after a crash, a temporary file (a dot name, ignored, removed by a later write).
    func write(_ bytes: [UInt8], kind: ChangeLogFile.Kind, sequence: UInt64,
               removingStaleTemporaries: Bool = true) throws(ManagedStoreError) -> Entry {
        try write(pieces: [bytes], kind: kind, sequence: sequence, removingStaleTemporaries: removingStaleTemporaries)
    }

    /// ``write(_:kind:sequence:removingStaleTemporaries:)`` of the file made of `pieces` one
    /// after the other (a save's header, changes and trailer: written without joining them).
    func write(pieces: [[UInt8]], kind: ChangeLogFile.Kind, sequence: UInt64,
               removingStaleTemporaries: Bool = true) throws(ManagedStoreError) -> Entry {
        try write(pieces: pieces, named: Self.newFileName(kind: kind, sequence: sequence), kind: kind, sequence: sequence,
                  removingStaleTemporaries: removingStaleTemporaries)
    }

    /// A new name for a file of this device: `<sequence, 16 digits>-<8 random hex>.<extension>`
    /// (32 random bits: a name no file of the device ever had).
    static func newFileName(kind: ChangeLogFile.Kind, sequence: UInt64) -> String {
        let random = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        return String(format: "%016llu-%@.%@", sequence, String(repeating: "0", count: 8 - random.count) + random,
                      kind == .log ? logExtension : baselineExtension)
    }

    /// ``write(pieces:kind:sequence:removingStaleTemporaries:)`` under `name` (from
    /// ``newFileName(kind:sequence:)``, chosen by the caller beforehand).
    func write(pieces: [[UInt8]], named name: String, kind: ChangeLogFile.Kind, sequence: UInt64,
               removingStaleTemporaries: Bool = true) throws(ManagedStoreError) -> Entry {
        let folder = ownFolder.path
        if removingStaleTemporaries { removeStaleTemporaries(in: folder) }
        let final = folder + "/" + name
        let temporary = folder + "/.\(name).tmp"
        var descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        if descriptor < 0 && errno == ENOENT {
            // The first file of this device (or the container was emptied): make the folders.
            do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
                throw .writeFailed(path: folder, errno: (error as NSError).domain == NSPOSIXErrorDomain
                                   ? Errno(rawValue: Int32((error as NSError).code)) : .ioError)
            }
            descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        }
        guard descriptor >= 0 else { throw .writeFailed(path: temporary, errno: .current) }
        var failure: Errno?
        for piece in pieces where failure == nil {
            var written = 0
            piece.withUnsafeBytes { raw in
                guard let base = raw.baseAddress else { return }
                while written < raw.count {
                    let count = Glibc.write(descriptor, base + written, raw.count - written)
                    if count < 0 {
                        if errno == EINTR { continue }
                        failure = .current
                        return
                    }
                    written += count
                }
            }
        }
        if failure == nil && fsync(descriptor) != 0 { failure = .current }
        close(descriptor)
        if failure == nil && rename(temporary, final) != 0 { failure = .current }
        if let failure {
            unlink(temporary)
            throw .writeFailed(path: final, errno: failure)
        }
        let folderDescriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderDescriptor >= 0 {
            fsync(folderDescriptor)
            close(folderDescriptor)
        }
        return Entry(device: device, fileName: name, kind: kind, sequence: sequence)
    }

    /// Removes this device's temporary files a killed write left (only this device writes here,
    /// and one process at a time: the store's write transaction is held while writing).
    private func removeStaleTemporaries(in folder: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(".") && name.hasSuffix(".tmp") { unlink(folder + "/" + name) }
    }

    /// Deletes one of this device's files (compaction).
    func remove(_ entry: Entry) {
        guard entry.device == device else { return }
        unlink(url(of: entry).path)
    }
}

/// The device-identifier rule (Ubiquity's `DeviceIdentifier.isValid`), for folder names.
enum DeviceIdentifierRules {
    static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_"
        }
    }
}
