import Foundation
import Glibc
import Testing
@testable import FileCoordination

/// Bounded descriptors, reclaimed lock files, and a lock directory every process of a user agrees
/// on. Tests that make many lock files use a lock directory of their own (an internal API here,
/// `CLOUDDOCUMENTS_LOCK_DIR` for child processes), so they never disturb tests running beside them.
@Suite("Lock files: descriptors, reclaiming, one directory per user")
struct LockFileReclaimingTests {
    // MARK: Descriptors

    @Test func descriptorsStayBoundedWhateverTheNumberOfItemsCoordinated() throws {
        let scratch = try Scratch()
        defer { withExtendedLifetime(scratch) {} }  // its folder holds the lock directory
        let files = try scratch.directory("files").path
        let child = try ChildProcess(["many-files", files, "5000", "200"],
                                     environment: childEnvironment(lockDirectory: try privateLockDirectory(scratch)))
        let line = child.expect("OK")
        child.waitForExit()
        let count = line.flatMap { $0.hasPrefix("OK ") ? Int($0.dropFirst(3)) : nil }
        #expect(count != nil, "5,000 files with 200 descriptors allowed: \(line ?? "no answer")")
        #expect((count ?? .max) <= 64 + 40, "idle lock-file descriptors are bounded (\(count ?? -1) open)")
    }

    @Test func theIdleCacheClosesTheLeastRecentlyUsed() throws {
        let cache = IdleDescriptors(limit: 2)
        let files = (0..<3).map { LockFile(itemPath: "/x\($0)", filePath: "/dev/null", epoch: nil) }
        // Pipes: a write end handed to the cache is closed exactly when its read end reads EOF
        // (checking the descriptor number itself would race with other tests reusing it).
        var readEnds: [Int32] = []
        var fds: [Int32] = []
        for _ in 0..<3 {
            var ends: [Int32] = [0, 0]
            #expect(pipe(&ends) == 0)
            _ = fcntl(ends[0], F_SETFL, O_NONBLOCK)
            readEnds.append(ends[0])
            fds.append(ends[1])
        }
        defer { readEnds.forEach { _ = close($0) } }
        func isClosed(_ index: Int) -> Bool {
            var byte: UInt8 = 0
            return read(readEnds[index], &byte, 1) == 0
        }
        for (file, fd) in zip(files, fds) { cache.put(fd, for: file) }
        #expect(cache.count == 2)
        #expect(isClosed(0), "the oldest was closed")
        #expect(!isClosed(1) && !isClosed(2), "the two newest are kept open")
        #expect(cache.take(for: files[0]) == nil)
        #expect(cache.take(for: files[2]) == fds[2])
        #expect(cache.take(for: files[1]) == fds[1])
        for fd in fds.dropFirst() { close(fd) }
    }

    // MARK: Reclaiming, in this process

    @Test func onlyUnheldLockFilesOfItemsThatAreGoneAreReclaimed() throws {
        let scratch = try Scratch()
        defer { withExtendedLifetime(scratch) {} }  // its folder holds the lock directory
        let directory = try privateLockDirectory(scratch)
        let reclaimer = LockFileReclaimer(directory: directory)
        let present = scratch.file("present.txt", contents: "x").path
        let gone = scratch.url.appendingPathComponent("gone.txt").path
        let owner = LockOwner(lockTable: CoordinationRuntime.process.lockTable)
        try take(.write, present, owner, directory); owner.release(.write, on: present)
        try take(.read, gone, owner, directory)

        #expect(!reclaimer.reclaim(lockFile: lockFile(present, directory), item: present), "its item exists")
        #expect(!reclaimer.reclaim(lockFile: lockFile(gone, directory), item: gone), "it is held")
        owner.release(.read, on: gone)
        _ = reclaimer.sweep()
        #expect(exists(lockFile(present, directory)))
        #expect(!exists(lockFile(gone, directory)))
        #expect(!exists(LockFileNaming.mirrorDirectory(for: gone, in: directory.path)), "its empty mirror folder went too")
    }

    @Test func aHolderWhoseLockFileWasReclaimedOpensTheNewOneAndStillExcludes() throws {
        let scratch = try Scratch()
        defer { withExtendedLifetime(scratch) {} }  // its folder holds the lock directory
        let directory = try privateLockDirectory(scratch)
        let item = scratch.url.appendingPathComponent("new.txt").path
        let first = LockOwner(lockTable: CoordinationRuntime.process.lockTable), second = LockOwner(lockTable: CoordinationRuntime.process.lockTable)
        try take(.write, item, first, directory)
        first.release(.write, on: item)  // `first` keeps its descriptor, idle
        // (This process's own background reclaimer may have been first: either way it is gone.)
        _ = LockFileReclaimer(directory: directory).reclaim(lockFile: lockFile(item, directory), item: item)
        #expect(!exists(lockFile(item, directory)))

        try take(.write, item, second, directory)  // creates a new lock file
        #expect(exists(lockFile(item, directory)))
        #expect(waits(.write, item, first, directory), "the idle descriptor of the unlinked file must not let it in")
        second.release(.write, on: item)
        try take(.write, item, first, directory, timeout: Polling.hangGuard)
        #expect(waits(.read, item, second, directory))
        first.release(.write, on: item)
    }

    @Test func aCreatorsTreeLockOnAReclaimedFolderFileStillWaitsForADeleteOfTheFolder() throws {
        let scratch = try Scratch()
        defer { withExtendedLifetime(scratch) {} }  // its folder holds the lock directory
        let directory = try privateLockDirectory(scratch)
        let folder = try scratch.directory("folder").path
        let creator = LockOwner(lockTable: CoordinationRuntime.process.lockTable)
        // Creating the lock file of folder/x takes the folder's tree lock shared; the folder's
        // descriptor then waits, idle, in this process's descriptor cache.
        try take(.write, folder + "/x", creator, directory)
        creator.release(.write, on: folder + "/x")
        // Another process reclaims the folder's lock file: the cached descriptor is now stale.
        try reclaimAsAnotherProcess(lockFile(folder, directory), directory)

        // A delete of the folder in another process: write and tree locks on a new lock file.
        let deleter = try ChildProcess(["hold", "delete", folder], environment: childEnvironment(lockDirectory: directory))
        #expect(deleter.expect("HELD") == "HELD")
        #expect(waits(.read, folder + "/y", LockOwner(lockTable: CoordinationRuntime.process.lockTable), directory), "a new lock file inside the folder must wait for the delete")
        deleter.send()
        #expect(deleter.expect("RELEASED") == "RELEASED")
        deleter.waitForExit()
        let reader = LockOwner(lockTable: CoordinationRuntime.process.lockTable)
        try take(.read, folder + "/y", reader, directory, timeout: Polling.hangGuard)
        reader.release(.read, on: folder + "/y")
    }

    // MARK: Reclaiming, across processes

    @Test func racingProcessesNeverOverlapWhileLockFilesAreReclaimed() throws {
        let scratch = try Scratch()
        defer { withExtendedLifetime(scratch) {} }  // its folder holds the lock directory
        let directory = try privateLockDirectory(scratch)
        let work = try scratch.directory("work").path
        let items = 3, iterations = 1500
        let stop = Box(false)
        let reclaimed = Box(0)
        let reclaimerDone = onThread {
            let reclaimer = LockFileReclaimer(directory: directory)
            while !stop.value {
                let result = reclaimer.pass(budget: 64)
                reclaimed.mutate { $0 += result.reclaimedFiles }
            }
        }
        let children = try (0..<3).map { index in
            try ChildProcess(["race", work, "\(items)", "\(iterations)", "p\(index)"],
                             environment: childEnvironment(lockDirectory: directory))
        }
        for child in children {
            #expect(child.expect("DONE") == "DONE")
            child.waitForExit()
        }
        stop.value = true
        #expect(reclaimerDone.wait())

        var pairs = 0
        for index in 0..<items {
            let log = try String(contentsOfFile: work + "/log-\(index)", encoding: .utf8)
            let lines = log.split(separator: "\n")
            #expect(lines.count % 2 == 0)
            for start in stride(from: 0, to: lines.count - 1, by: 2) {
                let begin = lines[start], end = lines[start + 1]
                guard begin.hasPrefix("B "), end == "E " + begin.dropFirst(2) else {
                    Issue.record("two writers of item-\(index) overlapped: \(begin) / \(end)")
                    break
                }
                pairs += 1
            }
        }
        #expect(pairs == 3 * iterations)
        #expect(reclaimed.value > 0, "lock files were reclaimed while the processes raced")
    }

    @Test func theLockDirectoryShrinksBackAfter10000FilesAreDeleted() throws {
        let scratch = try Scratch()
        defer { withExtendedLifetime(scratch) {} }  // its folder holds the lock directory
        let directory = try privateLockDirectory(scratch)
        let files = try scratch.directory("many").path
        let child = try ChildProcess(["churn", files, "10000"], environment: childEnvironment(lockDirectory: directory))
        #expect(child.expect("ALL DELETED") == "ALL DELETED")
        // The child's own background reclaimer does the work, with no call from anyone: wait for it.
        let shrank = Polling.holds(interval: .milliseconds(50)) { entryCount(directory.path) <= 12 }
        child.closeInput()
        child.waitForExit()
        #expect(shrank, "\(entryCount(directory.path)) entries left in the lock directory")
    }

    // MARK: One lock directory per user, whatever the environment

    @Test func aWriterWithXDGRuntimeDirAndAReaderWithoutItCoordinate() throws {
        let scratch = try Scratch()
        defer { withExtendedLifetime(scratch) {} }  // its folder holds the lock directory
        let file = scratch.file("shared.txt", contents: "x")
        let runtime = try scratch.directory("xdg-runtime").path
        chmod(runtime, 0o700)
        var withRuntime = ProcessInfo.processInfo.environment
        withRuntime[LockDirectory.environmentVariable] = nil
        withRuntime["XDG_RUNTIME_DIR"] = runtime
        var without = withRuntime
        without["XDG_RUNTIME_DIR"] = nil
        without["TMPDIR"] = try scratch.directory("other-tmp").path

        let writer = try ChildProcess(["hold", "write", file.path], environment: withRuntime)
        #expect(writer.expect("HELD") == "HELD")
        let reader = try ChildProcess(["try", "read", file.path, "probe"], environment: without)
        #expect(reader.readLine() == "WAITED", "the reader must wait for the writer")
        reader.waitForExit()
        writer.send()
        #expect(writer.expect("RELEASED") == "RELEASED")
        writer.waitForExit()
        let after = try ChildProcess(["try", "read", file.path, "wait"], environment: without)
        #expect(after.readLine() == "OK")
        after.waitForExit()
    }

    // MARK: Helpers

    private func privateLockDirectory(_ scratch: Scratch) throws -> LockDirectory {
        try LockDirectory.validate(scratch.url.appendingPathComponent("locks").path)
    }

    private func childEnvironment(lockDirectory: LockDirectory) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment[LockDirectory.environmentVariable] = lockDirectory.path
        return environment
    }

    private func take(_ access: LockAccess, _ path: String, _ owner: LockOwner, _ directory: LockDirectory,
                      timeout: Duration? = nil, token: CancellationToken = CancellationToken()) throws {
        let stepper = LockStepper(context: WaitContext(timeout: timeout, token: token), owner: owner)
        try owner.acquire(access, path: path, stepper: stepper) { () throws(CoordinationError) in
            (CoordinationRuntime.process.lockTable.file(for: path, in: directory), directory)
        }
    }

    /// True when taking `access` waits for a lock (seen in the kernel; then the take is cancelled).
    private func waits(_ access: LockAccess, _ path: String, _ owner: LockOwner, _ directory: LockDirectory) -> Bool {
        let token = CancellationToken()
        return contend(cancel: { token.cancel() }) { try self.take(access, path, owner, directory, token: token) } == .waited
    }

    /// Steps 1–3 of the reclaiming protocol, without touching this process's descriptor cache.
    private func reclaimAsAnotherProcess(_ path: String, _ directory: LockDirectory) throws {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        try #require(OFDLock.apply(.exclusive, fd: fd, start: 0, length: 0, wait: false) == .done)
        try #require(ReclaimEpoch.of(directoryPath: directory.path) != nil)
        try #require(ReclaimEpoch.of(directoryPath: directory.path)?.advance() == true)
        try #require(unlink(path) == 0)
    }

    private func lockFile(_ item: String, _ directory: LockDirectory) -> String {
        LockFileNaming.lockFilePath(for: item, in: directory.path)
    }

    private func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    private func entryCount(_ path: String) -> Int {
        guard let enumerator = FileManager.default.enumerator(atPath: path) else { return 0 }
        var count = 0
        while enumerator.nextObject() != nil { count += 1 }
        return count
    }
}
