import Foundation
import Glibc
import SystemSupport
import Testing
import TestSupport
@testable import CloudDocuments

/// The shortcuts that keep a small save close to the raw system calls (issue 7, save speed) keep
/// every guarantee: permissions and owner, links in the folder's path, the look for strays, the
/// snapshot taken at once after an earlier save.
@Suite("Save fast path: fewer system calls, same guarantees", .timeLimit(.minutes(1 * Polling.deadlineScale)))
struct SaveFastPathTests {
    // MARK: Permissions given at creation

    private func status(mode: mode_t, user: uid_t = geteuid(), group: gid_t = getegid()) -> stat {
        var info = stat()
        info.st_mode = S_IFREG | mode
        info.st_uid = user
        info.st_gid = group
        return info
    }

    /// The original's bits (nil: no original) and the bits the temporary file is created with.
    static let creationModes: [(mode_t?, mode_t)] = [
        (nil, 0o644), (0o640, 0o640), (0o755, 0o755), (0o600, 0o600),
        // Writable by others, or with special bits: created private, the bits set after writing.
        (0o664, 0o600), (0o666, 0o600), (0o646, 0o600), (0o4755, 0o600), (0o2755, 0o600), (0o1644, 0o600),
    ]

    @Test("the temporary file is created with the final bits only when nobody else may write them", arguments: creationModes)
    func creationMode(original: mode_t?, created: mode_t) {
        #expect(SafeSave.creationMode(like: original.map { status(mode: $0) }) == created)
    }

    @Test("bits and owner are set after writing only where the new file differs from the original")
    func needsAttributes() {
        let original = status(mode: 0o644)
        #expect(!SafeSave.needsAttributes(status(mode: 0o644), toReplace: original))
        #expect(SafeSave.needsAttributes(status(mode: 0o600), toReplace: original), "the umask took bits away")
        #expect(SafeSave.needsAttributes(status(mode: 0o644, user: 4321), toReplace: original))
        #expect(SafeSave.needsAttributes(status(mode: 0o644, group: 8765), toReplace: original))
        #expect(!SafeSave.needsAttributes(status(mode: 0o600), toReplace: nil), "a new file keeps 0644 less the umask")
    }

    // MARK: Paths

    @Test("folders without '.', '..' or empty components are used as given (no realpath)", arguments: [
        ("/", true), ("/a", true), ("/a/b", true), ("/a/.b", true), ("/a/..b", true), ("/a/b.", true), ("/a/...", true),
        ("", false), ("a/b", false), ("/a//b", false), ("/a/./b", false), ("/a/../b", false), ("/a/.", false),
        ("/a/..", false), ("/.", false), ("/..", false), ("//", false),
    ])
    func plainAbsolutePaths(_ path: String, isPlain: Bool) {
        #expect(SavePaths.isPlainAbsolute(path) == isPlain)
    }

    @Test("saving through a linked folder writes into the folder it leads to and finds strays there")
    func linkedFolder() throws {
        try Scratch.with { folder in
            let real = folder.appendingPathComponent("real")
            try FileManager.default.createDirectory(at: real, withIntermediateDirectories: false)
            let link = folder.appendingPathComponent("lnk")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
            let url = link.appendingPathComponent("doc.txt")
            try SafeSave.write(Data("one".utf8), to: url, creating: true)
            let stray = SavePaths.siblingName(of: real.appendingPathComponent("doc.txt").path, marker: StrayTemporaryFiles.marker)
            try put("stray", at: URL(fileURLWithPath: stray))

            try SafeSave.write(Data("two".utf8), to: url, creating: false)
            #expect(text(at: real.appendingPathComponent("doc.txt")) == "two")
            #expect(listing(real) == ["doc.txt"], "the stray is gone, no temporary file is left")
            #expect(listing(folder) == ["lnk", "real"])
        }
    }

    @Test("a dangling link at the target is replaced by the file; a missing target is created")
    func targetStatusCases() throws {
        try Scratch.with { folder in
            let dangling = folder.appendingPathComponent("dangling.txt")
            try FileManager.default.createSymbolicLink(atPath: dangling.path, withDestinationPath: folder.appendingPathComponent("nowhere").path)
            try SafeSave.write(Data("file".utf8), to: dangling, creating: false)
            var info = stat()
            #expect(lstat(dangling.path, &info) == 0)
            #expect(info.st_mode & S_IFMT == S_IFREG)
            #expect(text(at: dangling) == "file")

            let missing = folder.appendingPathComponent("new.txt")
            try SafeSave.write(Data("new".utf8), to: missing, creating: false)
            #expect(text(at: missing) == "new")
            #expect(throws: DocumentError.self) { try SafeSave.write(Data("x".utf8), to: missing, creating: true) }
        }
    }

    // MARK: Reading a folder through a descriptor

    @Test("every name of a folder is read through its descriptor, more than one buffer's worth and not UTF-8 too")
    func folderEntryNames() throws {
        try Scratch.with { folder in
            var expected: Set<[UInt8]> = [Array(".".utf8), Array("..".utf8)]
            for index in 0..<400 {  // about 40 KiB of records: several reads
                let name = String(repeating: "n", count: 80) + "-\(index)"
                try put("", at: folder.appendingPathComponent(name))
                expected.insert(Array(name.utf8))
            }
            let odd: [UInt8] = Array("odd-".utf8) + [0xFF, 0xFE]
            let oddPath = PathBytes.string(fromBytes: Array((folder.path + "/").utf8) + odd)
            let fd = PathBytes.withCString(oddPath) { open($0, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600) }
            #expect(fd >= 0)
            close(fd)
            expected.insert(odd)

            let directory = StrayTemporaryFiles.openFolder(folder.path)
            #expect(directory >= 0)
            defer { close(directory) }
            var seen: [[UInt8]] = []
            #expect(FolderEntryNames.forEach(inFolder: directory) { seen.append(Array($0)) })
            #expect(seen.count == expected.count, "each name once")
            #expect(Set(seen) == expected)
        }
    }

    @Test("temporary names end in 12 lowercase hex digits, differ from save to save, and are found as strays")
    func temporaryNameSuffixes() {
        var seen = Set<String>()
        for _ in 0..<20_000 {
            let suffix = TemporaryNameSuffix.make(marker: StrayTemporaryFiles.marker)
            #expect(suffix.hasPrefix(".cdsave-"))
            let digits = suffix.utf8.dropFirst(".cdsave-".utf8.count)
            #expect(digits.count == 12)
            #expect(digits.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
            seen.insert(suffix)
        }
        #expect(seen.count == 20_000, "no name twice")
        // Digits of every value, leading zeros included: the highest nibble is not always zero.
        #expect(seen.contains { !$0.hasSuffix("0") } && seen.contains { $0.dropFirst(".cdsave-".count).hasPrefix("f") })
        let name = SavePaths.siblingName(of: "/x/doc.txt", marker: StrayTemporaryFiles.marker)
        #expect(StrayTemporaryFiles.isTemporaryName(Array((name as NSString).lastPathComponent.utf8), forName: ArraySlice("doc.txt".utf8)))
    }

    @Test("a process seeds its own temporary names: one seen under another process id (a child made by fork) seeds again")
    func temporaryNamesPerProcess() {
        // Process ids no process has: the generator takes each for a new process and seeds
        // itself again from the system's random source, as a child made by `fork` does.
        let first = TemporaryNameSuffix.next48(inProcess: -2)
        let second = TemporaryNameSuffix.next48(inProcess: -3)
        let third = TemporaryNameSuffix.next48(inProcess: -2)
        #expect(Set([first, second, third]).count == 3)
        #expect([first, second, third].allSatisfy { $0 <= 0xFFFF_FFFF_FFFF })
    }

    // MARK: The document

    @Test("when a save returns, the document is idle: the next save takes its snapshot at once")
    @MainActor
    func idleAfterSave() async throws {
        try await withOpenNote(containing: "start") { _, url, document in
            for round in 0..<50 {
                document.replaceText("round \(round)")
                try await document.saveThrowing(to: url, for: .forOverwriting)
                #expect(document.fileAccessIsIdle)
                #expect(!document.hasUnsavedChanges)
            }
            #expect(text(at: url) == "round 49")
        }
    }
}
