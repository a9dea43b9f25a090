import Foundation
import Testing
@testable import FileCoordination

/// Runtimes own what used to be process-wide: two runtimes in one process behave towards each
/// other like two processes — they share locks only through a shared lock directory, and never
/// message each other's presenters.
@Suite("Coordination runtime")
struct RuntimeTests {
    @Test("runtimes with different lock directories do not see each other's locks")
    func separateLockDirectoriesDoNotExclude() throws {
        let scratch = try Scratch()
        let first = CoordinationRuntime(lockDirectoryPath: scratch.url.path + "/locks-a")
        let second = CoordinationRuntime(lockDirectoryPath: scratch.url.path + "/locks-b")
        let file = scratch.file("doc.txt", contents: "x")
        let holder = Holder.writing(file, coordinator: Coordinator(runtime: first))
        #expect(holder.error.value == nil)
        #expect(writeGetsIn(file, in: second), "another lock directory holds no lock of the first")
        #expect(readGetsIn(file, in: second))
        #expect(writeWaits(file, in: first), "the first runtime's own writer still excludes its writers")
        holder.release()
        let lockFiles = try FileManager.default.subpathsOfDirectory(atPath: scratch.url.path + "/locks-a")
        #expect(!lockFiles.isEmpty, "the first runtime's lock files live in its own lock directory")
    }

    @Test("runtimes with the same lock directory exclude each other, like two processes")
    func sharedLockDirectoryExcludes() throws {
        let scratch = try Scratch()
        let locks = scratch.url.path + "/locks"
        let first = CoordinationRuntime(lockDirectoryPath: locks)
        let second = CoordinationRuntime(lockDirectoryPath: locks)
        let file = scratch.file("doc.txt", contents: "x")
        let writer = Holder.writing(file, coordinator: Coordinator(runtime: first))
        #expect(writer.error.value == nil)
        #expect(writeWaits(file, in: second))
        #expect(readWaits(file, in: second))
        writer.release()
        let reader = Holder.reading(file, coordinator: Coordinator(runtime: second))
        #expect(readGetsIn(file, in: first), "readers share across runtimes")
        #expect(writeWaits(file, in: first))
        reader.release()
        #expect(writeGetsIn(file, in: first))
    }

    @Test("an unusable lock directory makes the runtime's coordinations throw, and only its own")
    func unusableLockDirectory() throws {
        let scratch = try Scratch()
        let broken = CoordinationRuntime(lockDirectoryPath: "relative/locks")
        let file = scratch.file("doc.txt", contents: "x")
        #expect(fails(with: "lockDirectoryUnusable") { try Coordinator(runtime: broken).coordinate(readingItemAt: file) { _ in } })
        try Coordinator().coordinate(readingItemAt: file) { _ in }
    }

    @Test("presenters registered in one runtime are not messaged by another runtime's coordinators")
    func presentersStayInTheirRuntime() throws {
        let scratch = try Scratch()
        let locks = scratch.url.path + "/locks"
        let first = CoordinationRuntime(lockDirectoryPath: locks)
        let second = CoordinationRuntime(lockDirectoryPath: locks)
        let file = scratch.file("doc.txt", contents: "x")
        let presenter = RecordingPresenter(file)
        first.addFilePresenter(presenter)
        defer { first.removeFilePresenter(presenter) }
        #expect(first.filePresenters.contains { $0 === presenter })
        #expect(!Coordinator.filePresenters.contains { $0 === presenter }, "not in the process default")

        // No bytes change: only messages could reach the presenter.
        try Coordinator(runtime: second).coordinate(writingItemAt: file) { _ in }
        try Coordinator().coordinate(writingItemAt: file) { _ in }
        #expect(presenter.log.isEmpty, "other runtimes' coordinators do not message it")

        try Coordinator(runtime: first).coordinate(writingItemAt: file) { _ in }
        #expect(presenter.log.sorted() == ["didChange", "reacquireFromWriter", "relinquishToWriter"])
    }

    @Test("package extensions and moves are the runtime's own")
    func packagesAndMovesArePerRuntime() throws {
        let scratch = try Scratch()
        let first = CoordinationRuntime(lockDirectoryPath: scratch.url.path + "/locks")
        first.registerPackageExtension("runtimepkg")
        let package = try scratch.directory("doc.runtimepkg")
        let inner = scratch.file("doc.runtimepkg/inner.txt", contents: "x")
        #expect(!Coordinator.packageExtensions.contains("runtimepkg"))
        #expect(ResolvedAccess.resolve([.readingIntent(with: inner)], runtime: first)[0].lockPath == CanonicalPath.of(package, in: CoordinationRuntime.process.paths))
        #expect(ResolvedAccess.resolve([.readingIntent(with: inner)], runtime: .process)[0].lockPath == CanonicalPath.of(inner, in: CoordinationRuntime.process.paths))

        let before = CoordinationRuntime.process.moveLog.sequence
        Coordinator(runtime: first).item(at: inner, didMoveTo: scratch.url.appending(path: "moved.txt"))
        #expect(first.moveLog.sequence == 1)
        #expect(CoordinationRuntime.process.moveLog.sequence == before)
    }

    @Test("a runtime's change monitor reports a write made through another runtime, like one from another process")
    func changesFromAnotherRuntimeAreNoticed() throws {
        let scratch = try Scratch()
        let locks = scratch.url.path + "/locks"
        let first = CoordinationRuntime(lockDirectoryPath: locks)
        let second = CoordinationRuntime(lockDirectoryPath: locks)
        let file = scratch.file("doc.txt", contents: "a")
        let (presenter, changed) = RecordingPresenter.signallingChanges(file)
        first.registry.add(presenter)
        defer { first.registry.remove(presenter) }
        try Coordinator(runtime: second).coordinate(writingItemAt: file) { url in
            try "b".write(to: url, atomically: true, encoding: .utf8)
        }
        #expect(changed.wait(), "the first runtime's monitor told its presenter, through its delivery")
        #expect(presenter.log == ["didChange"], "and the second runtime's coordinator asked it nothing")
    }
}
