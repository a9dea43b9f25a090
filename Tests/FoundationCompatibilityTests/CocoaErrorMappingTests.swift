import FileCoordination
import Foundation
import Testing
@testable import FoundationCompatibility

/// Every `CoordinationError` becomes an `NSError` in Cocoa's domain with the code a Cocoa
/// developer checks, its description, the item's URL and the original error underneath.
@Suite("Cocoa error mapping")
struct CocoaErrorMappingTests {
    let item = URL(fileURLWithPath: "/tmp/compat-mapping/doc.txt")

    private func map(_ error: any Error, writing: Bool = false, uploading: Bool = false) -> NSError {
        CocoaErrorMapping.nsError(for: error, access: .init(url: item, isWriting: writing,
                                                            uploadedItem: uploading ? item : nil))
    }

    /// The checks every mapped CoordinationError passes.
    private func expectCocoa(_ error: NSError, code: Int, from original: CoordinationError,
                             url: URL? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error.domain == NSCocoaErrorDomain, sourceLocation: sourceLocation)
        #expect(error.code == code, sourceLocation: sourceLocation)
        #expect(!error.localizedDescription.isEmpty, sourceLocation: sourceLocation)
        #expect(error.userInfo[NSURLErrorKey] as? URL == (url ?? item), sourceLocation: sourceLocation)
        #expect(error.userInfo[NSFilePathErrorKey] as? String == (url ?? item).path, sourceLocation: sourceLocation)
        #expect((error.userInfo[NSUnderlyingErrorKey] as? CoordinationError)?.description == original.description,
                sourceLocation: sourceLocation)
    }

    @Test("cancelled is NSUserCancelledError (3072)")
    func cancelled() {
        let error = map(CoordinationError.cancelled)
        expectCocoa(error, code: NSUserCancelledError, from: .cancelled)
        #expect(error.code == 3072)
        #expect(error.localizedDescription == CoordinationError.cancelled.description)
    }

    static let elsewhere = URL(fileURLWithPath: "/tmp/compat-mapping/moved.txt")

    /// A wait that cannot succeed, and the item its error names (nil: the accessed item).
    @Test("waits that cannot succeed are NSFileLockingError (255), with the item they concern", arguments: [
        (.timedOut, nil),
        (.wouldDeadlock(elsewhere), elsewhere),
        (.lockDirectoryUnusable(path: "/run/user/0/locks", reason: "it is writable by others"), nil),
        (.lockFailed(path: "/run/user/0/locks/x", errno: .permissionDenied), nil),
        (.itemKeptMoving(elsewhere), elsewhere),
    ] as [(CoordinationError, URL?)])
    func lockingError(_ original: CoordinationError, url: URL?) {
        let error = map(original, writing: true)
        expectCocoa(error, code: NSFileLockingError, from: original, url: url)
        #expect(error.code == 255)
        #expect(error.localizedDescription == original.description)
    }

    @Test("a lock file that cannot be made for lack of space is NSFileWriteOutOfSpaceError (640)", arguments: [Errno.noSpace, .diskQuotaExceeded])
    func outOfSpace(_ number: Errno) {
        let original = CoordinationError.lockFailed(path: "/run/user/0/locks/x", errno: number)
        expectCocoa(map(original), code: NSFileWriteOutOfSpaceError, from: original)
    }

    @Test("a presenter's refusal: its own code if Cocoa's, else the read or write unknown error; its description")
    func presenterFailed() {
        let custom = NSError(domain: "com.example", code: 9, userInfo: [NSLocalizedDescriptionKey: "Nope."])
        let original = CoordinationError.presenterFailed(custom)
        let read = map(original)
        expectCocoa(read, code: NSFileReadUnknownError, from: original)
        #expect(read.localizedDescription == "Nope.")
        expectCocoa(map(original, writing: true), code: NSFileWriteUnknownError, from: original)

        let cocoa = CoordinationError.presenterFailed(CocoaError(.fileWriteVolumeReadOnly))
        expectCocoa(map(cocoa, writing: true), code: NSFileWriteVolumeReadOnlyError, from: cocoa)
    }

    @Test("an invalid request is the read or write unknown error; an I/O failure on a missing item is NSFileReadNoSuchFileError (260), a full disk 640")
    func invalidRequest() {
        let original = CoordinationError.invalidRequest("use at most one writing option per intent (got 3).")
        expectCocoa(map(original), code: NSFileReadUnknownError, from: original)
        expectCocoa(map(original, writing: true), code: NSFileWriteUnknownError, from: original)
        let upload = CoordinationError.ioFailed(path: "/nowhere/item", errno: .noSuchFileOrDirectory)
        expectCocoa(map(upload, uploading: true), code: NSFileReadNoSuchFileError, from: upload)
        #expect(map(upload, uploading: true).code == 260)
        let full = CoordinationError.ioFailed(path: "/tmp/x", errno: .noSpace)
        expectCocoa(map(full, uploading: true), code: NSFileWriteOutOfSpaceError, from: full)
        let other = CoordinationError.ioFailed(path: "/tmp/x", errno: .ioError)
        expectCocoa(map(other), code: NSFileReadUnknownError, from: other)
    }

    @Test("other errors: Cocoa's pass through, the rest are wrapped")
    func otherErrors() {
        let cocoa = NSError(domain: NSCocoaErrorDomain, code: NSFileReadCorruptFileError)
        #expect(map(cocoa) === cocoa)
        let posix = POSIXError(.EIO)
        let wrapped = map(posix, writing: true)
        #expect(wrapped.domain == NSCocoaErrorDomain && wrapped.code == NSFileWriteUnknownError)
        #expect(wrapped.userInfo[NSUnderlyingErrorKey] as? POSIXError == posix)
    }

    @Test("a .forUploading read of an item that does not exist fails with NSFileReadNoSuchFileError through the API")
    func uploadOfMissingItem() throws {
        let scratch = try Scratch()
        let missing = scratch.file("missing.txt")
        var error: NSError?
        var accessorRan = false
        NSFileCoordinator(filePresenter: nil).coordinate(readingItemAt: missing, options: .forUploading, error: &error) { _ in
            accessorRan = true
        }
        #expect(!accessorRan)
        #expect(error?.domain == NSCocoaErrorDomain)
        #expect(error?.code == NSFileReadNoSuchFileError)
    }
}
