import Foundation
import Glibc
import SystemSupport
import Testing
import TestSupport
@testable import CloudDocuments

/// Documents are read and saved where the kernel resolves their URL, under their exact bytes
/// (issue 6, bugs 11 and 14).
@Suite("CloudDocument and SafeSave: '..' after a linked folder, names that are not UTF-8", .timeLimit(.minutes(1 * Polling.deadlineScale)))
struct DocumentPathTests {
    /// `D/real/sub`, and `D/lnk -> D/real/sub`.
    private func linkedFolder(in folder: URL) throws -> (real: URL, link: URL) {
        let real = folder.appendingPathComponent("real")
        let sub = real.appendingPathComponent("sub")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        let link = folder.appendingPathComponent("lnk")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: sub)
        return (real, link)
    }

    @Test("a document saved at D/lnk/../x.txt is written to D/real/x.txt and reopens at its own URL")
    func saveAfterDotDot() async throws {
        let folderScratch = try Scratch("clouddocs-paths")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let (real, link) = try linkedFolder(in: folder)
        let url = URL(fileURLWithPath: link.path + "/../x.txt")

        let document = NoteDocument(fileURL: url)
        document.replaceText("through the link")
        try await document.saveThrowing(to: url, for: .forCreating)
        try await document.closeThrowing()
        #expect(try String(contentsOf: real.appendingPathComponent("x.txt"), encoding: .utf8) == "through the link")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("x.txt").path),
                "not written where '..' would lead as text")
        #expect(listing(real) == ["sub", "x.txt"], "no temporary file left")

        let reopened = NoteDocument(fileURL: url)
        try await reopened.openThrowing()
        #expect(reopened.text == "through the link")
        reopened.replaceText("again")
        try await reopened.saveThrowing(to: url, for: .forOverwriting)
        try await reopened.closeThrowing()
        #expect(try String(contentsOf: real.appendingPathComponent("x.txt"), encoding: .utf8) == "again")
        #expect(listing(folder) == ["lnk", "real"])
    }

    @Test("SafeSave and FilePackage follow the kernel too: files and packages after '..'")
    func safeSaveAfterDotDot() throws {
        try Scratch.with { folder in
            let (real, link) = try linkedFolder(in: folder)
            try SafeSave.write(Data("file".utf8), to: URL(fileURLWithPath: link.path + "/../f.txt"), creating: true)
            #expect(try String(contentsOf: real.appendingPathComponent("f.txt"), encoding: .utf8) == "file")
            let package = try FilePackage(entries: ["a.txt": .file(Data("a".utf8))])
            let packageURL = URL(fileURLWithPath: link.path + "/../p.pkg", isDirectory: true)
            try SafeSave.writePackage(package, to: packageURL, creating: true)
            #expect(listing(real.appendingPathComponent("p.pkg")) == ["a.txt"])
            #expect(try FilePackage.read(from: packageURL) == package)
            #expect(listing(folder) == ["lnk", "real"])
        }
    }

    @Test("a document named with byte 0xFF opens, saves under the same bytes, and no U+FFFD file appears")
    func nameThatIsNotUTF8() async throws {
        let folderScratch = try Scratch("clouddocs-bytes")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let name: [UInt8] = Array("caf".utf8) + [0xFF] + Array(".txt".utf8)
        #expect(writeRaw(in: folder, name, "original"))
        let url = rawNameURL(in: folder, name)

        let document = NoteDocument(fileURL: url)
        try await document.openThrowing()
        #expect(document.text == "original")
        document.replaceText("edited")
        try await document.saveThrowing(to: url, for: .forOverwriting)
        try await document.closeThrowing()
        #expect(rawListing(folder) == [name], "one file, under its own bytes")
        #expect(readRaw(in: folder, name) == "edited")

        let reopened = NoteDocument(fileURL: url)
        try await reopened.openThrowing()
        #expect(reopened.text == "edited")
        try await reopened.closeThrowing()
    }

    @Test("a 255-byte name that is not UTF-8 is created, overwritten and reopened; temporary names fit")
    func longNameThatIsNotUTF8() async throws {
        let folderScratch = try Scratch("clouddocs-bytes")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let name: [UInt8] = [UInt8](repeating: 0xFE, count: 120) + [UInt8](repeating: 0x62, count: 131) + Array(".txt".utf8)
        #expect(name.count == 255)
        let url = rawNameURL(in: folder, name)

        let document = NoteDocument(fileURL: url)
        document.replaceText("first")
        try await document.saveThrowing(to: url, for: .forCreating)
        document.replaceText("second")
        try await document.saveThrowing(to: url, for: .forOverwriting)
        try await document.closeThrowing()
        #expect(rawListing(folder) == [name])
        #expect(readRaw(in: folder, name) == "second")

        let reopened = NoteDocument(fileURL: url)
        try await reopened.openThrowing()
        #expect(reopened.text == "second")
        try await reopened.closeThrowing()

        let target = PathBytes.string(fromBytes: Array(folder.path.utf8) + [0x2F] + name)
        let temporary = SavePaths.siblingName(of: target, marker: "cdsave")
        let temporaryName = Array(PathBytes.bytes(of: temporary).split(separator: 0x2F).last ?? [])
        #expect(temporaryName.count <= 255)
        #expect(temporaryName.first == UInt8(ascii: "."))
        #expect(Array(temporaryName.dropFirst().prefix(100)) == [UInt8](repeating: 0xFE, count: 100),
                "shortened at a byte boundary, not decoded")
    }
}
