import Foundation
import Glibc
import Testing
@testable import CloudDocuments

/// Issue 6, bug 13: temporary items of saves killed midway (`kill -9`) are removed by later saves
/// and opens of the same document, and the temporary item of a live save never is. The writers
/// are real processes, stopped at a known point of their save (they say so through a pipe).
@Suite("Temporary files of killed saves")
struct StrayTemporaryFilesTests {
    /// The hidden temporary items in `folder`.
    func temporaryItems(in folder: URL) -> [String] {
        listing(folder).filter { $0.contains(".cdsave-") }
    }

    @Test("a save removes the temporary file of a save killed with SIGKILL midway")
    func killedFileSaveIsReclaimedBySave() throws {
        try Scratch.with { folder in
            let url = try makeFile("doc.txt", containing: "original", in: folder)
            let worker = try SaveWorker(saving: "file", to: url)
            #expect(temporaryItems(in: folder).count == 1, "the worker's temporary file")
            worker.kill9()
            #expect(temporaryItems(in: folder).count == 1, "left behind by the killed worker")
            #expect(text(at: url) == "original")

            try SafeSave.write(Data("saved".utf8), to: url, creating: false)
            #expect(listing(folder) == ["doc.txt"], "the stray temporary file is gone")
            #expect(text(at: url) == "saved")
        }
    }

    @Test("opening a document removes the temporary file of a save killed midway")
    func killedFileSaveIsReclaimedByOpen() async throws {
        try await withNote(containing: "original") { folder, url, document in
            let worker = try SaveWorker(saving: "file", to: url)
            worker.kill9()
            #expect(temporaryItems(in: folder).count == 1)
            try await document.openThrowing()
            #expect(listing(folder) == ["note.txt"])
            #expect(document.text == "original")
            try await document.closeThrowing()
        }
    }

    @Test("a save leaves alone the temporary file of a save still running in another process")
    func liveFileSaveIsNotReclaimed() throws {
        try Scratch.with { folder in
            let url = try makeFile("doc.txt", containing: "original", in: folder)
            let worker = try SaveWorker(saving: "file", to: url)
            let before = temporaryItems(in: folder)
            #expect(before.count == 1)

            try SafeSave.write(Data("saved".utf8), to: url, creating: false)
            #expect(temporaryItems(in: folder) == before, "the live worker's temporary file is kept")
            #expect(text(at: url) == "saved")

            #expect(worker.finish() == "SAVED", "the worker completes its save")
            #expect(listing(folder) == ["doc.txt"])
            #expect(bytes(at: url) == Data(repeating: 0x41, count: 2 * SafeSave.chunkSize))
        }
    }

    @Test("a package save removes the temporary folder of a package save killed midway, not a live one's")
    func packageSaves() throws {
        try Scratch.with { folder in
            let url = folder.appendingPathComponent("doc.pkg")
            let first = try FilePackage(entries: ["a.txt": .file(Data("first".utf8))])
            try SafeSave.writePackage(first, to: url, creating: true)

            // The live worker first: the other one's save starts by reclaiming strays, and must
            // leave the live worker's folder alone too.
            let live = try SaveWorker(saving: "package", to: url)
            let killed = try SaveWorker(saving: "package", to: url)
            #expect(temporaryItems(in: folder).count == 2)
            killed.kill9()
            #expect(temporaryItems(in: folder).count == 2, "the killed worker's folder is left behind")
            let second = try FilePackage(entries: ["b.txt": .file(Data("second".utf8))])
            try SafeSave.writePackage(second, to: url, creating: false)
            #expect(temporaryItems(in: folder).count == 1, "only the live worker's folder is left")
            #expect(listing(url) == ["b.txt"])

            #expect(live.finish() == "SAVED")
            #expect(listing(folder) == ["doc.pkg"])
            #expect(listing(url) == ["one.bin", "two.bin"])
        }
    }

    @Test("a temporary file that nobody locks is reclaimed; one locked in this process is not")
    func lockDecidesInProcess() throws {
        try Scratch.with { folder in
            let target = folder.appendingPathComponent("doc.txt").path
            let stray = SavePaths.siblingName(of: target, marker: StrayTemporaryFiles.marker)
            try put("stray", at: URL(fileURLWithPath: stray))
            let live = SavePaths.siblingName(of: target, marker: StrayTemporaryFiles.marker)
            let (file, lock) = try StrayTemporaryFiles.createLockedFile(live, flags: O_CREAT | O_EXCL | O_WRONLY, mode: 0o600)
            try file.close()  // The lock outlives the writer's descriptor.

            #expect(StrayTemporaryFiles.reclaim(besideTarget: target) == 1)
            #expect(listing(folder) == [(live as NSString).lastPathComponent])
            lock.release()
            #expect(StrayTemporaryFiles.reclaim(besideTarget: target) == 1)
            #expect(listing(folder).isEmpty)
        }
    }

    @Test("a reclaimer that removes a new temporary file before its writer locked it: the writer creates it again")
    func reclaimedBeforeLocked() throws {
        try Scratch.with { folder in
            let url = try makeFile("doc.txt", containing: "original", in: folder)
            let removed = Locked(0)
            StrayTemporaryFiles.onNextCreation(inFolder: folder.path) {
                removed.withLock { $0 += StrayTemporaryFiles.reclaim(besideTarget: url.path) }
            }
            try SafeSave.write(Data("saved".utf8), to: url, creating: false)
            #expect(removed.withLock { $0 } == 1, "the reclaimer took the unlocked new file")
            #expect(listing(folder) == ["doc.txt"])
            #expect(text(at: url) == "saved")
        }
    }

    @Test("the same race for a package's temporary folder")
    func packageReclaimedBeforeLocked() throws {
        try Scratch.with { folder in
            let url = folder.appendingPathComponent("doc.pkg")
            let removed = Locked(0)
            StrayTemporaryFiles.onNextCreation(inFolder: folder.path) {
                removed.withLock { $0 += StrayTemporaryFiles.reclaim(besideTarget: url.path) }
            }
            try SafeSave.writePackage(try FilePackage(entries: ["a.txt": .file(Data("a".utf8))]), to: url, creating: true)
            #expect(removed.withLock { $0 } == 1)
            #expect(listing(folder) == ["doc.pkg"])
            #expect(listing(url) == ["a.txt"])
        }
    }

    @Test("symbolic links and FIFOs named like temporary items are left alone, and so is what a link points to")
    func otherKindsAreLeftAlone() throws {
        try Scratch.with { folder in
            let target = folder.appendingPathComponent("doc.txt").path
            let elsewhere = try makeFile("elsewhere.txt", containing: "keep", in: folder)
            let link = folder.appendingPathComponent(".doc.txt.cdsave-00000000000a").path
            let fifo = folder.appendingPathComponent(".doc.txt.cdsave-00000000000b").path
            #expect(symlink(elsewhere.path, link) == 0)
            #expect(mkfifo(fifo, 0o600) == 0)
            #expect(StrayTemporaryFiles.reclaim(besideTarget: target) == 0)
            #expect(listing(folder).count == 3)
            #expect(text(at: elsewhere) == "keep")
        }
    }

    @Test("in a large folder, saves scan at most once per interval; open always scans")
    func largeFolderThrottle() async throws {
        try await withNote(containing: "original") { folder, url, document in
            for index in 0...StrayTemporaryFiles.largeFolderEntries {
                try put("", at: folder.appendingPathComponent("other-\(index)"))
            }
            try SafeSave.write(Data("one".utf8), to: url, creating: false)  // scans
            let worker = try SaveWorker(saving: "file", to: url)
            worker.kill9()
            try SafeSave.write(Data("two".utf8), to: url, creating: false)  // scanned just now: skips
            #expect(temporaryItems(in: folder).count == 1)
            try await document.openThrowing()  // always scans
            #expect(temporaryItems(in: folder).isEmpty)
            #expect(document.text == "two")
            try await document.closeThrowing()
        }
    }

    @Test("in a small folder, a save right after this process's own save looks only if the folder changed since")
    func smallFolderLooksWhenChanged() throws {
        try Scratch.with { folder in
            let target = folder.appendingPathComponent("doc.txt").path
            let folderPath = (target as NSString).deletingLastPathComponent
            func reclaimIfDue() -> Int {
                let directory = StrayTemporaryFiles.openFolder(folderPath)
                defer { close(directory) }
                return StrayTemporaryFiles.reclaimIfDue(besideTarget: target, inFolder: directory)
            }
            func noteOwnChange() {
                let directory = StrayTemporaryFiles.openFolder(folderPath)
                defer { close(directory) }
                StrayTemporaryFiles.noteOwnChange(inFolder: folderPath, descriptor: directory)
            }
            #expect(reclaimIfDue() == 0, "scans (nothing there yet)")
            // A stray that appeared before this process's own change is not seen until the
            // folder changes again (or a second has passed): the race the interval covers.
            let stray = SavePaths.siblingName(of: target, marker: StrayTemporaryFiles.marker)
            try put("stray", at: URL(fileURLWithPath: stray))
            noteOwnChange()
            #expect(reclaimIfDue() == 0, "unchanged since our own change: no look")
            #expect(temporaryItems(in: folder).count == 1)
            try put("", at: folder.appendingPathComponent("other.txt"))
            #expect(reclaimIfDue() == 1, "changed since: looks, and removes the stray")
            #expect(temporaryItems(in: folder).isEmpty)
        }
    }

    @Test("a save removes the stray of a save killed after this process's own save a moment before")
    func killedAfterOwnSaveIsReclaimed() throws {
        try Scratch.with { folder in
            let url = try makeFile("doc.txt", containing: "original", in: folder)
            try SafeSave.write(Data("one".utf8), to: url, creating: false)  // scans, then notes its change
            let worker = try SaveWorker(saving: "file", to: url)
            worker.kill9()
            #expect(temporaryItems(in: folder).count == 1)
            try SafeSave.write(Data("two".utf8), to: url, creating: false)
            #expect(listing(folder) == ["doc.txt"], "the folder changed after our save: the stray is found")
            #expect(text(at: url) == "two")
        }
    }

    @Test("only names of temporary items of this target match, shortened long names included")
    func nameMatching() {
        let name = ArraySlice("doc.txt".utf8)
        func matches(_ entry: String, _ name: ArraySlice<UInt8>) -> Bool {
            StrayTemporaryFiles.isTemporaryName(Array(entry.utf8), forName: name)
        }
        #expect(matches(".doc.txt.cdsave-0123456789ab", name))
        #expect(!matches(".doc.txt.cdsave-0123456789a", name), "11 digits")
        #expect(!matches(".doc.txt.cdsave-0123456789AB", name), "upper case")
        #expect(!matches(".doc.txt.cdold-0123456789ab", name), "an old item moved aside is kept")
        #expect(!matches(".doc.cdsave-0123456789ab", name), "another document's, not shortened")
        #expect(!matches(".other.txt.cdsave-0123456789ab", name))
        #expect(!matches("doc.txt.cdsave-0123456789ab", name), "not hidden")

        let long = String(repeating: "é", count: 127) + ".txt"  // 258 bytes
        let shortened = SavePaths.siblingName(of: "/x/" + long, marker: StrayTemporaryFiles.marker)
        let entry = (shortened as NSString).lastPathComponent
        #expect(entry.utf8.count <= 255)
        #expect(matches(entry, ArraySlice(long.utf8)))
    }
}
