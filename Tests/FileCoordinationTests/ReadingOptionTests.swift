import Foundation
import Testing
@testable import FileCoordination

@Suite("Reading options")
struct ReadingOptionTests {
    @Test func resolvesSymbolicLinkHandsOverTheTarget() throws {
        let scratch = try Scratch()
        let target = scratch.file("target.txt", contents: "t")
        let link = scratch.url.appendingPathComponent("link.txt")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let seen = try Coordinator().coordinate(readingItemAt: link, options: .resolvesSymbolicLink) { $0 }
        #expect(seen.resolvingSymlinksInPath().path == target.resolvingSymlinksInPath().path)
        let plain = try Coordinator().coordinate(readingItemAt: link) { $0 }
        #expect(plain.lastPathComponent == "link.txt")
        // The target is what gets locked.
        let writer = Holder.writing(target)
        #expect(readWaits(link, options: .resolvesSymbolicLink))
        writer.release()
    }

    @Test func forUploadingGivesASnapshotAndReleasesEarly() throws {
        let scratch = try Scratch()
        let file = scratch.file("up.txt", contents: "upload me")
        let (copy, written) = try Coordinator().coordinate(readingItemAt: file, options: .forUploading) { url in
            (url, writeGetsInOnAnotherThread(file))
        }
        #expect(copy != file)
        #expect(written, "the original is released once the snapshot exists")
        #expect(!FileManager.default.fileExists(atPath: copy.path), "the snapshot is removed afterwards")

        let directory = try scratch.directory("folder")
        _ = scratch.file("folder/a.txt", contents: "a")
        let magic = try Coordinator().coordinate(readingItemAt: directory, options: .forUploading) { url in
            (url.pathExtension, try Data(contentsOf: url).prefix(2))
        }
        #expect(magic.0 == "zip")
        #expect(magic.1 == Data("PK".utf8))
    }

    /// Another thread: on this one, a write inside the read would be refused as a deadlock.
    private func writeGetsInOnAnotherThread(_ url: URL) -> Bool {
        let result = Box(false)
        _ = onThread { result.value = writeGetsIn(url) }.wait()
        return result.value
    }
}
