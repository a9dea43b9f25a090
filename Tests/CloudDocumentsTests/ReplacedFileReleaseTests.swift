import Foundation
import Glibc
import Testing
import TestSupport
@testable import CloudDocuments

/// The file a save replaces is freed after the save, not inside its rename (`ReplacedFileRelease`):
/// held by a descriptor until the folder is flushed, then released — never leaked, whatever
/// fails, and only where it helps.
@Suite("SafeSave frees the replaced file after the save")
struct ReplacedFileReleaseTests {
    /// Descriptors of this process naming a removed file in `folder` (“… (deleted)”).
    static func heldRemovedFiles(in folder: URL) -> Int {
        let prefix = folder.resolvingSymlinksInPath().path + "/"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.filter { name in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name) else { return false }
            return target.hasPrefix(prefix) && target.hasSuffix(" (deleted)")
        }.count
    }

    /// Whether saves in `folder` hold the replaced file (a local disk: ext4, XFS, …).
    static func holds(in folder: URL) -> Bool {
        let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { if descriptor >= 0 { close(descriptor) } }
        return ReplacedFileRelease.isOnLocalDisk(folder: descriptor)
    }

    @Test("a save that collects its folder's flush holds the replaced file until it releases it, then nothing is held")
    func heldUntilReleased() throws {
        try Scratch.with { folder in
            let url = try makeFile("doc.txt", containing: "old", in: folder)
            let deferral = DeferredFolderFlush()
            try deferral.collecting { try SafeSave.write(Data("new".utf8), to: url, creating: false) }
            #expect(Self.heldRemovedFiles(in: folder) == (Self.holds(in: folder) ? 1 : 0))
            #expect(text(at: url) == "new")
            try deferral.flush()
            deferral.releaseReplacedFiles(on: nil)
            SafeSave.waitForReplacedFilesToBeFreed()
            #expect(Self.heldRemovedFiles(in: folder) == 0)
        }
    }

    @Test("a save whose collector is dropped without flushing (the save failed) releases the replaced file")
    func releasedByDeinit() throws {
        try Scratch.with { folder in
            let url = try makeFile("doc.txt", containing: "old", in: folder)
            do {
                let deferral = DeferredFolderFlush()
                try deferral.collecting { try SafeSave.write(Data("new".utf8), to: url, creating: false) }
            }
            SafeSave.waitForReplacedFilesToBeFreed()
            #expect(Self.heldRemovedFiles(in: folder) == 0)
        }
    }

    @Test("a save whose folder flush fails after the rename still releases the replaced file")
    func releasedAfterFolderFlushFailure() throws {
        try Scratch.with { folder in
            let url = try makeFile("doc.txt", containing: "old", in: folder)
            try withInjectedFailure(at: .directoryFsync, errno: EIO, forTarget: url) {
                expectDocumentError("saveFailed") { try SafeSave.write(Data("new".utf8), to: url, creating: false) }
            }
            SafeSave.waitForReplacedFilesToBeFreed()
            #expect(Self.heldRemovedFiles(in: folder) == 0)
            #expect(text(at: url) == "new")
        }
    }

    @Test("a file with another hard link is not held: the rename frees nothing")
    func hardLinkedFileNotHeld() throws {
        try Scratch.with { folder in
            let url = try makeFile("doc.txt", containing: "old", in: folder)
            let other = folder.appendingPathComponent("other-link")
            #expect(link(url.path, other.path) == 0)
            let deferral = DeferredFolderFlush()
            try deferral.collecting { try SafeSave.write(Data("new".utf8), to: url, creating: false) }
            #expect(Self.heldRemovedFiles(in: folder) == 0)
            #expect(text(at: other) == "old")
            try deferral.flush()
        }
    }

    @Test("on tmpfs (/dev/shm) nothing is held: freeing there costs the save nothing",
          .enabled(if: FileManager.default.fileExists(atPath: "/dev/shm"), "needs /dev/shm"))
    func tmpfsNotHeld() throws {
        let folder = URL(fileURLWithPath: "/dev/shm/clouddocs-replaced-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try makeFile("doc.txt", containing: "old", in: folder)
        let deferral = DeferredFolderFlush()
        try deferral.collecting { try SafeSave.write(Data("new".utf8), to: url, creating: false) }
        #expect(Self.heldRemovedFiles(in: folder) == 0)
        try deferral.flush()
    }

    @Test("a document's 200 saves leave no replaced file held once released, and the file holds the last one")
    @MainActor func documentSavesLeaveNothingHeld() async throws {
        try await Scratch.with { folder in
            let url = folder.appendingPathComponent("note.txt")
            let note = PlainNote(fileURL: url)
            try await note.saveThrowing(to: url, for: .forCreating)
            for index in 0..<200 {
                note.text = "version \(index)"
                try await note.saveThrowing(to: url, for: .forOverwriting)
            }
            try await note.closeThrowing()
            SafeSave.waitForReplacedFilesToBeFreed()
            #expect(Self.heldRemovedFiles(in: folder) == 0)
            #expect(text(at: url) == "version 199")
        }
    }
}
