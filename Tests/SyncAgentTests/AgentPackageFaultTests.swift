import Foundation
import LocalServers
import Testing
import TestSupport
@testable import SyncAgent

/// A package document through real `clouddocsd` processes and Apache, with `kill -9` in the
/// middle of its upload and of its download: the real name never shows half a package on either
/// side, and after a restart the package arrives whole, once, with nothing private left.
@Suite("clouddocsd: package documents under kill -9", .serialized,
       .enabled(if: RequiredTool.apache2.isInstalledOrRequired, Comment(rawValue: RequiredTool.apache2.missingMessage)))
struct AgentPackageFaultTests {
    static let fileCount = 4
    static let fileSize = 16 << 20

    /// The files of the tree at `url` (relative path → size), `nil` when it is missing.
    static func tree(_ url: URL) -> [String: Int]? {
        guard let items = PackageTree.items(of: url.path) else { return nil }
        var sizes: [String: Int] = [:]
        for (relative, item) in items where !item.isFolder { sizes[relative] = Int(item.fingerprint.size) }
        return sizes
    }

    static func isWholeOrMissing(_ url: URL, _ expected: [String: Int]) -> Bool {
        guard let found = tree(url) else { return true }
        return found == expected
    }

    @Test("kill -9 mid-upload and mid-download of a package: never half a package under its name; after a restart it arrives whole, once")
    func killedMidPackageTransfer() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try AgentDevices(server: server, label: "agent-package-kill", extraConfiguration: "package-extensions = cdpkg")
            defer { devices.stop() }
            let package = devices.file("A", "Doc.cdpkg")
            var expected: [String: Int] = [:]
            for index in 0..<Self.fileCount {
                let name = index == 0 ? "index.bin" : "media/part\(index).bin"
                let url = package.appending(path: name)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try AgentFaultTests.writeBigFile(url, size: Self.fileSize)
                expected[name] = Self.fileSize
            }
            let containerOnServer = server.dataURL.appending(path: AgentDevices.container)
            let onServer = containerOnServer.appending(path: "Documents/Doc.cdpkg")
            let path = "Documents/Doc.cdpkg"

            try await devices.startAgent("A")
            try await Polling.until("A's package upload under way", interval: .milliseconds(5), details: devices.details) {
                devices.status("A")?.transfers.contains { $0.path == path && $0.isUpload && $0.bytesDone > 0 } == true
                    || Self.tree(onServer) != nil
            }
            devices.killAgent("A")
            #expect(Self.isWholeOrMissing(onServer, expected), "the server shows \(Self.tree(onServer) ?? [:]) under the real name")

            try await devices.startAgent("A")
            try await Polling.until("the whole package on the server", details: devices.details) {
                Self.tree(onServer) == expected && devices.status("A")?.transfers.isEmpty == true
                    && devices.status("A")?.queued.isEmpty == true
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: containerOnServer.path)
            #expect(!left.contains { $0.hasPrefix(".clouddocsd-staging") || $0.hasPrefix(".clouddocsd-aside") }, "left on the server: \(left)")

            try await devices.startAgent("B")
            let onB = devices.file("B", "Doc.cdpkg")
            try await Polling.until("B's package download under way", interval: .milliseconds(5), details: devices.details) {
                devices.status("B")?.transfers.contains { $0.path == path && !$0.isUpload && $0.bytesDone > 0 } == true
                    || Self.tree(onB) != nil
            }
            devices.killAgent("B")
            #expect(Self.isWholeOrMissing(onB, expected), "B shows \(Self.tree(onB) ?? [:]) under the real name")
            try await devices.startAgent("B")
            try await Polling.until("the whole package on B", details: devices.details) {
                Self.tree(onB) == expected && devices.status("B")?.transfers.isEmpty == true
            }
            for name in expected.keys {
                #expect(FileManager.default.contentsEqual(atPath: onB.appending(path: name).path,
                                                          andPath: package.appending(path: name).path))
            }
            let namesB = try FileManager.default.contentsOfDirectory(atPath: devices.documents("B").path)
            #expect(namesB == ["Doc.cdpkg"], "no duplicate on B: \(namesB)")
        }
    }
}
