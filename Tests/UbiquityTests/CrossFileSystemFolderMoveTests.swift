import Foundation
import Glibc
import Testing
import TestSupport
@testable import Ubiquity

/// Folders moved into and out of the cloud across file systems (the container on a tmpfs): the
/// tree arrives whole under its own name or not at all (issue 16, item 1).
@Suite("Moving folders across file systems")
struct CrossFileSystemFolderMoveTests {
    /// `proj/a.txt`, `proj/sub/b.txt` in the local folder; its URL as `URL(fileURLWithPath:)`
    /// makes it for a folder on disk: with a trailing `/`.
    private func makeProject(in cloud: ScratchCloud, bigFile: Int = 0) throws -> URL {
        let folder = cloud.local.appending(path: "proj", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: folder.appending(path: "sub"), withIntermediateDirectories: true)
        try Data("a".utf8).write(to: folder.appending(path: "a.txt"))
        try Data("b".utf8).write(to: folder.appending(path: "sub/b.txt"))
        if bigFile > 0 { try Data(repeating: 0x62, count: bigFile).write(to: folder.appending(path: "sub/big.bin")) }
        let url = URL(fileURLWithPath: folder.path)
        #expect(url.path(percentEncoded: false).hasSuffix("/"), "the case of the bug: a folder URL ending in /")
        return url
    }

    /// Every path below `folder`, relative, sorted (folders end in `/`).
    private func tree(_ folder: URL) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: folder.path) else { return [] }
        var names: [String] = []
        while let name = enumerator.nextObject() as? String {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: folder.appending(path: name).path, isDirectory: &isFolder)
            names.append(isFolder.boolValue ? name + "/" : name)
        }
        return names.sorted()
    }

    @Test("a folder URL ending in / moves whole into Documents/proj, nothing scattered beside it",
          .enabled(if: SmallTmpfs.isAvailable, Comment(rawValue: SmallTmpfs.unavailableMessage)))
    func folderArrivesWhole() async throws {
        let cloud = try ScratchCloud(tmpfsSize: "1m")
        defer { cloud.remove() }
        let project = try makeProject(in: cloud)
        let documents = try cloud.documents()
        let destination = documents.appending(path: "proj", directoryHint: .notDirectory)
        try await cloud.account.setUbiquitous(true, itemAt: project, destinationURL: destination)
        #expect(tree(documents) == ["proj/", "proj/a.txt", "proj/sub/", "proj/sub/b.txt"])
        #expect(text(at: destination.appending(path: "sub/b.txt")) == "b")
        #expect(!FileManager.default.fileExists(atPath: project.path))

        // And back out, the destination given with a trailing / this time.
        let back = cloud.local.appending(path: "proj", directoryHint: .isDirectory)
        try await cloud.account.setUbiquitous(false, itemAt: destination, destinationURL: back)
        #expect(tree(cloud.local) == ["proj/", "proj/a.txt", "proj/sub/", "proj/sub/b.txt"])
        #expect(tree(documents) == [])
    }

    @Test("clouddocs move-to-cloud of a folder onto another file system: Documents/proj holds the tree",
          .enabled(if: SmallTmpfs.isAvailable, Comment(rawValue: SmallTmpfs.unavailableMessage)))
    func commandLineFolderMove() throws {
        let cloud = try ScratchCloud(tmpfsSize: "1m")
        defer { cloud.remove() }
        let project = try makeProject(in: cloud)
        let run = try runExampleTool("clouddocs", ["move-to-cloud", project.path], in: cloud.local, environment: cloud.environment)
        #expect(run.status == 0, "\(run.errors)")
        let documents = try cloud.documents()
        #expect(tree(documents) == ["proj/", "proj/a.txt", "proj/sub/", "proj/sub/b.txt"])
        #expect(run.output == documents.appending(path: "proj").path + "\n")
        #expect(!FileManager.default.fileExists(atPath: project.path))
    }

    @Test("a folder that does not fit: moveFailed(ENOSPC), the original whole, nothing left in Documents",
          .enabled(if: SmallTmpfs.isAvailable, Comment(rawValue: SmallTmpfs.unavailableMessage)))
    func folderDoesNotFit() async throws {
        let cloud = try ScratchCloud(tmpfsSize: "64k")
        defer { cloud.remove() }
        let project = try makeProject(in: cloud, bigFile: 256 * 1024)
        let before = tree(project)
        let documents = try cloud.documents()
        let destination = documents.appending(path: "proj")
        let error = await #expect(throws: UbiquityError.self) {
            try await cloud.account.setUbiquitous(true, itemAt: project, destinationURL: destination)
        }
        if case .moveFailed(_, _, let code)? = error { #expect(code == .noSpace) } else { Issue.record("expected moveFailed(ENOSPC), not \(String(describing: error))") }
        #expect(tree(project) == before)
        #expect((try? Data(contentsOf: project.appending(path: "sub/big.bin")))?.count == 256 * 1024)
        #expect(tree(documents) == [], "no partial copy, under the final name or any other")
    }

    @Test("across file systems the copy keeps permission bits, modification times and symbolic links (as links, dangling ones too)",
          .enabled(if: SmallTmpfs.isAvailable, Comment(rawValue: SmallTmpfs.unavailableMessage)))
    func attributesAndLinks() async throws {
        let cloud = try ScratchCloud(tmpfsSize: "1m")
        defer { cloud.remove() }
        let folder = cloud.local.appending(path: "Bundle", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: folder.appending(path: "inner"), withIntermediateDirectories: true)
        let secret = folder.appending(path: "inner/secret.txt")
        try Data("s".utf8).write(to: secret)
        #expect(chmod(secret.path, 0o640) == 0 && chmod(folder.appending(path: "inner").path, 0o750) == 0)
        #expect(symlink("inner/secret.txt", folder.appending(path: "link").path) == 0)
        #expect(symlink("/nonexistent/target", folder.appending(path: "dangling").path) == 0)
        var times = [timespec(tv_sec: 1_600_000_000, tv_nsec: 123_456_789), timespec(tv_sec: 1_600_000_000, tv_nsec: 123_456_789)]
        #expect(utimensat(AT_FDCWD, secret.path, &times, 0) == 0)

        let destination = try cloud.documents().appending(path: "Bundle")
        try await cloud.account.setUbiquitous(true, itemAt: folder, destinationURL: destination)
        var info = stat()
        #expect(stat(destination.appending(path: "inner/secret.txt").path, &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o640)
        #expect(info.st_mtim.tv_sec == 1_600_000_000 && info.st_mtim.tv_nsec == 123_456_789)
        #expect(stat(destination.appending(path: "inner").path, &info) == 0 && info.st_mode & 0o7777 == 0o750)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: destination.appending(path: "link").path) == "inner/secret.txt")
        #expect(text(at: destination.appending(path: "link")) == "s")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: destination.appending(path: "dangling").path) == "/nonexistent/target")
        #expect(!FileManager.default.fileExists(atPath: folder.path))
    }
}
