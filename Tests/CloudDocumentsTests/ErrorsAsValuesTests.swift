import Foundation
import Glibc
import Testing
import TestSupport
@testable import CloudDocuments

/// Errors as values (issue 17): whatever layer a failure comes through — a safe save, a document
/// save, a version add — `error.underlyingErrno` names the system error and
/// `error.isCoordinationTimeout` says whether a coordination timed out.
@Suite("Errors as values: one errno type, causes kept through every layer", .timeLimit(.minutes(1 * Polling.deadlineScale)))
struct ErrorsAsValuesTests {
    /// The layer a failure is provoked through.
    enum Layer: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case safeSave, documentSave, versionAdd
        var testDescription: String { rawValue }
    }

    /// What is wrong with the file system.
    enum Condition: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case full, readOnly
        var testDescription: String { rawValue }
        var expected: Errno { self == .full ? .noSpace : .readOnlyFileSystem }
    }

    @Test("a full or read-only tmpfs: the caller can ask the errno, whatever layer failed",
          .enabled(if: SmallTmpfs.isAvailable, Comment(rawValue: SmallTmpfs.unavailableMessage)),
          arguments: Layer.allCases, Condition.allCases)
    func systemErrorReachesTheCaller(_ layer: Layer, _ condition: Condition) async throws {
        try await SmallTmpfs.withMount(size: "64k") { mount in
            let url = try makeFile("doc.txt", containing: "original", in: mount)
            let store = VersionStore(root: mount.appendingPathComponent("store").path, limits: .init())
            // Outside the tmpfs: the big contents of a version to add.
            let contents = mount.deletingLastPathComponent().appendingPathComponent("contents.txt")
            try Data(repeating: 0x41, count: 200 * 1024).write(to: contents)
            let document = NoteDocument(fileURL: url)
            if layer == .documentSave { try await document.openThrowing() }
            if condition == .readOnly { try SmallTmpfs.remountReadOnly(mount) }
            let big = Data(repeating: 0x41, count: 200 * 1024)

            var caught: (any Error)?
            do {
                switch layer {
                case .safeSave:
                    try SafeSave.write(big, to: url, creating: false)
                case .documentSave:
                    document.replaceText(String(repeating: "x", count: 200 * 1024))
                    try await document.saveThrowing(to: url, for: .forOverwriting)
                case .versionAdd:
                    try VersionStore.$override.withValue(store) {
                        _ = try FileVersion.addOfItem(at: url, withContentsOf: contents)
                    }
                }
            } catch {
                caught = error
            }
            if layer == .documentSave { try? await document.closeThrowing() }
            let error = try #require(caught, "the \(layer) on a \(condition) file system succeeded")
            #expect(error.underlyingErrno == condition.expected, "\(error)")
            #expect(!error.isCoordinationTimeout)
            // The same question through Foundation's shape: an NSError whose underlying error it is.
            let wrapped = NSError(domain: NSCocoaErrorDomain, code: 512, userInfo: [NSUnderlyingErrorKey: error])
            #expect(wrapped.underlyingErrno == condition.expected)
        }
    }

    @Test("a coordination that times out while another thread holds the item: isCoordinationTimeout, through each layer",
          arguments: [Layer.documentSave, .versionAdd])
    func coordinationTimeoutReachesTheCaller(_ layer: Layer) async throws {
        try await Scratch.with("errors-as-values") { folder in
            let url = folder.appendingPathComponent("held.txt")
            try Data("original".utf8).write(to: url)
            let holder = LockHolder(url)
            defer { holder.release() }
            try #require(holder.waitUntilHeld(), "the other thread never got the write lock")

            var caught: (any Error)?
            switch layer {
            case .documentSave:
                // A new document (not open, so not yet a presenter the holder would ask to step aside).
                let document = NoteDocument(fileURL: url)
                document.coordinationTimeout = .milliseconds(50)
                document.replaceText("new")
                do { try await document.saveThrowing(to: url, for: .forOverwriting) } catch { caught = error }
            case .versionAdd:
                let contents = folder.appendingPathComponent("contents.txt")
                try Data("version".utf8).write(to: contents)
                let coordinator = Coordinator()
                coordinator.timeout = .milliseconds(50)
                let store = VersionStore(root: folder.appendingPathComponent("store").path, limits: .init())
                do {
                    try VersionStore.$override.withValue(store) {
                        _ = try FileVersion.addOfItem(at: url, withContentsOf: contents, coordinator: coordinator)
                    }
                } catch {
                    caught = error
                    #expect(error as? FileVersionError == .coordinationFailed(url, underlying: .timedOut))
                }
            case .safeSave:
                Issue.record("a safe save does not coordinate")
            }
            let error = try #require(caught, "the \(layer) did not time out")
            #expect(error.isCoordinationTimeout, "\(error)")
            #expect(error.underlyingError(ofType: CoordinationError.self) == .timedOut)
            #expect(error.underlyingErrno == nil)
        }
    }

    @Test("typed errno of each public error; causes are kept, not flattened",
          arguments: [
            (CoordinationError.lockFailed(path: "/l", errno: .tooManyOpenFiles), Errno.tooManyOpenFiles),
            (CoordinationError.ioFailed(path: "/l", errno: .noSpace), .noSpace),
            (CoordinationError.presenterFailed(DocumentError.diskFull(URL(fileURLWithPath: "/d"), errno: .diskQuotaExceeded)), .diskQuotaExceeded),
            (DocumentError.saveFailed(URL(fileURLWithPath: "/d"), reason: "rename failed", errno: .ioError), .ioError),
            (DocumentError.diskFull(URL(fileURLWithPath: "/d")), .noSpace),
            (DocumentError.notWritable(URL(fileURLWithPath: "/d"), errno: .permissionDenied), .permissionDenied),
            (DocumentError.couldNotLoad(URL(fileURLWithPath: "/d"), underlying: Errno.ioError), .ioError),
            (FileVersionError.storeFailed(path: "/s", call: "mkdir", errno: .readOnlyFileSystem), .readOnlyFileSystem),
            (FileVersionError.coordinationFailed(URL(fileURLWithPath: "/v"), underlying: .ioFailed(path: "/v", errno: .noSpace)), .noSpace),
            (NSError(domain: NSPOSIXErrorDomain, code: Int(EACCES)), .permissionDenied),
          ] as [(any Error & Sendable, Errno)])
    func typedErrno(_ error: any Error & Sendable, _ expected: Errno) {
        #expect(error.underlyingErrno == expected)
        #expect(!error.isCoordinationTimeout)
    }

    @Test("Errno: swift-system's names, the system's message, Codable")
    func errnoValue() throws {
        #expect(Errno.noSpace.rawValue == ENOSPC)
        #expect(Errno(EROFS) == .readOnlyFileSystem)
        #expect(Errno.noSpace.description == "No space left on device, errno \(ENOSPC)")
        let decoded = try JSONDecoder().decode(Errno.self, from: JSONEncoder().encode(Errno.timedOut))
        #expect(decoded == .timedOut)
        #expect(CoordinationError.presenterFailed(Errno.ioError) == .presenterFailed(Errno.ioError))
        #expect(CoordinationError.presenterFailed(Errno.ioError) != .presenterFailed(Errno.noSpace))
    }

    @Test("the cases carry an Errno: a switch matches it by name, and the message names it")
    func casesCarryErrno() {
        func isDiskFull(_ error: CoordinationError) -> Bool {
            switch error {
            case .ioFailed(_, .noSpace), .ioFailed(_, .diskQuotaExceeded), .lockFailed(_, .noSpace): return true
            default: return false
            }
        }
        #expect(isDiskFull(.ioFailed(path: "/a", errno: .noSpace)))
        #expect(isDiskFull(.lockFailed(path: "/a", errno: .noSpace)))
        #expect(!isDiskFull(.ioFailed(path: "/a", errno: .ioError)))
        #expect(CoordinationError.ioFailed(path: "/a", errno: .noSpace).description
                == "Could not read or write /a: No space left on device (errno \(ENOSPC)).")
        let save = DocumentError.saveFailed(URL(fileURLWithPath: "/d/n.txt"), reason: "rename failed", errno: .ioError)
        if case .saveFailed(_, _, .ioError?) = save {} else { Issue.record("saveFailed does not carry .ioError: \(save)") }
        #expect(save.failureReason?.contains("Input/output error, errno \(EIO)") == true)
        let store = FileVersionError.storeFailed(path: "/s", call: "mkdir", errno: .readOnlyFileSystem)
        #expect(store.description == "mkdir on “/s” failed: Read-only file system (errno \(EROFS)).")
        #expect(store.errno == .readOnlyFileSystem)
    }
}

/// Holds a coordinated write of an item on a thread of its own until released.
private final class LockHolder: Sendable {
    private let held = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    init(_ url: URL) {
        let held = held, done = done
        Thread.detachNewThread {
            try? Coordinator().coordinate(writingItemAt: url) { _ in
                held.signal()
                _ = done.wait(timeout: .now() + 30)
            }
            held.signal()  // if the coordination failed: never leave the test waiting
        }
    }

    /// Whether the write lock was taken within 10 seconds.
    func waitUntilHeld() -> Bool { held.wait(timeout: .now() + 10) == .success }

    func release() { done.signal() }
}
