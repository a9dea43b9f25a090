import Foundation
import CloudDocuments
import FileCoordination
import SystemSupport

/// Where a container's key-value store lives, and which of the names there matter.
///
/// `CONTAINER/.clouddocuments/key-value-store/` — in the container's data scope (outside
/// `Documents/`, hidden), so whatever syncs the container carries it — holds one file per device,
/// `DEVICE.json` (``KeyValueStoreFile``). Each device writes only its own file, so a sync tool never
/// sees two devices change one file; every device reads them all. Other names there are ignored,
/// except a sync tool's conflict copy of a device file (for example
/// `DEVICE.sync-conflict-20261126-101500-ABCDEFG.json`), which is merged into this device's file
/// and then removed. Temporary files (`SafeSave`'s `.DEVICE.json.cdsave-…`, Syncthing's
/// `.syncthing.DEVICE.json.tmp`) start with a dot and are never read.
struct KeyValueStoreFolder: Sendable, Hashable {
    /// The folder's path (a lossless path string, see `PathBytes`).
    let path: String
    /// This device's identifier, which names its file.
    let device: String

    /// The folder of the store of `container`.
    static func url(of container: UbiquityContainer) -> URL {
        container.url.appending(path: ".clouddocuments/key-value-store", directoryHint: .isDirectory)
    }

    init(url: URL, device: String) {
        var path = PathBytes.path(of: url)
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        self.path = path
        self.device = device
    }

    var url: URL { PathBytes.fileURL(path, isDirectory: true) }

    /// This device's file.
    var deviceFilePath: String { path + "/" + Self.fileName(of: device) }
    var deviceFileURL: URL { PathBytes.fileURL(deviceFilePath) }

    static func fileName(of device: String) -> String { device + ".json" }

    /// The device whose file `name` is, or `nil` for any other name.
    static func device(ofFileNamed name: String) -> String? {
        guard name.hasSuffix(".json"), !name.hasPrefix(".") else { return nil }
        let device = String(name.dropLast(5))
        return DeviceIdentifier.isValid(device) ? device : nil
    }

    /// What the folder holds now: the device files (by name) and the conflict copies of device
    /// files (names). Empty when the folder cannot be listed.
    func listing() -> (deviceFiles: [String], conflictCopies: [String]) {
        guard let names = SyncFolderListing.names(inFolder: path) else { return ([], []) }
        var files: [String] = [], copies: [String] = []
        for name in names {
            if Self.device(ofFileNamed: name) != nil {
                files.append(name)
            } else if Self.isConflictCopy(name) {
                copies.append(name)
            }
        }
        return (files.sorted(), copies.sorted())
    }

    /// Whether `name` is a sync tool's conflict copy of a device file.
    static func isConflictCopy(_ name: String) -> Bool {
        guard let copy = SyncConflictNaming.conflictCopy(named: name) else { return false }
        return device(ofFileNamed: copy.originalName) != nil
    }

    /// Whether a change to the entry `name` can change the store (for the folder watcher).
    static func matters(_ name: String) -> Bool {
        device(ofFileNamed: name) != nil || isConflictCopy(name)
    }

    func filePath(_ name: String) -> String { path + "/" + name }
}
