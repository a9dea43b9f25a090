import Foundation
import Ubiquity

/// The README's "The cloud in a few lines", kept compiling (it is not run: it uses the shared
/// account, which the tests configure through `SharedUbiquityFixture`).
@MainActor
func readmeCloudSnippet(localURL: URL) async throws -> MetadataQuery? {
    let account = UbiquityAccount.shared
    guard let container = account.url(forUbiquityContainerIdentifier: nil) else { return nil }  // nil: signed out
    let cloudURL = container.appending(path: "Documents/note.txt")
    try await account.setUbiquitous(true, itemAt: localURL, destinationURL: cloudURL)  // open documents follow

    let query = MetadataQuery(scopes: [.ubiquitousDocuments],
                              predicate: try MetadataItemPredicate(format: "%K LIKE '*.txt'", "kMDItemFSName")) { event in
        if case .didUpdate(let update) = event { print("added:", update.added.map(\.name)) }  // on the main queue
    }
    try query.start()

    try KeyValueStore.default.set(.string("dark"), forKey: "theme")  // merged per key across devices
    return query
}
