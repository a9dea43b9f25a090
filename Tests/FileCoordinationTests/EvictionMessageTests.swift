import Foundation
import Testing
import TestSupport
@testable import FileCoordination

/// A presenter that does not implement `accommodatePresentedItemEviction`: it gets the default.
private final class PlainPresenter: FilePresenter, Sendable {
    let presentedItemURL: URL?
    let presentedItemOperationQueue = OperationQueue()
    init(_ url: URL) { presentedItemURL = url }
}

/// A presenter that accommodates an eviction, recording that it was asked.
private final class EvictablePresenter: FilePresenter, Sendable {
    let presentedItemURL: URL?
    let presentedItemOperationQueue = OperationQueue()
    let asked = Locked(0)
    init(_ url: URL) { presentedItemURL = url }
    func accommodatePresentedItemEviction(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        asked.withLock { $0 += 1 }
        completionHandler(nil)
    }
}

/// `.forEvicting` (files on demand): presenters are asked `accommodatePresentedItemEviction`
/// before the accessor runs; the default refuses, as Apple's does; a `CloudDocument` in another
/// process closes when it has nothing unsaved and refuses when it has.
@Suite("Eviction: presenters asked to accommodate it, in this process and in others", .serialized)
struct EvictionMessageTests {
    @Test("a presenter that does not implement it refuses (the accessor does not run); one that does is asked once")
    func inThisProcess() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let file = scratch.file("evicted.txt", contents: "bytes")
        let plain = PlainPresenter(file)
        Coordinator.addFilePresenter(plain)
        var ran = false
        do {
            try Coordinator().coordinate(writingItemAt: file, options: .forEvicting) { _ in ran = true }
            Issue.record("the eviction was not refused")
        } catch let error as CoordinationError {
            #expect(error.underlyingError is EvictionNotAccommodated, "\(error)")
            #expect(error.description.contains("does not let it be evicted"), "\(error)")
        }
        #expect(!ran)
        Coordinator.removeFilePresenter(plain)

        let evictable = EvictablePresenter(file)
        Coordinator.addFilePresenter(evictable)
        defer { Coordinator.removeFilePresenter(evictable) }
        try Coordinator().coordinate(writingItemAt: file, options: .forEvicting) { _ in ran = true }
        #expect(ran)
        #expect(evictable.asked.withLock { $0 } == 1)
        // Other writes do not ask.
        try Coordinator().coordinate(writingItemAt: file, options: .forMerging) { _ in }
        #expect(evictable.asked.withLock { $0 } == 1)
    }

    private static func document(_ file: URL, _ setup: RemoteDeliveryTests.Setup) throws -> ChildProcess {
        var environment = ProcessInfo.processInfo.environment
        environment[LockDirectory.environmentVariable] = setup.lockDirectory
        environment[RemotePresence.environmentVariable] = "1"
        let child = try ChildProcess(["remote-document", file.path], environment: environment)
        #expect(child.expect("OPENED")?.hasPrefix("OPENED") == true)
        return child
    }

    @Test("a document in another process closes for an eviction when it has nothing unsaved, and refuses (staying open with its edit) when it has")
    func documentInAnotherProcess() throws {
        let setup = try RemoteDeliveryTests.Setup()
        let clean = try Self.document(setup.file, setup)
        defer { clean.closeInput(); clean.waitForExit() }
        try setup.coordinator(timeout: nil).coordinate(writingItemAt: setup.file, options: .forEvicting) { _ in }
        clean.send("state")
        #expect(clean.readLine() == "STATE closed")

        let dirty = try Self.document(setup.file, setup)
        defer { dirty.closeInput(); dirty.waitForExit() }
        dirty.send("edit unsaved words")
        #expect(dirty.readLine() == "EDITED")
        var ran = false
        do {
            try setup.coordinator(timeout: nil).coordinate(writingItemAt: setup.file, options: .forEvicting) { _ in ran = true }
            Issue.record("the eviction was not refused")
        } catch let error as CoordinationError {
            #expect(error.description.contains("unsaved changes"), "\(error)")
        }
        #expect(!ran)
        dirty.send("state")
        #expect(dirty.readLine() == "STATE unsaved")
    }
}
