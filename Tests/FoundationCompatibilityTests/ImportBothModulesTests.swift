// A file that imports CloudDocuments and FoundationCompatibility together, as an app mixing
// the Swift-native API and Apple's names does: every name below must resolve without ambiguity.
import CloudDocuments
import FoundationCompatibility
import Testing

@Suite("CloudDocuments and FoundationCompatibility in one file")
struct ImportBothModulesTests {
    @Test("FileVersion and NSFileVersion, their options and Foundation's names resolve unambiguously")
    func namesResolve() throws {
        let scratch = try Scratch()
        let url = scratch.file("both.txt", contents: "x")
        let native: [FileVersion] = try FileVersion.otherVersionsOfItem(at: url)
        let apple: [NSFileVersion]? = NSFileVersion.otherVersionsOfItem(at: url)
        let adding: NSFileVersion.AddingOptions = .byMoving
        let nativeAdding: FileVersion.AddingOptions = .byMoving
        let replacing: NSFileVersion.ReplacingOptions = .byMoving
        let coordinator = NSFileCoordinator(filePresenter: nil)
        let nativeCoordinator = Coordinator()
        var error: NSError?
        coordinator.coordinate(readingItemAt: url, options: [], error: &error) { _ in }
        #expect(error == nil)
        #expect(native.isEmpty && apple?.isEmpty == true)
        #expect(adding.rawValue == nativeAdding.rawValue && replacing.rawValue == 1)
        _ = nativeCoordinator
    }
}
