import Foundation
import FoundationCompatibility
import Testing
import TestSupport

/// Runs the iCloud routines of AppleStyleUbiquityCode.swift against the shared account, configured
/// by `SharedUbiquityFixture` (root with containers `com.example.notes` and `com.example.other`).
@Suite("Apple-style iCloud code on Linux")
struct AppleStyleUbiquityCodeTests {
    private func result(_ start: (@escaping @Sendable (Result<URL, Error>) -> Void) -> Void) -> Result<URL, Error>? {
        let box = ResultBox()
        start { box.set($0) }
        return box.wait()
    }

    @Test("the handy routines: container and Documents URLs, move to the cloud, a clash, move back to a free local name")
    func handyRoutines() throws {
        SharedUbiquityFixture.setUp()
        let locations = DocumentsLocations(localDocumentsURL: try SharedUbiquityFixture.localFolder())
        let observer = CloudAccountObserver()  // reads the token, observes .NSUbiquityIdentityDidChange
        defer { withExtendedLifetime(observer) {} }
        #expect(locations.isCloudAvailable)
        let cloudFolder = try #require(locations.ubiquitousDocumentsURL)
        #expect(cloudFolder.standardizedFileURL.path == SharedUbiquityFixture.defaultContainer.appendingPathComponent("Documents").path)

        let name = "recipe-\(UUID().uuidString).txt"
        let local = locations.localDocumentsURL.appendingPathComponent(name)
        try Data("flour".utf8).write(to: local)
        let moved = try #require(try result { locations.moveToCloud(local, completion: $0) }?.get())
        #expect(moved == cloudFolder.appendingPathComponent(name))
        #expect(locations.isInCloud(moved))
        #expect(!locations.isInCloud(local))
        #expect(locations.prepareToOpen(moved))

        // Moving it again: the clash is Cocoa's file-exists error, and nothing is replaced.
        try Data("other".utf8).write(to: local)
        let clash = result { locations.moveToCloud(local, completion: $0) }
        guard case .failure(let error as NSError)? = clash else { Issue.record("expected a failure, got \(String(describing: clash))"); return }
        #expect(error.domain == NSCocoaErrorDomain && error.code == NSFileWriteFileExistsError)
        #expect(try String(contentsOf: moved, encoding: .utf8) == "flour")

        // Back to local: the name is taken, so the routine picks "name (2)".
        let back = try #require(try result { locations.moveToLocal(moved, completion: $0) }?.get())
        #expect(back.lastPathComponent == name.replacingOccurrences(of: ".txt", with: " (2).txt"))
        #expect(try String(contentsOf: back, encoding: .utf8) == "flour")
    }

    @Test("evicting and downloading say what is unsupported in Cocoa's codes; an item outside the cloud is not ubiquitous")
    func placeholderCodes() throws {
        SharedUbiquityFixture.setUp()
        let documents = try #require(FileManager.default.url(forUbiquityContainerIdentifier: "com.example.other"))
            .appendingPathComponent("Documents")
        let item = documents.appendingPathComponent("evict-\(UUID().uuidString).txt")
        try Data("x".utf8).write(to: item)
        for call in [FileManager.default.evictUbiquitousItem(at:), FileManager.default.startDownloadingUbiquitousItem(at:)] {
            do {
                try call(item)
                Issue.record("expected NSFeatureUnsupportedError")
            } catch let error as NSError {
                #expect(error.domain == NSCocoaErrorDomain && error.code == NSFeatureUnsupportedError)
                #expect(error.userInfo[NSURLErrorKey] as? URL == item)
            }
        }
        let local = try SharedUbiquityFixture.localFolder().appendingPathComponent("x.txt")
        try Data("x".utf8).write(to: local)
        #expect(!FileManager.default.isUbiquitousItem(at: local))
        #expect(throws: (any Error).self) { try FileManager.default.evictUbiquitousItem(at: local) }
        do {
            try FileManager.default.evictUbiquitousItem(at: local)
        } catch let error as NSError {
            #expect(error.code == NSUbiquitousFileUnavailableError)
        }
    }
}

/// One result handed from a completion handler on another queue to the waiting test.
final class ResultBox: @unchecked Sendable {
    // @unchecked: `value` is written once before `done` is signalled and read after the wait.
    private var value: Result<URL, Error>?
    private let done = DispatchSemaphore(value: 0)

    func set(_ result: Result<URL, Error>) {
        value = result
        done.signal()
    }

    func wait() -> Result<URL, Error>? {
        done.wait(timeout: .now() + 30) == .success ? value : nil
    }
}
