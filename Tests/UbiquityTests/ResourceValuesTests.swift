import Foundation
import Testing
@testable import Ubiquity

/// The ubiquitous-item resource keys corelibs declares but never fills.
@Suite("Ubiquitous resource values")
struct ResourceValuesTests {
    @Test("corelibs leaves the ubiquitous keys out; ubiquitousResourceValues(forKeys:) fills them from the provider")
    func values() throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let item = try cloud.documents().appending(path: "a.txt")
        try Data("a".utf8).write(to: item)
        #expect(try item.resourceValues(forKeys: [.ubiquitousItemDownloadingStatusKey]).allValues.isEmpty)

        let keys: Set<URLResourceKey> = [.isUbiquitousItemKey, .ubiquitousItemDownloadingStatusKey, .ubiquitousItemIsDownloadingKey,
                                         .ubiquitousItemIsUploadedKey, .ubiquitousItemIsUploadingKey, .ubiquitousItemHasUnresolvedConflictsKey,
                                         .ubiquitousItemContainerDisplayNameKey, .ubiquitousItemPercentDownloadedKey, .nameKey]
        let values = try item.ubiquitousResourceValues(forKeys: keys, account: cloud.account)
        #expect(values[.isUbiquitousItemKey] as? Bool == true)
        #expect(values[.ubiquitousItemDownloadingStatusKey] as? String == "NSURLUbiquitousItemDownloadingStatusCurrent")
        #expect(values[.ubiquitousItemIsDownloadingKey] as? Bool == false)
        #expect(values[.ubiquitousItemIsUploadedKey] as? Bool == true)
        #expect(values[.ubiquitousItemIsUploadingKey] as? Bool == false)
        #expect(values[.ubiquitousItemHasUnresolvedConflictsKey] as? Bool == false)
        #expect(values[.ubiquitousItemContainerDisplayNameKey] as? String == "com.example.notes")
        #expect(values[.ubiquitousItemPercentDownloadedKey] as? Double == 100)
        #expect(values[.nameKey] == nil, "other keys are resourceValues(forKeys:)'s")
    }

    @Test("a metadata query's item answers the ubiquitous attributes as the provider's status does (providers none and external)",
          arguments: [UbiquityProviderKind.none, .externalSyncTool])
    func metadataItemAgreesWithTheProvider(provider: UbiquityProviderKind) throws {
        let cloud = try ScratchCloud(provider: provider)
        defer { cloud.remove() }
        let url = try cloud.documents().appending(path: "a.txt")
        try Data("a".utf8).write(to: url)
        let status = cloud.account.status(ofItemAt: url)
        let item = try #require(MetadataItem.examine(url, account: cloud.account))
        #expect(item.value(of: .downloadingStatus) as? String == status.downloadingStatus.rawValue)
        #expect(item.value(of: .isDownloading) as? Bool == status.isDownloading)
        #expect(item.value(of: .isUploaded) as? Bool == status.isUploaded)
        #expect(item.value(of: .isUploading) as? Bool == status.isUploading)
        #expect(item.value(of: .percentDownloaded) as? Double == status.percentDownloaded)
        #expect(item.value(of: .percentUploaded) as? Double == status.percentUploaded)
        #expect(item.value(of: .hasUnresolvedConflicts) as? Bool == status.hasUnresolvedConflicts)
    }

    @Test("with the root reached through a symbolic link, a query's result URLs are still items of their container")
    func resultsUnderASymlinkedRoot() throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let link = cloud.folder.appending(path: "linked-cloud", directoryHint: .isDirectory)
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: cloud.root.path)
        let account = UbiquityAccount(configuration: UbiquityConfiguration(
            root: link, containerIdentifiers: ["com.example.notes"], provider: UbiquityProviderKind.none))
        let url = try account.container().documentsURL.appending(path: "a.txt")
        try Data("a".utf8).write(to: url)
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.ubiquitousDocuments], account: account)
        defer { query.stop() }
        let result = try #require(query.results.first)
        #expect(result.isUbiquitous)
        #expect(account.containerOfItem(at: result.url)?.identifier == "com.example.notes")
        #expect(account.isUbiquitousItem(at: result.url))
        #expect(account.status(ofItemAt: result.url).isUbiquitous)
        let local = cloud.local.appending(path: "a.txt")
        try account.setUbiquitousBlocking(false, itemAt: result.url, destinationURL: local)
        #expect(text(at: local) == "a")
    }

    @Test("outside containers only isUbiquitousItem (false) comes back; a missing item throws")
    func outsideAndMissing() throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let local = try cloud.localFile("x.txt")
        let values = try local.ubiquitousResourceValues(forKeys: [.isUbiquitousItemKey, .ubiquitousItemIsUploadedKey], account: cloud.account)
        #expect(values.count == 1 && values[.isUbiquitousItemKey] as? Bool == false)
        let missing = cloud.local.appending(path: "missing")
        #expect(throws: UbiquityError.itemNotFound(path: missing.path)) {
            try missing.ubiquitousResourceValues(forKeys: [.isUbiquitousItemKey], account: cloud.account)
        }
    }
}
