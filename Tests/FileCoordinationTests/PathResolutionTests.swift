import Foundation
import Glibc
import SystemSupport
import Testing
@testable import FileCoordination

/// Paths are resolved as the kernel resolves them, and names are bytes (issue 6, bugs 11 and 14).
@Suite("Canonical paths: symbolic links before '..', names that are not UTF-8")
struct PathResolutionTests {
    /// `D/real/sub`, and `D/lnk -> D/real/sub`.
    private func linkedFolder(_ scratch: Scratch) throws -> (real: URL, link: URL) {
        let sub = try scratch.directory("real/sub")
        let link = scratch.url.appendingPathComponent("lnk")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: sub)
        return (scratch.url.appendingPathComponent("real"), link)
    }

    @Test("'..' after a linked folder names what the kernel opens: D/lnk/../doc.txt is D/real/doc.txt")
    func dotDotAfterALink() throws {
        let scratch = try Scratch()
        let (real, link) = try linkedFolder(scratch)
        let viaLink = URL(fileURLWithPath: link.path + "/../doc.txt")
        let direct = real.appendingPathComponent("doc.txt")
        #expect(CanonicalPath.of(viaLink, in: CoordinationRuntime.process.paths) == CanonicalPath.of(direct, in: CoordinationRuntime.process.paths))
        #expect(CanonicalPath.of(URL(fileURLWithPath: link.path + "/.."), in: CoordinationRuntime.process.paths) == CanonicalPath.of(real, in: CoordinationRuntime.process.paths))
        // A missing folder after the '..' is still resolved from the link's target.
        let missing = URL(fileURLWithPath: link.path + "/../new/deeper/x.txt")
        #expect(CanonicalPath.of(missing, in: CoordinationRuntime.process.paths) == real.path + "/new/deeper/x.txt")
        // The same item is named by the folder the kernel finds: D/real, not D.
        #expect(CanonicalPath.of(viaLink, in: CoordinationRuntime.process.paths) != scratch.url.path + "/doc.txt")
    }

    @Test("a writer of D/real/doc.txt excludes a writer and a reader of D/lnk/../doc.txt, and back")
    func writersOfOneInodeExcludeEachOther() throws {
        let scratch = try Scratch()
        let (real, link) = try linkedFolder(scratch)
        let direct = real.appendingPathComponent("doc.txt")
        try "x".write(to: direct, atomically: false, encoding: .utf8)
        let viaLink = URL(fileURLWithPath: link.path + "/../doc.txt")

        let writer = Holder.writing(direct)
        #expect(writeWaits(viaLink))
        #expect(readWaits(viaLink))
        #expect(writeGetsIn(scratch.file("doc.txt")), "D/doc.txt is another item")
        writer.release()

        let other = Holder.writing(viaLink)
        #expect(writeWaits(direct))
        other.release()
        #expect(writeGetsIn(direct))
    }

    @Test("across processes too: a writer of D/lnk/../doc.txt in another process excludes D/real/doc.txt here")
    func writersOfOneInodeExcludeEachOtherAcrossProcesses() throws {
        let scratch = try Scratch()
        let (real, link) = try linkedFolder(scratch)
        let direct = real.appendingPathComponent("doc.txt")
        try "x".write(to: direct, atomically: false, encoding: .utf8)
        let child = try ChildProcess(["hold", "write", link.path + "/../doc.txt"])
        #expect(child.expect("HELD") == "HELD")
        #expect(writeWaits(direct))
        #expect(readWaits(direct))
        child.send()
        #expect(child.expect("RELEASED") == "RELEASED")
        child.waitForExit()
        #expect(writeGetsIn(direct))

        let writer = Holder.writing(direct)
        let other = try ChildProcess(["try", "write", link.path + "/../doc.txt", "probe"])
        #expect(other.readLine() == "WAITED")
        other.waitForExit()
        writer.release()
    }

    @Test("a name with byte 0xFF has its own lock: not shared with 0xFE or U+FFFD names")
    func namesThatAreNotUTF8LockTheirOwnItem() throws {
        let scratch = try Scratch()
        let name: [UInt8] = Array("caf".utf8) + [0xFF] + Array(".txt".utf8)
        let sibling: [UInt8] = Array("caf".utf8) + [0xFE] + Array(".txt".utf8)
        #expect(writeRaw(in: scratch.url, name, "one"))
        #expect(writeRaw(in: scratch.url, sibling, "two"))
        let url = rawNameURL(in: scratch.url, name)
        let siblingURL = rawNameURL(in: scratch.url, sibling)
        let replaced = scratch.file("caf\u{FFFD}.txt")

        #expect(CanonicalPath.of(url, in: CoordinationRuntime.process.paths) != CanonicalPath.of(siblingURL, in: CoordinationRuntime.process.paths))
        #expect(PathBytes.bytes(of: CanonicalPath.of(url, in: CoordinationRuntime.process.paths)) == Array(scratch.url.path.utf8) + [0x2F] + name)

        let writer = Holder.writing(url)
        #expect(writeWaits(url))
        #expect(writeGetsIn(siblingURL))
        #expect(writeGetsIn(replaced))
        writer.release()
        #expect(writeGetsIn(url))
    }

    @Test("a coordinated read and write of a file named with byte 0xFF and of a 255-byte name")
    func coordinatedAccessKeepsTheBytes() throws {
        let scratch = try Scratch()
        let short: [UInt8] = [0x61, 0xFF, 0x62]
        let long: [UInt8] = [UInt8](repeating: 0xFF, count: 100) + [UInt8](repeating: 0x61, count: 151) + Array(".txt".utf8)
        #expect(long.count == 255)
        for name in [short, long] {
            #expect(writeRaw(in: scratch.url, name, "before"))
            let url = rawNameURL(in: scratch.url, name)
            let coordinator = Coordinator()
            // Options that take the long path (inspection of the item) as well as the fast one.
            try coordinator.coordinate(writingItemAt: url, options: .forReplacing) { handed in
                #expect(handed.path(percentEncoded: true) == url.path(percentEncoded: true))
                #expect(writeRaw(in: scratch.url, name, "after"))
            }
            let read = try coordinator.coordinate(readingItemAt: url) { handed -> String? in
                #expect(handed == url)
                return readRaw(in: scratch.url, name)
            }
            #expect(read == "after")
        }
        #expect(rawListing(scratch.url) == [short, long].sorted { $0.lexicographicallyPrecedes($1) },
                "no file with U+FFFD in its name appeared")
    }

    @Test("an upload copy of a file named with byte 0xFF has its bytes; deleting a folder so named waits for a writer inside")
    func uploadsAndFolderDeletesKeepTheBytes() throws {
        let scratch = try Scratch()
        let name: [UInt8] = [0x63, 0xFF, 0x2E, 0x74, 0x78, 0x74]
        #expect(writeRaw(in: scratch.url, name, "payload"))
        let copied = try Coordinator().coordinate(readingItemAt: rawNameURL(in: scratch.url, name),
                                                  options: .forUploading) { copy in
            try String(contentsOf: copy, encoding: .utf8)
        }
        #expect(copied == "payload")

        // A folder whose name is not UTF-8: a delete of it must lock its subtree (decided from
        // an lstat of the exact bytes), so a writer inside makes it wait.
        let folderName: [UInt8] = [0x64, 0xFE]
        let folder = rawNameURL(in: scratch.url, folderName)
        #expect(rawPath(in: scratch.url, folderName).withUnsafeBufferPointer { mkdir($0.baseAddress!, 0o700) } == 0)
        let inside = folder.appendingPathComponent("inside.txt")
        let writerIn = Signal(), writerOut = Signal()
        let writer = onThread {
            try? Coordinator().coordinate(writingItemAt: inside) { _ in
                writerIn.fire()
                _ = writerOut.wait()
            }
        }
        _ = writerIn.wait()
        #expect(writeWaits(folder, options: .forDeleting), "the delete waits for the writer inside the folder")
        writerOut.fire()
        _ = writer.wait()
    }

    @Test("an uncoordinated change of a file named with byte 0xFF reaches its presenter")
    func changeMonitorWatchesBytes() throws {
        let scratch = try Scratch()
        let name: [UInt8] = Array("w".utf8) + [0xFF, 0xFE]
        #expect(writeRaw(in: scratch.url, name, "old"))
        let url = rawNameURL(in: scratch.url, name)
        let (presenter, changed) = RecordingPresenter.signallingChanges(url)
        withPresenters([presenter]) {
            #expect(writeRaw(in: scratch.url, name, "new contents"))
            #expect(changed.wait(), "the presenter was told")
        }
        #expect(presenter.log.first == "didChange")
    }
}
