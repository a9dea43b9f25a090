import Foundation
import Glibc
import Testing
@testable import CloudDocuments

/// A small nested package: a.txt, b.bin, images/one.png, images/deeper/two.txt, empty/.
private func samplePackage() throws -> FilePackage {
    var deeper = FilePackage()
    try deeper.setFile(Data("two".utf8), named: "two.txt")
    var images = FilePackage()
    try images.setFile(Data([0x89, 0x50, 0x4E, 0x47]), named: "one.png")
    try images.setDirectory(deeper, named: "deeper")
    var package = FilePackage()
    try package.setFile(Data("alpha".utf8), named: "a.txt")
    try package.setFile(Data(count: 1000), named: "b.bin")
    try package.setDirectory(images, named: "images")
    try package.setDirectory(FilePackage(), named: "empty")
    return package
}

/// A package of text files (name → contents) and the folders `folders`.
private func textPackage(_ files: [String: String], folders: [String: FilePackage] = [:]) throws -> FilePackage {
    var package = FilePackage()
    for (name, text) in files { try package.setFile(Data(text.utf8), named: name) }
    for (name, folder) in folders { try package.setDirectory(folder, named: name) }
    return package
}

/// Writes samplePackage() as "doc.pkg" in `folder`; returns where, and the package written.
private func writeSamplePackage(in folder: URL) throws -> (url: URL, package: FilePackage) {
    let url = folder.appendingPathComponent("doc.pkg")
    let package = try samplePackage()
    try package.write(to: url)
    return (url, package)
}

/// Checks that `url` holds `package` and is the only item in its folder (no temporary tree left).
private func expectOnlyPackage(_ package: FilePackage, at url: URL,
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
    #expect(try FilePackage.read(from: url) == package, sourceLocation: sourceLocation)
    #expect(listing(url.deletingLastPathComponent()) == [url.lastPathComponent], sourceLocation: sourceLocation)
}

/// Every path inside a folder, relative, sorted ("sub/" for folders).
private func tree(_ folder: URL) -> [String] {
    var result: [String] = []
    func walk(_ url: URL, _ prefix: String) {
        for name in listing(url) {
            var isDirectory: ObjCBool = false
            let child = url.appendingPathComponent(name)
            _ = FileManager.default.fileExists(atPath: child.path, isDirectory: &isDirectory)
            if isDirectory.boolValue {
                result.append(prefix + name + "/")
                walk(child, prefix + name + "/")
            } else {
                result.append(prefix + name)
            }
        }
    }
    walk(folder, "")
    return result
}

@Suite("FilePackage: directory documents in memory and on disk")
struct FilePackageTests {
    // MARK: In memory

    @Test("invalid entry names are refused with invalidPackageEntryName and change nothing",
          arguments: ["", ".", "..", "a/b", "/", "nul\u{0}inside"])
    func invalidNames(name: String) throws {
        var package = FilePackage()
        try package.setFile(Data("x".utf8), named: "keep")
        #expect(throws: DocumentError.self) { try package.setFile(Data(), named: name) }
        #expect(throws: DocumentError.self) { try package.setDirectory(FilePackage(), named: name) }
        #expect(throws: DocumentError.self) { try FilePackage(entries: [name: .file(Data())]) }
        #expect(package.names == ["keep"])
        let error = expectDocumentError("invalidPackageEntryName") { try package.setFile(Data(), named: name) }
        #expect(error?.detail == name)
    }

    @Test("names that merely look odd are valid", arguments: ["...", ".hidden", "with space", "ünïcødé", "a\\b"])
    func oddButValidNames(name: String) throws {
        var package = FilePackage()
        try package.setFile(Data("x".utf8), named: name)
        #expect(package[name] == .file(Data("x".utf8)))
    }

    @Test("entries: sorted names, subscript, replace, remove, byte counts")
    func entries() throws {
        var package = try samplePackage()
        #expect(package.names == ["a.txt", "b.bin", "empty", "images"])
        #expect(package.count == 4)
        #expect(package.totalByteCount == 5 + 1000 + 4 + 3)
        #expect(package["a.txt"] == .file(Data("alpha".utf8)))
        #expect(package["missing"] == nil)
        guard case .directory(let images)? = package["images"] else {
            Issue.record("images should be a folder")
            return
        }
        #expect(images.names == ["deeper", "one.png"])

        try package.setFile(Data("now a file".utf8), named: "images")  // replaces the folder
        #expect(package["images"] == .file(Data("now a file".utf8)))
        #expect(package.removeEntry(named: "b.bin") == .file(Data(count: 1000)))
        #expect(package.removeEntry(named: "b.bin") == nil)
        #expect(package.names == ["a.txt", "empty", "images"])
        #expect(DocumentContents.package(package).byteCount == 5 + 10)
    }

    @Test("init(entries:) keeps valid entries")
    func initWithEntries() throws {
        let package = try FilePackage(entries: ["x": .file(Data("1".utf8)), "d": .directory(FilePackage())])
        #expect(package.names == ["d", "x"])
        #expect(!package.isEmpty)
        #expect(FilePackage().isEmpty)
    }

    // MARK: Reading and writing

    @Test("write(to:) then read(from:) gives back the same package, with files and folders on disk")
    func roundTrip() throws {
        try Scratch.with { folder in
            let url = folder.appendingPathComponent("doc.pkg", isDirectory: true)
            let package = try samplePackage()
            try package.write(to: url)
            #expect(tree(url) == ["a.txt", "b.bin", "empty/", "images/", "images/deeper/", "images/deeper/two.txt", "images/one.png"])
            #expect(text(at: url.appendingPathComponent("images/deeper/two.txt")) == "two")
            #expect(permissions(url.appendingPathComponent("a.txt")) == 0o644 & ~POSIX.currentUmask())
            #expect(try FilePackage.read(from: url) == package)
        }
    }

    @Test("write(to:) refuses to write over an existing item")
    func writeRefusesExisting() throws {
        try Scratch.with { folder in
            let url = folder.appendingPathComponent("doc.pkg")
            #expect(mkdir(url.path, 0o755) == 0)
            try put("keep", at: url.appendingPathComponent("old.txt"))
            expectDocumentError("alreadyExists") { try samplePackage().write(to: url) }
            #expect(tree(url) == ["old.txt"])
        }
    }

    @Test("write(to:) removes what it created when a write fails")
    func writeCleansUp() throws {
        try Scratch.with { folder in
            let url = folder.appendingPathComponent("doc.pkg")
            try withInjectedFailure(at: .write, errno: ENOSPC, after: 1, forTarget: url) {
                expectDocumentError("diskFull") { try samplePackage().write(to: url) }
            }
            #expect(listing(folder).isEmpty)
        }
    }

    @Test("read(from:) of a missing folder fails with fileNotFound; of a file, with notReadable")
    func readMissingOrNotAFolder() throws {
        try Scratch.with { folder in
            let missing = folder.appendingPathComponent("nope")
            let error = expectDocumentError("fileNotFound") { try FilePackage.read(from: missing) }
            #expect(error?.url == missing)

            let file = folder.appendingPathComponent("file")
            try put("x", at: file)
            expectDocumentError("notReadable") { try FilePackage.read(from: file) }
        }
    }

    @Test("read(from:) rejects a symbolic link inside, naming it")
    func readRejectsSymbolicLink() throws {
        try Scratch.with { folder in
            let url = try writeSamplePackage(in: folder).url
            #expect(symlink("../a.txt", url.appendingPathComponent("images/link").path) == 0)
            let error = expectDocumentError("unsupportedPackageEntry") { try FilePackage.read(from: url) }
            #expect(error?.url?.lastPathComponent == "link")
            #expect(error?.detail == "symbolic link")
            #expect(error?.errorDescription?.contains("only regular files and folders") == true)
        }
    }

    @Test("read(from:) rejects a FIFO inside without blocking on it")
    func readRejectsFIFO() throws {
        try Scratch.with { folder in
            let url = try writeSamplePackage(in: folder).url
            #expect(mkfifo(url.appendingPathComponent("pipe").path, 0o644) == 0)
            let error = expectDocumentError("unsupportedPackageEntry") { try FilePackage.read(from: url) }
            #expect(error?.detail?.contains("FIFO") == true)
        }
    }

    @Test("read(from:) rejects a name that is not valid UTF-8")
    func readRejectsInvalidUTF8Name() throws {
        try Scratch.with { folder in
            let url = folder.appendingPathComponent("doc.pkg")
            try FilePackage().write(to: url)
            var path = Array(url.path.utf8).map { CChar(bitPattern: $0) }
            path += [0x2F, CChar(bitPattern: 0xFF), 0x61, 0]  // "/\xFFa"
            let fd = open(path, O_CREAT | O_WRONLY, 0o644)
            #expect(fd >= 0)
            close(fd)
            expectDocumentError("invalidPackageEntryName") { try FilePackage.read(from: url) }
            // The raw-byte removal copes with such names too.
            #expect(POSIX.removeTree(url.path) == nil)
            #expect(listing(folder).isEmpty)
        }
    }

    // MARK: Atomic package save

    @Test("writePackage replaces the whole folder: old-only files are gone, new ones present, no temporary left")
    func packageSaveReplacesWholeFolder() throws {
        try Scratch.with { folder in
            let url = folder.appendingPathComponent("doc.pkg")
            let old = try textPackage(["a.txt": "old a", "old-only.txt": "only in old"],
                                      folders: ["sub": textPackage(["x.txt": "x"])])
            try old.write(to: url)
            #expect(chmod(url.path, 0o750) == 0)

            let new = try textPackage(["a.txt": "new a", "new.txt": "only in new"],
                                      folders: ["sub": textPackage(["y.txt": "y"])])
            var reports: [Int64] = []
            try SafeSave.writePackage(new, to: url, creating: false) { reports.append($0) }

            #expect(tree(url) == ["a.txt", "new.txt", "sub/", "sub/y.txt"])
            #expect(text(at: url.appendingPathComponent("a.txt")) == "new a")
            #expect(try FilePackage.read(from: url) == new)
            #expect(permissions(url) == 0o750)
            #expect(listing(folder) == ["doc.pkg"])
            #expect(reports.last == Int64(new.totalByteCount))
        }
    }

    @Test("writePackage creates a new package, with 0755 less the umask")
    func packageSaveCreates() throws {
        try Scratch.with { folder in
            let url = folder.appendingPathComponent("doc.pkg")
            let package = try samplePackage()
            try SafeSave.writePackage(package, to: url, creating: true)
            #expect(try FilePackage.read(from: url) == package)
            #expect(permissions(url) == 0o755 & ~POSIX.currentUmask())
            #expect(listing(folder) == ["doc.pkg"])
        }
    }

    @Test("writePackage with creating onto an existing package fails with alreadyExists and leaves it intact")
    func packageSaveCreatingOntoExisting() throws {
        try Scratch.with { folder in
            let (url, old) = try writeSamplePackage(in: folder)
            expectDocumentError("alreadyExists") {
                try SafeSave.writePackage(FilePackage(), to: url, creating: true)
            }
            try expectOnlyPackage(old, at: url)
        }
    }

    @Test("writePackage replaces a regular file at the target with the folder")
    func packageSaveOverFile() throws {
        try Scratch.with { folder in
            let url = folder.appendingPathComponent("doc.pkg")
            try put("was a file", at: url)
            let package = try samplePackage()
            try SafeSave.writePackage(package, to: url, creating: false)
            try expectOnlyPackage(package, at: url)
        }
    }

    static let packageFailures: [(SafeSave.FailurePoint, Int)] = [
        (.createTemporary, 0), (.createTemporary, 3), (.write, 0), (.write, 2), (.fsync, 1),
        (.fsync, 4), (.setPermissions, 0), (.rename, 0),
    ]

    @Test("a failure in the middle of a package save leaves the old package intact and no temporary tree",
          arguments: packageFailures)
    func packageSaveFailureKeepsOld(step: SafeSave.FailurePoint, passes: Int) throws {
        try Scratch.with { folder in
            let (url, old) = try writeSamplePackage(in: folder)
            var new = FilePackage()
            for index in 0..<6 { try new.setFile(Data("file \(index)".utf8), named: "f\(index).txt") }
            let error = try withInjectedFailure(at: step, errno: EIO, after: passes, forTarget: url) {
                expectDocumentError("saveFailed") { try SafeSave.writePackage(new, to: url, creating: false) }
            }
            #expect(error?.errorNumber == .ioError)
            try expectOnlyPackage(old, at: url)
        }
    }

    @Test("a failure to flush the folder after the swap: new package in place, old tree removed")
    func packageSaveFlushFailure() throws {
        try Scratch.with { folder in
            let url = try writeSamplePackage(in: folder).url
            let new = try textPackage(["n.txt": "n"])
            let error = try withInjectedFailure(at: .directoryFsync, forTarget: url) {
                expectDocumentError("saveFailed") { try SafeSave.writePackage(new, to: url, creating: false) }
            }
            #expect(error?.detail?.contains("in place") == true)
            try expectOnlyPackage(new, at: url)
        }
    }

    @Test("writePackage into a folder that vanished fails with folderMissing")
    func packageSaveFolderMissing() throws {
        try Scratch.with { folder in
            let url = folder.appendingPathComponent("gone/doc.pkg")
            expectDocumentError("folderMissing") {
                try SafeSave.writePackage(FilePackage(), to: url, creating: false)
            }
            #expect(listing(folder).isEmpty)
        }
    }

    @Test("a package save on a full disk fails with diskFull and keeps the old package",
          .enabled(if: SmallTmpfs.isAvailable, Comment(rawValue: SmallTmpfs.unavailableMessage)))
    func packageSaveDiskFull() throws {
        try SmallTmpfs.withMount(size: "64k") { mount in
            let (url, old) = try writeSamplePackage(in: mount)
            var big = FilePackage()
            for index in 0..<4 { try big.setFile(Data(count: 50 * 1024), named: "chunk\(index)") }
            expectDocumentError("diskFull") { try SafeSave.writePackage(big, to: url, creating: false) }
            try expectOnlyPackage(old, at: url)
        }
    }

    @Test("a package save on a read-only file system fails with notWritable and keeps the old package",
          .enabled(if: SmallTmpfs.isAvailable, Comment(rawValue: SmallTmpfs.unavailableMessage)))
    func packageSaveReadOnly() throws {
        try SmallTmpfs.withMount(size: "64k") { mount in
            let (url, old) = try writeSamplePackage(in: mount)
            try SmallTmpfs.remountReadOnly(mount)
            expectDocumentError("notWritable") {
                try SafeSave.writePackage(FilePackage(), to: url, creating: false)
            }
            try expectOnlyPackage(old, at: url)
        }
    }
}
