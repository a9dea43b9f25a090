import Foundation
import Testing
@testable import FileCoordination

/// Regression tests for the lock transitions of issue 6: a group writer's downgrade, upgrades
/// past a queued writer, two upgraders at once, coordinators of one presenter, and a directory
/// delete that finds a directory only once its lock is held.
@Suite("Lock transitions")
struct LockTransitionTests {
    // MARK: Bug 1 — a group writer's downgrade keeps excluding plain writers

    @Test func aGroupWriteThatEndsUnderItsOwnReadStillExcludesPlainWriters() throws {
        let scratch = try Scratch()
        let file = scratch.file("group-downgrade.txt", contents: "x")
        let group = coordinator(purpose: "com.example.downgrade")
        let writeHeld = Signal(), readHeld = Signal()
        let writeEnded = onThread {
            try? group.coordinate(writingItemAt: file) { _ in
                writeHeld.fire()
                _ = readHeld.wait()
            }
        }
        #expect(writeHeld.wait())
        let reader = Holder(group) { c, inside in
            try c.coordinate(readingItemAt: file) { _ in
                readHeld.fire()
                inside()
            }
        }
        #expect(writeEnded.wait())
        // Only the read is left: it shares with readers and its own group, and excludes writers.
        #expect(writeWaits(file), "a plain writer got in while the group's read still runs")
        #expect(writeWaits(file, purpose: "com.example.other"))
        #expect(writeGetsIn(file, purpose: "com.example.downgrade"))
        #expect(readGetsIn(file))
        reader.release()
        #expect(writeGetsIn(file))
    }

    // MARK: Bug 2 — an upgrade gets past a writer queued on the pending gate

    /// Reader and writer purposes: plain (nil) or a purpose group.
    static let upgradeModes: [(String?, String?)] = [(nil, nil), ("com.example.r", nil), (nil, "com.example.w"), ("com.example.r", "com.example.w")]

    /// Takes a read of `file`, says so (`readHeld`), waits until the test has queued a writer
    /// (`writerQueued`), upgrades to a write inside the read, writes "upgraded", and hands what
    /// the read then sees to `readBack`, still inside the read.
    static func readThenUpgrade(_ reader: Coordinator, _ file: URL, readHeld: Signal, writerQueued: Signal,
                                readBack: (String) -> Void) throws {
        try reader.coordinate(readingItemAt: file) { url in
            readHeld.fire()
            _ = writerQueued.wait()
            try reader.coordinate(writingItemAt: url) { url in
                try "upgraded".write(to: url, atomically: false, encoding: .utf8)
            }
            readBack((try? String(contentsOf: url, encoding: .utf8)) ?? "?")
        }
    }

    @Test(arguments: upgradeModes)
    func aReadUpgradedToAWriteGetsPastAWriterQueuedInThisProcess(readerPurpose: String?, writerPurpose: String?) throws {
        let scratch = try Scratch()
        let file = scratch.file("upgrade.txt", contents: "original")
        let events = Box<[String]>([])
        // No timeout, like Apple's.
        let reader = readerPurpose.map { coordinator(purpose: $0) } ?? Coordinator()
        let writer = writerPurpose.map { coordinator(purpose: $0) } ?? Coordinator()
        let writerQueued = Signal(), readHeld = Signal()
        let readerDone = onThread {
            do {
                try Self.readThenUpgrade(reader, file, readHeld: readHeld, writerQueued: writerQueued) { text in
                    events.mutate { $0.append("read back " + text) }
                }
            } catch {
                events.mutate { $0.append("reader failed: \(error)") }
            }
        }
        #expect(readHeld.wait())
        let writerDone = onThread {
            do {
                try writer.coordinate(writingItemAt: file) { url in
                    events.mutate { $0.append("writer") }
                    try "writer".write(to: url, atomically: false, encoding: .utf8)
                }
            } catch {
                events.mutate { $0.append("writer failed: \(error)") }
            }
        }
        #expect(Polling.holds { LockProbe.writerIsWaiting(file) })
        writerQueued.fire()
        let finished = readerDone.wait() && writerDone.wait()
        #expect(finished, "the upgrade deadlocked against the queued writer")
        if !finished { reader.cancel(); writer.cancel(); _ = readerDone.wait(); _ = writerDone.wait() }
        #expect(events.value == ["read back upgraded", "writer"])
        #expect(try String(contentsOf: file, encoding: .utf8) == "writer")
    }

    @Test func aReadUpgradedToAWriteGetsPastAWriterQueuedInAnotherProcess() throws {
        let scratch = try Scratch()
        let file = scratch.file("upgrade-x.txt", contents: "original")
        let reader = Coordinator()  // no timeout
        let readBack = Box<String>("")
        var child: ChildProcess?
        let readHeld = Signal(), writerQueued = Signal()
        let readerDone = onThread {
            do {
                try Self.readThenUpgrade(reader, file, readHeld: readHeld, writerQueued: writerQueued) { readBack.value = $0 }
            } catch {
                readBack.value = "failed: \(error)"
            }
        }
        #expect(readHeld.wait())
        child = try ChildProcess(["queue-write", file.path, "from the other process"])
        #expect(child?.expect("STARTING") == "STARTING")
        #expect(Polling.holds { LockProbe.writerIsWaiting(file) })
        writerQueued.fire()
        let finished = readerDone.wait()
        #expect(finished, "the upgrade deadlocked against the writer queued in another process")
        if !finished { reader.cancel(); child?.kill9(); _ = readerDone.wait() }
        #expect(readBack.value == "upgraded")
        #expect(child?.expect("WROTE") == "WROTE")
        child?.waitForExit()
        #expect(try String(contentsOf: file, encoding: .utf8) == "from the other process")
    }

    // MARK: Bug 2 — two upgraders at once

    /// Two readers of different owners that both upgrade: the first gets its write, the second is
    /// refused with `.wouldDeadlock` at once (not timed out). Purposes: nil is plain mode.
    @Test("two readers that both upgrade: one fails at once with wouldDeadlock", arguments: [
        (nil, nil),                                // two plain readers
        ("com.example.p", "com.example.q"),        // two groups
        ("com.example.p", nil),                    // a group and a plain reader
    ] as [(String?, String?)])
    func twoUpgradersOneFailsAtOnce(first: String?, second: String?) throws {
        let scratch = try Scratch()
        let file = scratch.file("two-upgraders.txt", contents: "x")
        let outcome = try twoUpgraders(file, first: first.map { coordinator(purpose: $0) } ?? Coordinator(),
                                       second: second.map { coordinator(purpose: $0) } ?? Coordinator())
        #expect(outcome.first == "upgraded")
        #expect(outcome.second == "wouldDeadlock")   // refused, not timed out
    }

    @Test func twoMembersOfOneGroupThatUpgradeWhileAnotherReadsBothGetThrough() throws {
        let scratch = try Scratch()
        let file = scratch.file("one-group.txt", contents: "x")
        let plainReader = Holder.reading(file)
        let results = Box<[String]>([])
        var done: [Signal] = []
        var gos: [Signal] = []
        for _ in 0..<2 {
            let member = coordinator(purpose: "com.example.same")
            let reading = Signal(), go = Signal()
            gos.append(go)
            done.append(onThread {
                do {
                    try member.coordinate(readingItemAt: file) { url in
                        reading.fire()
                        _ = go.wait()
                        try member.coordinate(writingItemAt: url) { _ in }
                    }
                    results.mutate { $0.append("upgraded") }
                } catch let error as CoordinationError {
                    results.mutate { $0.append(caseName(error)) }
                } catch {}
            })
            #expect(reading.wait())
        }
        // Both members read; both upgrade, and both wait for the plain reader, not for each other.
        gos[0].fire()
        #expect(Polling.holds { LockProbe.writerIsWaiting(file) })
        gos[1].fire()
        plainReader.release()
        #expect(done.allSatisfy { $0.wait() })
        #expect(results.value == ["upgraded", "upgraded"])
    }

    // MARK: Bug 4 — coordinators of one presenter

    @Test func coordinatorsMadeWithTheSamePresenterNeverBlockEachOther() throws {
        let scratch = try Scratch()
        let file = scratch.file("presented.txt", contents: "x")
        let presenter = RecordingPresenter(file)
        let writer = Holder.writing(file, coordinator: Coordinator(filePresenter: presenter))
        let second = Coordinator(filePresenter: presenter)
        second.timeout = Polling.hangGuard
        #expect(throws: Never.self) { try second.coordinate(readingItemAt: file) { _ in } }
        #expect(throws: Never.self) { try second.coordinate(writingItemAt: file) { _ in } }
        #expect(readWaits(file), "a coordinator without the presenter still waits")
        #expect(contend(Coordinator(filePresenter: RecordingPresenter(file))) { try $0.coordinate(readingItemAt: file) { _ in } } == .waited,
                "a coordinator of another presenter still waits")
        writer.release()
    }

    // MARK: Bug 9 — a directory delete decides with its lock held

    @Test func aDirectoryMovedIntoPlaceWhileADeleteWaitsIsLockedWhole() throws {
        let scratch = try Scratch()
        let place = scratch.file("later")  // nothing there yet
        // A plain write: a `.forReplacing` holder of the missing place would lock its tree too
        // (nothing there counts as a directory), and the writer inside below would wait for it.
        let placeHolder = Holder.writing(place)
        let deleter = Coordinator()
        let deleted = Box<Bool>(false)
        let deleteDone = onThread {
            try? deleter.coordinate(writingItemAt: place, options: .forDeleting) { _ in deleted.value = true }
        }
        #expect(Polling.holds { LockProbe.writerIsWaiting(place) })
        // While the delete waits, a directory arrives (as a coordinated move would put it there),
        // and someone writes a file inside it.
        let inner = scratch.file("later/inner.txt", contents: "half-written")
        let innerWriter = Holder.writing(inner)
        placeHolder.release()
        #expect(Polling.holds { LockProbe.writerIsWaiting(inner) || deleted.value })
        #expect(!deleted.value, "the delete ran while a writer inside the directory was still writing")
        innerWriter.release()
        #expect(deleteDone.wait())
        #expect(deleted.value)
    }

    @Test func aDirectoryMovedIntoPlaceWhileADeleteWaitsWaitsForAWriterInsideInAnotherProcess() throws {
        let scratch = try Scratch()
        let place = scratch.file("arriving")
        let placeHolder = Holder.writing(place)  // plain: see the test above
        let deleted = Box<Bool>(false)
        let deleteDone = onThread {
            try? Coordinator().coordinate(writingItemAt: place, options: .forDeleting) { _ in deleted.value = true }
        }
        #expect(Polling.holds { LockProbe.writerIsWaiting(place) })
        let inner = scratch.file("arriving/inner.txt", contents: "half-written")
        let innerWriter = try ChildProcess(["hold", "write", inner.path])
        #expect(innerWriter.expect("HELD") == "HELD")
        placeHolder.release()
        #expect(Polling.holds { LockProbe.writerIsWaiting(inner) || deleted.value })
        #expect(!deleted.value, "the delete ran while a writer in another process wrote inside the directory")
        innerWriter.send()
        #expect(innerWriter.expect("RELEASED") == "RELEASED")
        innerWriter.waitForExit()
        #expect(deleteDone.wait())
        #expect(deleted.value)
    }

    /// A folder moved onto a missing place waits for a writer in another process that still holds
    /// a path inside that place (a document saving where its file was before an earlier move).
    @Test func aMoveOntoAMissingFolderWaitsForAWriterInsideItInAnotherProcess() throws {
        let scratch = try Scratch()
        let source = try scratch.directory("source")
        let place = scratch.url.appendingPathComponent("place", isDirectory: true)  // missing
        let inner = scratch.file("place/doc.txt")
        let innerWriter = try ChildProcess(["hold", "write", inner.path])
        #expect(innerWriter.expect("HELD") == "HELD")
        let moved = Box<Bool>(false)
        let moveDone = onThread {
            let mover = Coordinator()
            try? mover.coordinate(writingItemAt: source, options: .forMoving, writingItemAt: place, options: .forReplacing) { from, to in
                moved.value = rename(from.path, to.path) == 0
            }
        }
        // The move holds the place's tree and waits for the writer's lock file inside it.
        #expect(Polling.holds { LockProbe.writerIsWaiting(inner) || moved.value })
        #expect(!moved.value, "the folder landed while a writer in another process held a path inside it")
        innerWriter.send()
        #expect(innerWriter.expect("RELEASED") == "RELEASED")
        innerWriter.waitForExit()
        #expect(moveDone.wait())
        #expect(moved.value)
    }

    // MARK: Bug 7 (issue 15) — a downgrade racing another thread's release of the same holding

    /// Coordinators of one presenter share one lock owner: a read on one thread joins a write on
    /// another without the kernel. When the write ended, its downgrade to a read used to run
    /// unmarked, after the state was updated: the read could end (and unlock everything) in
    /// between, and the late downgrade then left a read lock on a descriptor nobody held — the
    /// soak's endless hang. Afterwards no lock of this process may remain on the item.
    @Test func aWriteEndingWhileAnotherThreadsReadEndsLeavesNoLockBehind() throws {
        let scratch = try Scratch()
        let file = scratch.file("downgrade-race.txt", contents: "x")
        let path = CanonicalPath.of(file, in: CoordinationRuntime.process.paths)
        let directory = try LockDirectory.current()
        let owner = LockOwner(lockTable: CoordinationRuntime.process.lockTable)
        func take(_ access: LockAccess) throws {
            let stepper = LockStepper(context: WaitContext(timeout: nil, token: CancellationToken()), owner: owner)
            try owner.acquire(access, path: path, stepper: stepper) { () throws(CoordinationError) in
                (CoordinationRuntime.process.lockTable.file(for: path, in: directory), directory)
            }
        }
        try take(.write)
        try take(.read)  // another thread's read of the same owner: joins the write
        let inWindow = Signal(), readEnded = Signal()
        owner.downgradeHookForTests.withLock { $0 = { inWindow.fire(); _ = readEnded.wait() } }
        let writeEnded = onThread { owner.release(.write, on: path) }
        #expect(inWindow.wait())
        owner.release(.read, on: path)  // the read ends while the write's downgrade is under way
        readEnded.fire()
        #expect(writeEnded.wait())
        owner.downgradeHookForTests.withLock { $0 = nil }
        #expect(Self.locksHeldByThisProcess(on: file).isEmpty, "a lock was left on a descriptor nobody holds")
        #expect(writeGetsIn(file))
    }

    /// The locks this process holds on `item`'s lock file, as /proc/self/fdinfo lists them.
    private static func locksHeldByThisProcess(on item: URL) -> [String] {
        guard let directory = try? LockDirectory.current() else { return [] }
        let lockFile = LockFileNaming.lockFilePath(for: CanonicalPath.of(item, in: CoordinationRuntime.process.paths), in: directory.path)
        var found: [String] = []
        for descriptor in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fdinfo")) ?? [] {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + descriptor),
                  target == lockFile,
                  let info = try? String(contentsOfFile: "/proc/self/fdinfo/" + descriptor, encoding: .utf8) else { continue }
            found += info.split(separator: "\n").filter { $0.hasPrefix("lock:") }.map(String.init)
        }
        return found
    }

    // MARK: Helpers

    /// Two coordinators read `file`; the first upgrades (and waits for the second's read), then
    /// the second upgrades. Returns each one's outcome.
    private func twoUpgraders(_ file: URL, first: Coordinator, second: Coordinator) throws
        -> (first: String, second: String)
    {
        let outcomes = Box<[String: String]>([:])
        let firstReading = Signal(), secondReading = Signal(), firstGo = Signal(), secondGo = Signal()
        let firstDone = onThread {
            let outcome = Self.outcome {
                try first.coordinate(readingItemAt: file) { url in
                    firstReading.fire()
                    _ = firstGo.wait()
                    try first.coordinate(writingItemAt: url) { _ in }
                }
            }
            outcomes.mutate { $0["first"] = outcome }
        }
        #expect(firstReading.wait())
        let secondDone = onThread {
            let outcome = Self.outcome {
                try second.coordinate(readingItemAt: file) { url in
                    secondReading.fire()
                    _ = secondGo.wait()
                    try second.coordinate(writingItemAt: url) { _ in }
                }
            }
            outcomes.mutate { $0["second"] = outcome }
        }
        #expect(secondReading.wait())
        firstGo.fire()
        // The first upgrader now waits for the second's read (it holds the pending gate).
        #expect(Polling.holds { LockProbe.writerIsWaiting(file) })
        secondGo.fire()
        let finished = secondDone.wait() && firstDone.wait()
        #expect(finished, "the two upgraders deadlocked")
        if !finished { first.cancel(); second.cancel(); _ = secondDone.wait(); _ = firstDone.wait() }
        return (outcomes.value["first"] ?? "?", outcomes.value["second"] ?? "?")
    }

    private static func outcome(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "upgraded"
        } catch let error as CoordinationError {
            return caseName(error)
        } catch {
            return "\(error)"
        }
    }
}
