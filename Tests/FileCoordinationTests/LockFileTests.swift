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
        let lockFile = LockFileNaming.lockFilePath(for: CanonicalPath.of(file, in: CoordinationRuntime.process.paths), in: directory.path)
        #expect(lockFile.hasSuffix(CanonicalPath.of(file, in: CoordinationRuntime.process.paths) + "/@"))
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
        #expect(CanonicalPath.of(viaLink, in: CoordinationRuntime.process.paths) == CanonicalPath.of(viaReal, in: CoordinationRuntime.process.paths))
        let writer = Holder.writing(viaReal)
        #expect(readWaits(viaLink))
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
        #expect(readWaits(odd))
        #expect(readGetsIn(scratch.url))
        writer.release()
    }

    @Test func theLockDirectoryComesFromTheUserIDAndTheDiskNotTheEnvironment() throws {
        let scratch = try Scratch()
        let uid = geteuid()
        let explicit = scratch.url.appendingPathComponent("explicit").path
        #expect(try LockDirectory.resolve(environment: ["CLOUDDOCUMENTS_LOCK_DIR": explicit]).path == explicit)
        var info = stat()
        #expect(stat(explicit, &info) == 0 && info.st_mode & 0o777 == 0o700, "created owner-only")

        let runtimeRoot = try scratch.directory("run-user").path
        let temporaryRoot = try scratch.directory("tmp").path
        let misleading = ["XDG_RUNTIME_DIR": try scratch.directory("xdg").path, "TMPDIR": try scratch.directory("tmpdir").path]
        func resolved(_ environment: [String: String]) throws -> String {
            try LockDirectory.resolve(environment: environment, uid: uid, runtimeRoot: runtimeRoot, temporaryRoot: temporaryRoot).path
        }
        // No runtime directory for this user: the per-uid folder in the temporary root.
        #expect(try resolved([:]) == temporaryRoot + "/clouddocuments-\(uid)")
        #expect(try resolved(misleading) == temporaryRoot + "/clouddocuments-\(uid)", "XDG_RUNTIME_DIR and TMPDIR are ignored")
        // A runtime directory that exists and is the user's own wins, whatever the environment.
        let runtime = try scratch.directory("run-user/\(uid)").path
        #expect(try resolved([:]) == runtime + "/clouddocuments")
        #expect(try resolved(misleading) == runtime + "/clouddocuments")
        // One that belongs to someone else, or is a link, is not used.
        if chown(runtime, 65534, 65534) == 0 {
            #expect(try resolved([:]) == temporaryRoot + "/clouddocuments-\(uid)")
        }
        rmdir(runtime + "/clouddocuments")
        try FileManager.default.removeItem(atPath: runtime)
        try FileManager.default.createSymbolicLink(atPath: runtime, withDestinationPath: misleading["XDG_RUNTIME_DIR"]!)
        #expect(try resolved([:]) == temporaryRoot + "/clouddocuments-\(uid)")
    }

    /// A scratch folder with a private `target/` and a link `locks` → `target`.
    private func linkedLockDirectory(_ scratch: Scratch) throws -> URL {
        let target = try scratch.directory("target")
        chmod(target.path, 0o700)
        try FileManager.default.createSymbolicLink(at: scratch.url.appendingPathComponent("locks"), withDestinationURL: target)
        return target
    }

    @Test("the symlink check cannot be bypassed with trailing slashes or dots",
          arguments: ["locks//", "locks/.", "locks/./", "locks/", "./locks"])
    func theSymlinkCheckCannotBeBypassed(spelling: String) throws {
        let scratch = try Scratch()
        _ = try linkedLockDirectory(scratch)
        #expect(refusal(scratch.url.path + "/" + spelling)?.contains("symbolic link") == true)
    }

    @Test func dotsAfterARealLockDirectory() throws {
        let scratch = try Scratch()
        let target = try linkedLockDirectory(scratch)
        #expect(refusal(target.path + "/..")?.contains("..") == true)
        // A real folder spelled with dots and slashes is accepted, under its plain name.
        #expect(try LockDirectory.resolve(environment: ["CLOUDDOCUMENTS_LOCK_DIR": target.path + "/./"]).path
                == target.path)
    }

    @Test func aLockDirectoryOthersCanReadIsRefused() throws {
        let scratch = try Scratch()
        let directory = try scratch.directory("readable")
        chmod(directory.path, 0o755)
        #expect(refusal(directory.path)?.contains("readable by group or others") == true)
        chmod(directory.path, 0o750)
        #expect(refusal(directory.path)?.contains("readable by group or others") == true)
        chmod(directory.path, 0o701)
        #expect(refusal(directory.path) != nil)
        chmod(directory.path, 0o700)
        #expect(refusal(directory.path) == nil)
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
