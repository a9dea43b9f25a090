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
        return ReplacedFileRelease.defersFreeing(inFolder: descriptor)
    }

    /// Saves `text` over `url` the way a document's save does: with a collector of the folder's
    /// flush (and of the replaced file) on this thread. Returns the collector, not yet flushed.
    static func saveCollecting(_ text: String, to url: URL) throws -> DeferredFolderFlush {
        let deferral = DeferredFolderFlush()
        try deferral.collecting { try SafeSave.write(Data(text.utf8), to: url, creating: false) }
        return deferral
    }

    @Test("a save that collects its folder's flush holds the replaced file until it releases it, then nothing is held")
    func heldUntilReleased() throws {
        try Scratch.with { folder in
            let url = try makeFile("doc.txt", containing: "old", in: folder)
            let deferral = try Self.saveCollecting("new", to: url)
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
                _ = try Self.saveCollecting("new", to: url)
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
            let deferral = try Self.saveCollecting("new", to: url)
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
        let deferral = try Self.saveCollecting("new", to: url)
        #expect(Self.heldRemovedFiles(in: folder) == 0)
        try deferral.flush()
    }

    @Test("a file taking more than 16 MiB on the disk is not held: its rename frees it, as before")
    func largeFileNotHeld() throws {
        try Scratch.with { folder in
            let url = folder.appendingPathComponent("big.bin")
            try Data(repeating: 7, count: ReplacedFileRelease.largestHeld + 4096).write(to: url)
            let deferral = try Self.saveCollecting("small now", to: url)
            #expect(Self.heldRemovedFiles(in: folder) == 0)
            try deferral.flush()
            #expect(text(at: url) == "small now")
        }
    }

    @Test("a save asked by another coordinator's read (a presenter save) releases the replaced file too")
    @MainActor func presenterSaveReleases() async throws {
        try await withOpenNote(containing: "old") { folder, url, document in
            document.edit("new, unsaved")
            #expect(try await coordinatedText(at: url) == "new, unsaved")
            #expect(!document.hasUnsavedChanges)
            SafeSave.waitForReplacedFilesToBeFreed()
            #expect(Self.heldRemovedFiles(in: folder) == 0)
            try await document.closeThrowing()
        }
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

/// The space rule, on a real local disk: a disk with room for one more copy of the file (the
/// temporary one) but not two takes save after save, as it did when the rename freed the old file.
@Suite("SafeSave on a nearly full local disk", .serialized)
struct ReplacedFileReleaseFullDiskTests {
    /// Fills the disk of `folder` until `room` bytes are left (a filler file, written whole).
    static func fill(_ folder: URL, leaving room: Int) throws {
        let filler = folder.appendingPathComponent("filler")
        let size = SmallExt4.freeBytes(folder) - room
        #expect(size > 0)
        try Data(count: max(0, size)).write(to: filler)
    }

    @Test("save after save of a 200 KiB file, each with room for its temporary copy only, all succeed; every byte is the last save's",
          .enabled(if: SmallExt4.isAvailable, Comment(rawValue: SmallExt4.unavailableMessage)))
    func plainSavesOnANearlyFullDisk() throws {
        try Scratch.with("replaced-full") { outer in
            try SmallExt4.withMount(kibibytes: 2048, inside: outer) { disk in
                let url = disk.appendingPathComponent("doc.bin")
                let size = 200 * 1024
                try SafeSave.write(Data(repeating: 0, count: size), to: url, creating: true)
                // Room for the temporary copy and a little more, never for a second old file.
                try Self.fill(disk, leaving: size + 64 * 1024)
                #expect(ReplacedFileReleaseTests.holds(in: disk))
                for round in 1...40 {
                    try SafeSave.write(Data(repeating: UInt8(round), count: size), to: url, creating: false)
                }
                #expect(try Data(contentsOf: url) == Data(repeating: 40, count: size))
                SafeSave.waitForReplacedFilesToBeFreed()
                #expect(ReplacedFileReleaseTests.heldRemovedFiles(in: disk) == 0)
            }
        }
    }

    @Test("a document saved over and over on a disk with room for one more copy: every save succeeds",
          .enabled(if: SmallExt4.isAvailable, Comment(rawValue: SmallExt4.unavailableMessage)))
    @MainActor func documentSavesOnANearlyFullDisk() async throws {
        let outer = try Scratch("replaced-full-document")
        defer { outer.remove() }
        try await SmallExt4.withMountAsync(kibibytes: 2048, inside: outer.url) { disk in
            let url = disk.appendingPathComponent("note.txt")
            let note = PlainNote(fileURL: url)
            let size = 200 * 1024
            note.text = String(repeating: "a", count: size)
            try await note.saveThrowing(to: url, for: .forCreating)
            try Self.fill(disk, leaving: size + 64 * 1024)
            for round in 0..<40 {
                note.text = String(repeating: String(UnicodeScalar(UInt8(ascii: "b") + UInt8(round % 20))), count: size)
                try await note.saveThrowing(to: url, for: .forOverwriting)
            }
            try await note.closeThrowing()
            #expect(text(at: url) == note.text)
        }
    }
}
