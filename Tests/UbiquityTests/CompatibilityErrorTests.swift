import Foundation
import Testing
import TestSupport
@testable import FoundationCompatibility
@testable import Ubiquity

/// FileManager's iCloud methods (FoundationCompatibility): Cocoa's error codes, and the same
/// notification name as the Swift-native API.
@Suite("FileManager iCloud methods: Cocoa's errors")
struct CompatibilityErrorTests {
    @Test("each UbiquityError maps to the Cocoa code a Cocoa developer checks, with the URL and the original error",
          arguments: [
            (UbiquityError.notSignedIn, NSUbiquitousFileUbiquityServerNotAvailable),
            (.itemNotInContainer(path: "/x"), NSUbiquitousFileUnavailableError),
            (.itemNotFound(path: "/x"), NSFileNoSuchFileError),
            (.destinationExists(path: "/x"), NSFileWriteFileExistsError),
            (.destinationNotInContainer(path: "/x"), NSFileWriteInvalidFileNameError),
            (.destinationInContainer(path: "/x"), NSFileWriteInvalidFileNameError),
            (.providerDoesNotSupportPlaceholders(provider: "Syncthing"), NSFeatureUnsupportedError),
            (.moveFailed(source: "/a", destination: "/b", errno: .noSpace), NSFileWriteOutOfSpaceError),
            (.moveFailed(source: "/a", destination: "/b", errno: .permissionDenied), NSFileWriteNoPermissionError),
            (.moveFailed(source: "/a", destination: "/b", errno: .fileNameTooLong), NSFileWriteInvalidFileNameError),
            (.moveFailed(source: "/a", destination: "/b", errno: .ioError), NSFileWriteUnknownError),
            (.configurationInvalid(path: "/c", line: 1, reason: "r"), NSFileReadCorruptFileError),
            (.coordinationFailed(path: "/x", underlying: .timedOut), NSFileLockingError),
            (.invalidName(name: "../x", reason: "r"), NSFileWriteInvalidFileNameError),
            (.removeFailed(path: "/x", errno: .permissionDenied), NSFileWriteNoPermissionError),
            (.removeFailed(path: "/x", errno: .readOnlyFileSystem), NSFileWriteVolumeReadOnlyError),
            (.itemUnavailable(path: "/x", errno: .permissionDenied), NSFileReadNoPermissionError),
            (.itemUnavailable(path: "/x", errno: .ioError), NSFileReadUnknownError),
          ])
    func mapping(_ error: UbiquityError, _ code: Int) {
        let item = URL(fileURLWithPath: "/item")
        let mapped = UbiquityErrorMapping.nsError(for: error, item: item)
        #expect(mapped.domain == NSCocoaErrorDomain)
        #expect(mapped.code == code)
        #expect(mapped.localizedDescription == error.errorDescription)
        #expect(mapped.userInfo[NSUnderlyingErrorKey] as? UbiquityError == error)
        #expect(mapped.userInfo[NSFilePathErrorKey] as? String != nil)
    }

    @Test("Apple's notification name and the Swift-native one are the same name")
    func notificationName() {
        #expect(Notification.Name.NSUbiquityIdentityDidChange == UbiquityAccount.identityDidChangeNotification)
        #expect(Notification.Name.NSUbiquityIdentityDidChange.rawValue == "NSUbiquityIdentityDidChangeNotification")
    }

    @Test("FileManager.setUbiquitous moves with presenters following, and a clash is NSFileWriteFileExistsError")
    func fileManagerMove() async throws {
        SharedUbiquityFixture.setUp()
        let container = try #require(FileManager.default.url(forUbiquityContainerIdentifier: nil))
        #expect(container.standardizedFileURL.path == SharedUbiquityFixture.defaultContainer.standardizedFileURL.path)
        let local = try SharedUbiquityFixture.localFolder().appending(path: "fm.txt")
        try Data("fm".utf8).write(to: local)
        let presenter = MoveRecorder(local)
        Coordinator.addFilePresenter(presenter)
        defer { Coordinator.removeFilePresenter(presenter) }
        let destination = container.appending(path: "Documents/fm-\(UUID().uuidString).txt")
        try await onOwnThread { try FileManager.default.setUbiquitous(true, itemAt: local, destinationURL: destination) }
        #expect(try await onOwnThread { presenter.moved.wait(timeout: .now() + 30) == .success })
        #expect(presenter.moves.withLock { $0.last?.standardizedFileURL.path } == destination.standardizedFileURL.path)

        try Data("again".utf8).write(to: local)
        do {
            try await FileManager.default.setUbiquitous(true, itemAt: local, destinationURL: destination)
            Issue.record("expected a clash")
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain && error.code == NSFileWriteFileExistsError)
            #expect(error.userInfo[NSFilePathErrorKey] as? String == destination.path)
        }
        #expect(text(at: destination) == "fm")
    }
}
