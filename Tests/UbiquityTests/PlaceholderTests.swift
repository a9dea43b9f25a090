import Foundation
import Testing
@testable import Ubiquity

/// `isUbiquitousItem(at:)`, `evictUbiquitousItem(at:)`, `startDownloadingUbiquitousItem(at:)`.
@Suite("Placeholders: is-ubiquitous, evict, start downloading")
struct PlaceholderTests {
    @Test("isUbiquitousItem: true for an item in a container, false outside, false when nothing is there")
    func isUbiquitous() throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let inCloud = try cloud.documents().appending(path: "a.txt")
        #expect(!cloud.account.isUbiquitousItem(at: inCloud))
        try Data("a".utf8).write(to: inCloud)
        #expect(cloud.account.isUbiquitousItem(at: inCloud))
        #expect(cloud.account.isUbiquitousItem(at: try cloud.documents()))
        #expect(!cloud.account.isUbiquitousItem(at: try cloud.localFile("b.txt")))
        #expect(!cloud.account.isUbiquitousItem(at: cloud.root))
    }

    @Test("without placeholders evicting and downloading are a typed error naming the provider, not a silent no-op",
          arguments: [UbiquityProviderKind.none, .externalSyncTool])
    func notSupported(_ kind: UbiquityProviderKind) throws {
        let cloud = try ScratchCloud(provider: kind)
        defer { cloud.remove() }
        let item = try cloud.documents().appending(path: "a.txt")
        try Data("a".utf8).write(to: item)
        let name = cloud.account.provider(for: try cloud.account.container()).name
        #expect(throws: UbiquityError.providerDoesNotSupportPlaceholders(provider: name)) { try cloud.account.evictUbiquitousItem(at: item) }
        #expect(throws: UbiquityError.providerDoesNotSupportPlaceholders(provider: name)) { try cloud.account.startDownloadingUbiquitousItem(at: item) }
        #expect(text(at: item) == "a")
    }

    @Test("an item outside containers, and a missing item, are errors of their own")
    func outsideAndMissing() throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let local = try cloud.localFile("x.txt")
        #expect(throws: UbiquityError.itemNotInContainer(path: local.path)) { try cloud.account.evictUbiquitousItem(at: local) }
        #expect(throws: UbiquityError.itemNotInContainer(path: local.path)) { try cloud.account.startDownloadingUbiquitousItem(at: local) }
        let missing = try cloud.documents().appending(path: "missing.txt")
        #expect(throws: UbiquityError.itemNotFound(path: missing.path)) { try cloud.account.evictUbiquitousItem(at: missing) }
    }

    @Test("a plugged-in provider with placeholders is asked: evict, download and status go through it")
    func pluggedProvider() throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let provider = PlaceholderProvider()
        cloud.account.setProvider(provider)
        let placeholder = try cloud.documents().appending(path: "remote-only.txt")  // no local file: a placeholder
        try cloud.account.startDownloadingUbiquitousItem(at: placeholder)
        try cloud.account.evictUbiquitousItem(at: placeholder)
        let status = cloud.account.status(ofItemAt: placeholder)
        #expect(status.downloadingStatus == .notDownloaded && !status.isDownloaded && status.percentDownloaded == 40)
        #expect(provider.calls.withLock { $0 } == ["download remote-only.txt com.example.notes", "evict remote-only.txt com.example.notes",
                                                   "status remote-only.txt"])
        cloud.account.setProvider(nil)
        #expect(cloud.account.provider(for: try cloud.account.container()) is LocalOnlyProvider)
    }
}
