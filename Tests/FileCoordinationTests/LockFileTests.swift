import Foundation
import Glibc
import Testing
@testable import FileCoordination

@Suite("Lock files and the lock directory")
struct LockFileTests {
    @Test func lockFilesArePersistentAndMirrorTheCanonicalPath() throws {
        let scratch = try Scratch()
        let file = scratch.file("persist.txt", contents: "x")
        try Coordinator().coordinate(writingItemAt: file) { _ in }
        let directory = try LockDirectory.current()
        let lockFile = LockFileNaming.lockFilePath(for: CanonicalPath.of(file), in: directory.path)
        #expect(lockFile.hasSuffix(CanonicalPath.of(file) + "/@"))
        var info = stat()
        #expect(lstat(lockFile, &info) == 0, "the lock file stays after release")
        #expect(info.st_mode & 0o777 == 0o600)
    }

    @Test func symlinkedParentsAndDotDotNameTheSameLock() throws {
        let scratch = try Scratch()
        let real = try scratch.directory("real")
        let link = scratch.url.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
        let viaReal = real.appendingPathComponent("doc.txt")
        let viaLink = URL(fileURLWithPath: link.path + "/../link/doc.txt")
        #expect(CanonicalPath.of(viaLink) == CanonicalPath.of(viaReal))
        let writer = Holder.writing(viaReal)
        #expect(readIsBlocked(viaLink))
        writer.release()
    }

    @Test func namesThatLookLikeLockFilesAreEscaped() {
        #expect(LockFileNaming.escape("@") == "@@")
        #expect(LockFileNaming.escape("@x") == "@@x")
        #expect(LockFileNaming.escape("plain") == "plain")
        #expect(LockFileNaming.unescape("@@x") == "@x")
        #expect(LockFileNaming.unescape("@") == nil)
        #expect(LockFileNaming.escape(Substring(String(repeating: "n", count: 300))).hasPrefix("@#"))
        #expect(LockFileNaming.lockFilePath(for: "/", in: "/L") == "/L/@")
        #expect(LockFileNaming.lockFilePath(for: "/a/@b", in: "/L") == "/L/a/@@b/@")
    }

    @Test func itemsNamedLikeLockFilesStillCoordinate() throws {
        let scratch = try Scratch()
        let odd = scratch.file("@", contents: "x")
        let writer = Holder.writing(odd)
        #expect(readIsBlocked(odd))
        #expect(!readIsBlocked(scratch.url))
        writer.release()
    }

    @Test func theLockDirectoryIsChosenFromTheEnvironment() throws {
        let scratch = try Scratch()
        let explicit = scratch.url.appendingPathComponent("explicit").path
        #expect(try LockDirectory.resolve(environment: ["CLOUDDOCUMENTS_LOCK_DIR": explicit]).path == explicit)
        let runtime = try scratch.directory("runtime").path
        #expect(try LockDirectory.resolve(environment: ["XDG_RUNTIME_DIR": runtime]).path == runtime + "/clouddocuments")
        let missingRuntime = scratch.url.appendingPathComponent("no-such-runtime-dir").path
        let temp = try scratch.directory("tmp").path
        #expect(try LockDirectory.resolve(environment: ["XDG_RUNTIME_DIR": missingRuntime, "TMPDIR": temp]).path
                == temp + "/clouddocuments-\(geteuid())", "a runtime directory that does not exist is skipped")
        #expect(try LockDirectory.resolve(environment: ["TMPDIR": temp]).path == temp + "/clouddocuments-\(geteuid())")
        var info = stat()
        #expect(stat(explicit, &info) == 0 && info.st_mode & 0o777 == 0o700, "created owner-only")
    }

    @Test func aSymlinkedLockDirectoryIsRefused() throws {
        let scratch = try Scratch()
        let target = try scratch.directory("target")
        chmod(target.path, 0o700)
        let link = scratch.url.appendingPathComponent("locks")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        #expect(refusal(link.path)?.contains("symbolic link") == true)
    }

    @Test func aWorldWritableLockDirectoryIsRefused() throws {
        let scratch = try Scratch()
        let directory = try scratch.directory("open")
        chmod(directory.path, 0o777)
        #expect(refusal(directory.path)?.contains("writable by group or others") == true)
        chmod(directory.path, 0o720)
        #expect(refusal(directory.path)?.contains("writable by group or others") == true)
    }

    @Test func aLockDirectoryOwnedBySomeoneElseIsRefused() throws {
        let scratch = try Scratch()
        let directory = try scratch.directory("foreign")
        chmod(directory.path, 0o700)
        guard chown(directory.path, 65534, 65534) == 0 else {
            Issue.record("chown is not permitted here, so the foreign-owner case cannot be set up")
            return
        }
        #expect(refusal(directory.path)?.contains("owned by user 65534") == true)
    }

    @Test func aLockDirectoryThatIsAFileIsRefused() throws {
        let scratch = try Scratch()
        let file = scratch.file("file", contents: "x")
        #expect(refusal(file.path)?.contains("not a directory") == true)
        #expect(refusal("relative/path")?.contains("absolute") == true)
    }

    private func refusal(_ path: String) -> String? {
        do {
            _ = try LockDirectory.resolve(environment: ["CLOUDDOCUMENTS_LOCK_DIR": path])
            return nil
        } catch {
            if case .lockDirectoryUnusable(_, let reason) = error { return reason }
            return "\(error)"
        }
    }
}
