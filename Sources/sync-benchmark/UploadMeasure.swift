import BenchmarkSupport
import Foundation

/// Measure 1: many small files from a device to the server. Ours: one pass of an in-process
/// engine (from its start until it returns, when every file is on the server); raw: `rclone copy`
/// of the same files to another collection of the same server.
enum UploadMeasure {
    static func run(_ options: Options, server: ApacheServer, rclone: Rclone, work: URL) async throws(BenchmarkError) {
        let device = try await EngineDevice.make(root: work.appending(path: "upload-device"), identifier: "upload", server: server)
        let expected = try makeFiles(in: device.container, count: options.uploadFiles, size: 4096)
        let ours = try await device.timedPass()
        try checkTree(server.data.appending(path: "upload"), equals: expected, what: "ours: the server's upload/")

        let rawName = "rclone-upload"
        let raw = try rclone.copy(device.container.path, ":webdav:\(rawName)")
        try checkTree(server.data.appending(path: rawName), equals: expected, what: "rclone: the server's \(rawName)/")

        row("upload \(options.uploadFiles) × 4 KiB", seconds(ours), seconds(raw) + " (rclone copy)", format(ours / raw), "≤ 1.0")
    }
}
