import BenchmarkSupport
import Foundation

/// Measure 2: the first sync of many files to an empty device. The files are put into the served
/// folder directly (set-up). Ours: one pass of an in-process engine on an empty container; raw:
/// `rclone copy` from the same collection to an empty folder.
enum FirstSyncMeasure {
    static func run(_ options: Options, server: ApacheServer, rclone: Rclone, work: URL) async throws(BenchmarkError) {
        let name = "first-sync"
        let served = server.data.appending(path: name)
        let expected = try makeFiles(in: served, count: options.files, size: 4096, folders: options.folders)
        server.handOver(served)

        let device = try await EngineDevice.make(root: work.appending(path: "first-sync-device"), identifier: name, server: server)
        let ours = try await device.timedPass()
        try checkTree(device.container, equals: expected, what: "ours: the device's container")

        let rawFolder = work.appending(path: "rclone-first-sync")
        try makeFolder(rawFolder)
        let raw = try rclone.copy(":webdav:\(name)", rawFolder.path)
        try checkTree(rawFolder, equals: expected, what: "rclone: the downloaded folder")

        row("first sync \(options.files) × 4 KiB in \(options.folders) folders", seconds(ours), seconds(raw) + " (rclone copy)",
            format(ours / raw), "≤ 1.0")
    }
}
