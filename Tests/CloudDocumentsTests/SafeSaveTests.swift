import Foundation
import Glibc
import Testing
@testable import CloudDocuments

@Suite("SafeSave: durable atomic save of a file")
struct SafeSaveTests {
    // MARK: Success

    @Test("creating a new file writes the bytes with 0644 less the umask and leaves no temporary file")
    func createsNewFile() throws {
        try Scratch.with { folder in
            let url = folder.appendingPathComponent("new.txt")
            try SafeSave.write(Data("hello".utf8), to: url, creating: true)
            #expect(text(at: url) == "hello")
            #expect(permissions(url) == 0o644 & ~POSIX.currentUmask())
            #expect(listing(folder) == ["new.txt"])
        }
    }

    @Test("overwriting replaces every byte, writes in 1 MiB chunks and reports cumulative progress")
    func overwritesWithProgress() throws {
        try Scratch.with { folder in
            let url = try makeFile("big.bin", containing: "old contents that are longer than nothing", in: folder)
            let size = 2 * SafeSave.chunkSize + 12_345
            let data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            var reports: [Int64] = []
            try SafeSave.write(data, to: url, creating: false) { reports.append($0) }
            #expect(try Data(contentsOf: url) == data)
            #expect(reports == [Int64(SafeSave.chunkSize), Int64(2 * SafeSave.chunkSize), Int64(size)])
            #expect(listing(folder) == ["big.bin"])
        }
    }

    @Test("an empty save leaves an empty file")
    func emptyData() throws {
        try Scratch.with { folder in
            let url = try makeFile("empty", containing: "not empty", in: folder)
            try SafeSave.write(Data(), to: url, creating: false)
            #expect(try Data(contentsOf: url).isEmpty)
            #expect(listing(folder) == ["empty"])
        }
    }

    @Test("the original's permission bits are carried over exactly (0640 stays 0640; bits others may write, and special bits, too)",
          arguments: [0o640, 0o600, 0o755, 0o664, 0o666, 0o4755, 0o2755, 0o1644, 0o400] as [mode_t])
    func permissionsCarriedOver(mode: mode_t) throws {
        try Scratch.with { folder in
            let url = try makeFile("doc.txt", containing: "v1", in: folder)
            #expect(chmod(url.path, mode) == 0)
            try SafeSave.write(Data("v2".utf8), to: url, creating: false)
            #expect(text(at: url) == "v2")
            #expect(permissions(url) == mode)
            #expect(listing(folder) == ["doc.txt"])
        }
    }

    @Test("the original's owner is carried over when running as root",
          .enabled(if: geteuid() == 0, "changing a file's owner needs root"))
    func ownerCarriedOver() throws {
        try Scratch.with { folder in
            let url = try makeFile("owned.txt", containing: "v1", in: folder)
            #expect(chown(url.path, 4321, 8765) == 0)
            try SafeSave.write(Data("v2".utf8), to: url, creating: false)
            var info = stat()
            #expect(stat(url.path, &info) == 0)
            #expect(info.st_uid == 4321)
            #expect(info.st_gid == 8765)
        }
    }

    @Test("saving through a symbolic link replaces the file it points to and keeps the link")
    func followsSymbolicLink() throws {
        try Scratch.with { folder in
            let real = folder.appendingPathComponent("real.txt")
            let link = folder.appendingPathComponent("link.txt")
            try put("v1", at: real)
            #expect(symlink("real.txt", link.path) == 0)
            try SafeSave.write(Data("v2".utf8), to: link, creating: false)
            #expect(text(at: real) == "v2")
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)) == "real.txt")
            #expect(listing(folder) == ["link.txt", "real.txt"])
        }
    }

    @Test("write(_ contents:for:) saves data as a file and a package as a folder")
    func contentsDispatch() throws {
        try Scratch.with { folder in
            let file = folder.appendingPathComponent("doc.txt")
            try SafeSave.write(DocumentContents.data(Data("text".utf8)), to: file, for: .forCreating)
            #expect(text(at: file) == "text")
            #expect(throws: DocumentError.self) {
                try SafeSave.write(DocumentContents.data(Data("again".utf8)), to: file, for: .forCreating)
            }
            var package = FilePackage()
            try package.setFile(Data("inside".utf8), named: "x")
            let folderURL = folder.appendingPathComponent("doc.pkg")
            try SafeSave.write(DocumentContents.package(package), to: folderURL, for: .forOverwriting)
            #expect(try FilePackage.read(from: folderURL) == package)
            #expect(listing(folder) == ["doc.pkg", "doc.txt"])
        }
    }

    // MARK: Refusals

    @Test(".forCreating onto an existing file fails with alreadyExists and leaves it untouched")
    func creatingOntoExistingFile() throws {
        try Scratch.with { folder in
            let url = try makeFile("taken.txt", containing: "keep me", in: folder)
            #expect(chmod(url.path, 0o640) == 0)
            let error = expectDocumentError("alreadyExists") {
                try SafeSave.write(Data("intruder".utf8), to: url, creating: true)
            }
            #expect(error?.url == url)
            #expect(text(at: url) == "keep me")
            #expect(permissions(url) == 0o640)
            #expect(listing(folder) == ["taken.txt"])
        }
    }

    @Test("the final step of .forCreating refuses a file that appeared after the first check (no race)")
    func creatingRefusesLateArrival() throws {
        try Scratch.with { folder in
            let temporary = folder.appendingPathComponent(".x.cdsave-test").path
            let target = folder.appendingPathComponent("x").path
            try put("new", at: URL(fileURLWithPath: temporary))
            try put("arrived meanwhile", at: URL(fileURLWithPath: target))
            #expect(throws: SystemCallError.self) {
                try SafeSave.moveFileIntoPlace(temporary, to: target, creating: true)
            }
            #expect(text(at: URL(fileURLWithPath: target)) == "arrived meanwhile")
        }
    }

    @Test("saving into a folder that vanished fails with folderMissing and creates nothing")
    func folderMissing() throws {
        try Scratch.with { folder in
            let gone = folder.appendingPathComponent("gone", isDirectory: true)
            #expect(mkdir(gone.path, 0o755) == 0)
            #expect(rmdir(gone.path) == 0)
            let url = gone.appendingPathComponent("doc.txt")
            let error = expectDocumentError("folderMissing") {
                try SafeSave.write(Data("x".utf8), to: url, creating: false)
            }
            #expect(error?.url?.standardizedFileURL.path == gone.standardizedFileURL.path)
            #expect(listing(folder).isEmpty)
        }
    }

    @Test("a folder in the way fails with saveFailed(EISDIR) and is left alone")
    func folderInTheWay() throws {
        try Scratch.with { folder in
            let url = folder.appendingPathComponent("dir")
            #expect(mkdir(url.path, 0o755) == 0)
            let error = expectDocumentError("saveFailed") {
                try SafeSave.write(Data("x".utf8), to: url, creating: false)
            }
            #expect(error?.errorNumber == .isDirectory)
            #expect(listing(folder) == ["dir"])
        }
    }

    @Test("a URL that is not a file URL fails with saveFailed")
    func notAFileURL() throws {
        let url = try #require(URL(string: "https://example.com/doc.txt"))
        #expect(throws: DocumentError.self) { try SafeSave.write(Data(), to: url, creating: false) }
    }

    // MARK: The final step and its fallbacks

    @Test("renameat2(RENAME_EXCHANGE) swaps two items and RENAME_NOREPLACE refuses an existing one")
    func renameAt2Flags() throws {
        try Scratch.with { folder in
            let a = folder.appendingPathComponent("a"), b = folder.appendingPathComponent("b")
            try put("A", at: a)
            try put("B", at: b)
            try POSIX.rename(a.path, to: b.path, flag: .exchange)
            #expect(text(at: a) == "B")
            #expect(text(at: b) == "A")
            #expect(throws: SystemCallError.self) { try POSIX.rename(a.path, to: b.path, flag: .noReplace) }
            try POSIX.rename(a.path, to: folder.appendingPathComponent("c").path, flag: .noReplace)
            #expect(listing(folder) == ["b", "c"])
        }
    }

    @Test("the link+unlink fallback for creating refuses an existing target and otherwise creates it")
    func createByLinkingFallback() throws {
        try Scratch.with { folder in
            let temporary = folder.appendingPathComponent(".t.cdsave-1").path
            let target = folder.appendingPathComponent("t")
            try put("new", at: URL(fileURLWithPath: temporary))
            try SafeSave.createByLinking(temporary, to: target.path)
            expectOnlyFile(target, holding: "new")

            try put("second", at: URL(fileURLWithPath: temporary))
            let error = #expect(throws: SystemCallError.self) {
                try SafeSave.createByLinking(temporary, to: target.path)
            }
            #expect(error?.code == EEXIST)
            #expect(text(at: target) == "new")
        }
    }

    @Test("the move-aside fallback for replacing a package swaps in the new tree and returns the old one")
    func replaceByMovingAsideFallback() throws {
        try Scratch.with { folder in
            let target = folder.appendingPathComponent("doc.pkg")
            let temporary = folder.appendingPathComponent(".doc.pkg.cdsave-1")
            #expect(mkdir(target.path, 0o755) == 0)
            #expect(mkdir(temporary.path, 0o755) == 0)
            try put("old", at: target.appendingPathComponent("old.txt"))
            try put("new", at: temporary.appendingPathComponent("new.txt"))
            let aside = try SafeSave.replaceByMovingAside(temporary.path, to: target.path)
            #expect(listing(target) == ["new.txt"])
            #expect(text(at: URL(fileURLWithPath: aside).appendingPathComponent("old.txt")) == "old")
            #expect(URL(fileURLWithPath: aside).lastPathComponent.hasPrefix(".doc.pkg.cdold-"))
        }
    }

    @Test("temporary names are hidden, beside the target, and short enough for a 255-byte name")
    func temporaryNames() throws {
        let long = String(repeating: "é", count: 127)  // 254 bytes
        let name = SavePaths.siblingName(of: "/some/folder/" + long, marker: "cdsave")
        let last = (name as NSString).lastPathComponent
        #expect(name.hasPrefix("/some/folder/."))
        #expect(last.utf8.count <= 255)
        #expect(last.contains(".cdsave-"))
        #expect(SavePaths.siblingName(of: "/a/b", marker: "m") != SavePaths.siblingName(of: "/a/b", marker: "m"))
    }

    // MARK: Injected failures

    static let failureSteps: [SafeSave.FailurePoint] = [.createTemporary, .write, .setPermissions, .fsync, .rename]

    @Test("a failure at any step before the rename leaves the original untouched and no temporary file",
          arguments: failureSteps)
    func injectedFailureBeforeRename(step: SafeSave.FailurePoint) throws {
        try Scratch.with { folder in
            let url = try makeFile("doc.txt", containing: "original", in: folder)
            #expect(chmod(url.path, 0o640) == 0)
            try withInjectedFailure(at: step, errno: EIO, forTarget: url) {
                let error = expectDocumentError("saveFailed") {
                    try SafeSave.write(Data("replacement".utf8), to: url, creating: false)
                }
                #expect(error?.url == url)
                #expect(error?.errorNumber == .ioError)
                #expect(text(at: url) == "original")
                #expect(permissions(url) == 0o640)
                #expect(listing(folder) == ["doc.txt"])
                // The failure fired once: the next save goes through.
                try SafeSave.write(Data("replacement".utf8), to: url, creating: false)
                expectOnlyFile(url, holding: "replacement")
            }
        }
    }

    @Test("a write failing in the middle of a large file leaves the original whole")
    func injectedFailureMidWrite() throws {
        try Scratch.with { folder in
            let url = try makeFile("doc.bin", containing: "original", in: folder)
            var reports: [Int64] = []
            let data = Data(count: 4 * SafeSave.chunkSize)
            try withInjectedFailure(at: .write, errno: ENOSPC, after: 2, forTarget: url) {
                expectDocumentError("diskFull") {
                    try SafeSave.write(data, to: url, creating: false) { reports.append($0) }
                }
            }
            #expect(reports == [Int64(SafeSave.chunkSize), Int64(2 * SafeSave.chunkSize)])
            expectOnlyFile(url, holding: "original")
        }
    }

    @Test("errno values map to the errors a user can act on",
          arguments: [(ENOSPC, "diskFull"), (EDQUOT, "diskFull"), (EROFS, "notWritable"),
                      (EACCES, "notWritable"), (EPERM, "notWritable"), (EIO, "saveFailed")] as [(Int32, String)])
    func errnoMapping(code: Int32, expected: String) throws {
        try Scratch.with { folder in
            let url = try makeFile("doc.txt", containing: "original", in: folder)
            try withInjectedFailure(at: .createTemporary, errno: code, forTarget: url) {
                expectDocumentError(expected) { try SafeSave.write(Data("new".utf8), to: url, creating: false) }
            }
            expectOnlyFile(url, holding: "original")
        }
    }

    @Test("a failure to flush the folder after the rename says the new contents are in place")
    func injectedFailureAfterRename() throws {
        try Scratch.with { folder in
            let url = try makeFile("doc.txt", containing: "original", in: folder)
            let error = try withInjectedFailure(at: .directoryFsync, errno: EIO, forTarget: url) {
                expectDocumentError("saveFailed") {
                    try SafeSave.write(Data("replacement".utf8), to: url, creating: false)
                }
            }
            #expect(error?.detail?.contains("in place") == true)
            #expect(error?.errorNumber == .ioError)
            expectOnlyFile(url, holding: "replacement")
        }
    }

    @Test("injected failures are per target: a save to another file is not affected")
    func injectionIsPerTarget() throws {
        try Scratch.with { folder in
            let armed = folder.appendingPathComponent("armed.txt")
            let other = folder.appendingPathComponent("other.txt")
            try withInjectedFailure(at: .write, forTarget: armed) {
                try SafeSave.write(Data("fine".utf8), to: other, creating: true)
                #expect(text(at: other) == "fine")
                #expect(throws: DocumentError.self) {
                    try SafeSave.write(Data("fails".utf8), to: armed, creating: true)
                }
                #expect(listing(folder) == ["other.txt"])
            }
        }
    }

    // MARK: Real full and read-only file systems

    @Test("a full disk (64 KiB tmpfs, 200 KiB save) fails with diskFull, keeps the original, leaves no temporary file",
          .enabled(if: SmallTmpfs.isAvailable, Comment(rawValue: SmallTmpfs.unavailableMessage)))
    func diskFullOnTmpfs() throws {
        try SmallTmpfs.withMount(size: "64k") { mount in
            let url = try makeFile("doc.txt", containing: "small original", in: mount)
            let error = expectDocumentError("diskFull") {
                try SafeSave.write(Data(repeating: 0x41, count: 200 * 1024), to: url, creating: false)
            }
            #expect(error?.url == url)
            expectOnlyFile(url, holding: "small original")
            // The space was given back: a small save still works.
            try SafeSave.write(Data("still works".utf8), to: url, creating: false)
            #expect(text(at: url) == "still works")
        }
    }

    @Test("a read-only file system fails with notWritable and keeps the original",
          .enabled(if: SmallTmpfs.isAvailable, Comment(rawValue: SmallTmpfs.unavailableMessage)))
    func readOnlyOnTmpfs() throws {
        try SmallTmpfs.withMount(size: "64k") { mount in
            let url = try makeFile("doc.txt", containing: "read-only original", in: mount)
            try SmallTmpfs.remountReadOnly(mount)
            let error = expectDocumentError("notWritable") {
                try SafeSave.write(Data("new".utf8), to: url, creating: false)
            }
            #expect(error?.url == url)
            expectOnlyFile(url, holding: "read-only original")
        }
    }

    @Test("without mount rights, an injected ENOSPC and EROFS give diskFull and notWritable",
          .enabled(if: !SmallTmpfs.isAvailable, "tmpfs mounting works here: the real tests ran instead"))
    func fullAndReadOnlyFallback() throws {
        try errnoMapping(code: ENOSPC, expected: "diskFull")
        try errnoMapping(code: EROFS, expected: "notWritable")
    }
}
