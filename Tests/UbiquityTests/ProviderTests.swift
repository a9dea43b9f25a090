import Foundation
import Testing
@testable import Ubiquity

/// The provider interface: which provider keeps a container in sync, and what each reports.
@Suite("Providers: detection and item status")
struct ProviderTests {
    /// A container `Sync/Apps/com.example.notes` in `scratch`, with `markers` in the folder `marked`.
    private func folder(_ scratch: Scratch, _ markers: [String], marked: String = "") throws -> (base: URL, container: URL) {
        let base = scratch.url
        let markedFolder = base.appending(path: marked, directoryHint: .isDirectory)
        let container = base.appending(path: "Sync/Apps/com.example.notes", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
        for marker in markers {
            _ = FileManager.default.createFile(atPath: markedFolder.appending(path: marker).path, contents: Data())
        }
        return (base, container)
    }

    @Test("sync tools are recognised by their markers in the folder or a folder above it",
          arguments: [(".stfolder", ExternalSyncTool.syncthing), (".sync_0123abcd.db", .nextcloud), ("._sync_0123abcd.db", .nextcloud),
                      (".csync_journal.db", .nextcloud), (".dropbox", .dropbox), ("RCLONE_TEST", .rclone)])
    func detection(_ marker: String, _ tool: ExternalSyncTool) throws {
        let scratch = try Scratch("ubiquity-detect")
        defer { scratch.remove() }
        let (base, container) = try folder(scratch, [marker], marked: "Sync")
        let found = SyncToolDetection.detect(syncing: container, environment: [:])
        #expect(found?.tool == tool)
        #expect(found?.root.standardizedFileURL.path == base.appending(path: "Sync").standardizedFileURL.path)
    }

    @Test("an rclone bisync listing naming the folder in rclone's work folder marks it as rclone's")
    func rcloneListing() throws {
        let scratch = try Scratch("ubiquity-detect")
        defer { scratch.remove() }
        let (base, container) = try folder(scratch, [])
        let cache = base.appending(path: "cache/rclone/bisync", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        let sync = base.appending(path: "Sync").standardizedFileURL.path
        let mangled = String(sync.dropFirst()).replacingOccurrences(of: "/", with: "_")
        _ = FileManager.default.createFile(atPath: cache.appending(path: "\(mangled)..remote_backup.path1.lst").path, contents: Data())
        let found = SyncToolDetection.detect(syncing: container, environment: ["XDG_CACHE_HOME": base.appending(path: "cache").path])
        #expect(found?.tool == .rclone)
    }

    @Test("no marker: no tool, and the provider says so in words")
    func noMarker() throws {
        let scratch = try Scratch("ubiquity-detect")
        defer { scratch.remove() }
        let (base, container) = try folder(scratch, [])
        #expect(SyncToolDetection.detect(syncing: container, environment: [:]) == nil)
        #expect(ExternalSyncToolProvider(tool: nil).name == "an external sync tool")
        #expect(ExternalSyncToolProvider(tool: .syncthing).name == "Syncthing")
    }

    @Test("the configured kind picks the provider; the external one names the detected tool")
    func providerPerKind() throws {
        let cloud = try ScratchCloud(provider: .externalSyncTool)
        defer { cloud.remove() }
        _ = FileManager.default.createFile(atPath: cloud.root.appending(path: ".stfolder").path, contents: Data())
        let container = try cloud.account.container()
        #expect(cloud.account.provider(for: container).name == "Syncthing")
        #expect(cloud.account.provider(for: container).kind == .externalSyncTool)
        let none = UbiquityAccount(configuration: UbiquityConfiguration(root: cloud.root, containerIdentifiers: ["a"], provider: .none))
        #expect(none.provider(for: container) is LocalOnlyProvider)
        let agent = UbiquityAccount(configuration: UbiquityConfiguration(root: cloud.root, containerIdentifiers: ["a"], provider: .agent))
        #expect(agent.provider(for: container) is SyncAgentProvider)
    }

    @Test("what each provider reports for a whole local item: none and external say current and uploaded, the agent stand-in not uploaded")
    func statusPerProvider() throws {
        for (kind, uploaded) in [(UbiquityProviderKind.none, true), (.externalSyncTool, true), (.agent, false)] {
            let cloud = try ScratchCloud(provider: kind)
            defer { cloud.remove() }
            let item = try cloud.documents().appending(path: "a.txt")
            try Data("a".utf8).write(to: item)
            let status = cloud.account.status(ofItemAt: item)
            #expect(status.isUbiquitous)
            #expect(status.downloadingStatus == .current)
            #expect(status.isDownloaded && !status.isDownloading)
            #expect(status.isUploaded == uploaded, "\(kind)")
            #expect(!status.isUploading)
            #expect(status.percentDownloaded == 100)
            #expect(status.percentUploaded == (uploaded ? 100 : 0))
            #expect(!status.hasUnresolvedConflicts)
        }
    }

    @Test("external tool: a transfer temporary file beside the item means a newer copy is downloading",
          arguments: [".syncthing.a.txt.tmp", "~syncthing~a.txt.tmp", ".a.txt.~1f2e3d", "a.txt.3f2a.partial"])
    func downloadingFromTemporaryFile(_ temporary: String) throws {
        let cloud = try ScratchCloud(provider: .externalSyncTool)
        defer { cloud.remove() }
        let documents = try cloud.documents()
        let item = documents.appending(path: "a.txt")
        try Data("old".utf8).write(to: item)
        _ = FileManager.default.createFile(atPath: documents.appending(path: temporary).path, contents: Data("new".utf8))
        let status = cloud.account.status(ofItemAt: item)
        #expect(status.isDownloading)
        #expect(status.downloadingStatus == .downloaded)
        #expect(status.percentDownloaded == nil)
        try FileManager.default.removeItem(at: item)
        #expect(cloud.account.status(ofItemAt: item).downloadingStatus == .notDownloaded)
    }

    @Test("has-unresolved-conflicts comes from the item's versions: a sync tool's conflict copy beside it")
    func conflictsFromVersions() throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let documents = try cloud.documents()
        let item = documents.appending(path: "report.txt")
        try Data("mine".utf8).write(to: item)
        #expect(!cloud.account.status(ofItemAt: item).hasUnresolvedConflicts)
        try Data("theirs".utf8).write(to: documents.appending(path: "report.sync-conflict-20260101-120000-ABCDEFG.txt"))
        #expect(cloud.account.status(ofItemAt: item).hasUnresolvedConflicts)
    }

    @Test("outside every container the status is not ubiquitous and no provider is asked")
    func outside() throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let recorder = PlaceholderProvider()
        cloud.account.setProvider(recorder)
        let local = try cloud.localFile("x.txt")
        #expect(!cloud.account.status(ofItemAt: local).isUbiquitous)
        #expect(recorder.calls.withLock { $0 }.isEmpty)
    }
}

/// A provider with placeholders, as the sync agent will be: records what it is asked.
final class PlaceholderProvider: UbiquityProvider {
    let calls = Locked<[String]>([])
    var kind: UbiquityProviderKind { .agent }
    var name: String { "a test agent" }
    var supportsPlaceholders: Bool { true }

    func status(ofItemAt url: URL, in container: UbiquityContainer) -> UbiquitousItemStatus {
        calls.withLock { $0.append("status \(url.lastPathComponent)") }
        return UbiquitousItemStatus(isUbiquitous: true, downloadingStatus: .notDownloaded, isDownloading: true,
                                    isUploaded: false, isUploading: true, percentDownloaded: 40, percentUploaded: 60)
    }

    func evictItem(at url: URL, in container: UbiquityContainer) throws(UbiquityError) {
        calls.withLock { $0.append("evict \(url.lastPathComponent) \(container.identifier)") }
    }

    func startDownloadingItem(at url: URL, in container: UbiquityContainer) throws(UbiquityError) {
        calls.withLock { $0.append("download \(url.lastPathComponent) \(container.identifier)") }
    }
}
