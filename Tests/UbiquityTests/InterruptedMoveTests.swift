import Foundation
import Glibc
import Testing
import TestSupport
@testable import Ubiquity

/// A move across file systems killed (`kill -9`) in the middle of its copy (issue 16, item 2): the
/// original stays whole, nothing is under the final name, and the next move to that destination
/// works and removes the leftover. The mover is a real process (`UbiquityTestHelper
/// move-and-pause`), stopped inside the copy by a hook and killed once it says where it is.
@Suite("Moves killed in the middle of a copy")
struct InterruptedMoveTests {
    /// 3 MiB of varied bytes: three chunks of the copy, so the kill lands with part of it written.
    private static let bigContents = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) })

    /// Starts the mover and returns it with the temporary item it is filling, once it has stopped.
    private func startPausedMove(into destination: URL, from source: URL, cloud: ScratchCloud) throws -> (ChildProcess, String) {
        let child = try ChildProcess(["move-and-pause", "true", source.path, destination.path],
                                     environment: ProcessInfo.processInfo.environment.merging(cloud.environment) { $1 },
                                     helper: "UbiquityTestHelper")
        guard let line = child.expect("COPYING"), line.hasPrefix("COPYING ") else {
            child.kill9()
            throw MoverDidNotStop()
        }
        let fields = line.dropFirst("COPYING ".count).split(separator: "\t").map(String.init)
        return (child, fields[0])
    }

    private struct MoverDidNotStop: Error, CustomStringConvertible {
        var description: String { "the mover never stopped inside a copy under a temporary name" }
    }

    private func entries(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    @Test("a file: killed mid-copy, nothing under the final name; a live mover's copy is not reclaimed, a dead one's is; the retry moves it",
          .enabled(if: SmallTmpfs.isAvailable, Comment(rawValue: SmallTmpfs.unavailableMessage)))
    func killedFileMove() async throws {
        let cloud = try ScratchCloud(tmpfsSize: "16m")
        defer { cloud.remove() }
        let local = cloud.local.appending(path: "big.bin")
        try Self.bigContents.write(to: local)
        let documents = try cloud.documents()
        let destination = documents.appending(path: "big.bin")
        let (child, temporary) = try startPausedMove(into: destination, from: local, cloud: cloud)
        let whilePaused = Result { try checkPausedFileMove(temporary: temporary, destination: destination, documents: documents) }
        child.kill9()
        try whilePaused.get()

        #expect(try Data(contentsOf: local) == Self.bigContents, "the original is whole")
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(!cloud.account.isUbiquitousItem(at: destination))

        try await cloud.account.setUbiquitous(true, itemAt: local, destinationURL: destination)
        #expect(try Data(contentsOf: destination) == Self.bigContents)
        #expect(!FileManager.default.fileExists(atPath: local.path))
        #expect(try entries(documents) == ["big.bin"], "the dead mover's leftover was reclaimed")
    }

    /// What is true while the mover of `big.bin` is stopped in its copy.
    private func checkPausedFileMove(temporary: String, destination: URL, documents: URL) throws {
        let temporaryName = (temporary as NSString).lastPathComponent
        #expect((temporary as NSString).deletingLastPathComponent == documents.standardizedFileURL.path)
        #expect(temporaryName.hasPrefix(".syncthing.big.bin.cdmove-") && temporaryName.hasSuffix(".tmp"), "\(temporaryName)")
        #expect(SyncInternalItems.item(named: temporaryName) != nil, "presenters and queries skip it")
        #expect(!FileManager.default.fileExists(atPath: destination.path), "nothing under the final name while copying")
        let partial = try #require(FileManager.default.attributesOfItem(atPath: temporary)[.size] as? Int)
        #expect(partial > 0 && partial < Self.bigContents.count)
        #expect(MoveTemporaryItems.reclaim(beside: destination.path) == 0, "the mover is alive: its copy stays")
        #expect(FileManager.default.fileExists(atPath: temporary))
    }

    @Test("a folder: killed mid-copy of a file inside it, nothing under the final name; the retry moves the whole tree",
          .enabled(if: SmallTmpfs.isAvailable, Comment(rawValue: SmallTmpfs.unavailableMessage)))
    func killedFolderMove() async throws {
        let cloud = try ScratchCloud(tmpfsSize: "16m")
        defer { cloud.remove() }
        let folder = cloud.local.appending(path: "proj", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: folder.appending(path: "sub"), withIntermediateDirectories: true)
        try Data("a".utf8).write(to: folder.appending(path: "a.txt"))
        try Self.bigContents.write(to: folder.appending(path: "sub/big.bin"))
        let documents = try cloud.documents()
        let destination = documents.appending(path: "proj")
        let (child, temporary) = try startPausedMove(into: destination, from: folder, cloud: cloud)
        #expect((temporary as NSString).lastPathComponent.hasPrefix(".syncthing.proj.cdmove-"))
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(MoveTemporaryItems.reclaim(beside: destination.path) == 0, "the mover is alive: its copy stays")
        child.kill9()
        #expect(FileManager.default.fileExists(atPath: temporary), "the killed mover's copy is left, to be reclaimed")
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(text(at: folder.appending(path: "a.txt")) == "a")
        #expect(try Data(contentsOf: folder.appending(path: "sub/big.bin")) == Self.bigContents)

        try await cloud.account.setUbiquitous(true, itemAt: folder, destinationURL: destination)
        #expect(try entries(documents) == ["proj"], "the dead mover's leftover was reclaimed")
        #expect(text(at: destination.appending(path: "a.txt")) == "a")
        #expect(try Data(contentsOf: destination.appending(path: "sub/big.bin")) == Self.bigContents)
        #expect(!FileManager.default.fileExists(atPath: folder.path))
    }
}
