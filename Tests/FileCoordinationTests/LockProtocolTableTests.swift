import Foundation
import Testing
@testable import FileCoordination

/// Every transition of the lock protocol (`LockProtocol`; the table in Docs/Coordination.md),
/// in plain and in group mode, run in this process and checked against contenders in another
/// process: after each transition, which of them get in at once and which must wait.
@Suite("Lock protocol transitions against another process")
struct LockProtocolTableTests {
    /// Who tries the item from the other process.
    enum Contender: String, CaseIterable, Sendable {
        case plainRead, plainWrite, groupRead, groupWrite, otherGroupRead, otherGroupWrite

        static let group = "com.example.table.p"
        static let otherGroup = "com.example.table.q"

        /// The `contend` line: with `probe`, the contender reports WAITED once it is seen waiting
        /// for a lock (and gives up), GOT if it gets in; with `wait`, it waits as long as it must.
        func line(for url: URL, _ mode: String) -> String {
            let access = rawValue.hasSuffix("Read") ? "read" : "write"
            let purpose: String
            switch self {
            case .plainRead, .plainWrite: purpose = ""
            case .groupRead, .groupWrite: purpose = " " + Self.group
            case .otherGroupRead, .otherGroupWrite: purpose = " " + Self.otherGroup
            }
            return "\(access) \(url.path) \(mode)\(purpose)"
        }
    }

    /// What the holder in this process does; `hold` returns once the transition has happened,
    /// with a function that ends the access.
    struct Transition: Sendable, CustomTestStringConvertible {
        let name: String
        /// Group mode (purpose `Contender.group`) or plain.
        let group: Bool
        let hold: @Sendable (Coordinator, URL) -> (@Sendable () -> Void)
        /// The contenders that must wait after the transition; every other one gets in at once.
        let blocked: Set<Contender>
        var testDescription: String { name + (group ? ", group mode" : ", plain mode") }
    }

    static let readState: Set<Contender> = [.plainWrite, .groupWrite, .otherGroupWrite]
    static let writeState = Set(Contender.allCases)
    static let groupReadState: Set<Contender> = [.plainWrite, .otherGroupWrite]
    static let groupWriteState: Set<Contender> = [.plainRead, .plainWrite, .otherGroupRead, .otherGroupWrite]

    static let transitions: [Transition] = [
        Transition(name: "fresh read", group: false, hold: freshRead, blocked: readState),
        Transition(name: "fresh write", group: false, hold: freshWrite, blocked: writeState),
        Transition(name: "upgrade read → write", group: false, hold: upgrade, blocked: writeState),
        Transition(name: "downgrade: write ends under a read that joined it", group: false, hold: downgradeJoined, blocked: readState),
        Transition(name: "downgrade: nested write ends inside the read", group: false, hold: downgradeNested, blocked: readState),
        Transition(name: "release", group: false, hold: released, blocked: []),
        Transition(name: "fresh read", group: true, hold: freshRead, blocked: groupReadState),
        Transition(name: "fresh write", group: true, hold: freshWrite, blocked: groupWriteState),
        Transition(name: "upgrade read → write", group: true, hold: upgrade, blocked: groupWriteState),
        Transition(name: "downgrade: write ends under a read that joined it", group: true, hold: downgradeJoined, blocked: groupReadState),
        Transition(name: "downgrade: nested write ends inside the read", group: true, hold: downgradeNested, blocked: groupReadState),
        Transition(name: "release", group: true, hold: released, blocked: []),
    ]

    @Test(arguments: transitions)
    func transition(_ transition: Transition) throws {
        let scratch = try Scratch()
        let file = scratch.file("item.txt", contents: "x")
        let holder = Coordinator()
        if transition.group { holder.purposeIdentifier = Contender.group }
        let contender = try ChildProcess(["contend"])
        defer { contender.send("quit"); contender.waitForExit() }
        let end = transition.hold(holder, file)
        for candidate in Contender.allCases {
            let expected = transition.blocked.contains(candidate) ? "WAITED" : "GOT"
            contender.send(candidate.line(for: file, "probe"))
            #expect(contender.readLine() == expected, "\(candidate)")
        }
        end()
        for candidate in Contender.allCases {
            contender.send(candidate.line(for: file, "wait"))
            #expect(contender.readLine() == "GOT", "\(candidate) after the holder ended")
        }
    }

    // MARK: Tree locks

    @Test(arguments: [false, true])
    func treeLockOfADirectoryDelete(group: Bool) throws {
        let scratch = try Scratch()
        let directory = try scratch.directory("tree")
        let inner = scratch.file("tree/inner.txt", contents: "x")
        let outside = scratch.file("outside.txt", contents: "x")
        try Coordinator().coordinate(readingItemAt: inner) { _ in }  // its lock file exists
        let holder = Coordinator()
        if group { holder.purposeIdentifier = Contender.group }
        let contender = try ChildProcess(["contend"])
        defer { contender.send("quit"); contender.waitForExit() }
        let deleter = Holder.writing(directory, options: .forDeleting, coordinator: holder)
        let newInside = scratch.file("tree/never-seen-before.txt")
        for (target, expected) in [(inner, "WAITED"), (newInside, "WAITED"), (directory, "WAITED"), (outside, "GOT")] {
            contender.send(Contender.plainRead.line(for: target, "probe"))
            #expect(contender.readLine() == expected, "\(target.lastPathComponent)")
        }
        deleter.release()
        for target in [inner, newInside, directory] {
            contender.send(Contender.plainWrite.line(for: target, "wait"))
            #expect(contender.readLine() == "GOT", "\(target.lastPathComponent) after the tree lock ended")
        }
    }

    // MARK: Upgrades against another process

    @Test func anUpgraderInAnotherProcessAndOneHereOneFailsAtOnce() throws {
        let scratch = try Scratch()
        let file = scratch.file("upgrade.txt", contents: "x")
        let other = try ChildProcess(["upgrade", file.path])
        #expect(other.expect("READING") == "READING")
        let here = Coordinator()  // no timeout
        let outcome = Box<String>("")
        let reading = Signal(), go = Signal()
        let done = onThread {
            do {
                try here.coordinate(readingItemAt: file) { url in
                    reading.fire()
                    _ = go.wait()
                    try here.coordinate(writingItemAt: url) { _ in }
                }
                outcome.value = "upgraded"
            } catch let error as CoordinationError {
                outcome.value = caseName(error)
            } catch {}
        }
        #expect(reading.wait())
        other.send()  // the other process upgrades first and waits for our read
        #expect(Polling.holds { LockProbe.writerIsWaiting(file) })
        go.fire()
        #expect(done.wait())
        #expect(outcome.value == "wouldDeadlock")
        #expect(other.expect("UPGRADED") == "UPGRADED")
        other.send()
        #expect(other.expect("RELEASED") == "RELEASED")
        other.waitForExit()
    }

    // MARK: The holders

    private static func holder(_ coordinator: Coordinator, _ body: @escaping @Sendable (Coordinator, @escaping @Sendable () -> Void) throws -> Void) -> @Sendable () -> Void {
        let holder = Holder(coordinator, body)
        return { holder.release() }
    }

    static func freshRead(_ c: Coordinator, _ url: URL) -> @Sendable () -> Void {
        holder(c) { c, inside in try c.coordinate(readingItemAt: url) { _ in inside() } }
    }

    static func freshWrite(_ c: Coordinator, _ url: URL) -> @Sendable () -> Void {
        holder(c) { c, inside in try c.coordinate(writingItemAt: url) { _ in inside() } }
    }

    static func upgrade(_ c: Coordinator, _ url: URL) -> @Sendable () -> Void {
        holder(c) { c, inside in
            try c.coordinate(readingItemAt: url) { url in try c.coordinate(writingItemAt: url) { _ in inside() } }
        }
    }

    static func downgradeNested(_ c: Coordinator, _ url: URL) -> @Sendable () -> Void {
        holder(c) { c, inside in
            try c.coordinate(readingItemAt: url) { url in
                try c.coordinate(writingItemAt: url) { _ in }
                inside()
            }
        }
    }

    /// A write on one thread; the same coordinator's read joins it on another; the write ends.
    static func downgradeJoined(_ c: Coordinator, _ url: URL) -> @Sendable () -> Void {
        let writeHeld = Signal(), readHeld = Signal()
        let writeEnded = onThread {
            try? c.coordinate(writingItemAt: url) { _ in
                writeHeld.fire()
                _ = readHeld.wait()
            }
        }
        _ = writeHeld.wait()
        let end = holder(c) { c, inside in
            try c.coordinate(readingItemAt: url) { _ in
                readHeld.fire()
                inside()
            }
        }
        _ = writeEnded.wait()
        return end
    }

    static func released(_ c: Coordinator, _ url: URL) -> @Sendable () -> Void {
        freshWrite(c, url)()
        return {}
    }
}

/// Many holders at once: threads here and three other processes read, write and upgrade one
/// counter file, in plain and group mode, with no timeout. Nothing may hang, no increment may
/// be lost, and the only error allowed is `.wouldDeadlock` for the second of two upgraders.
@Suite("Lock protocol under contention")
struct LockProtocolContentionTests {
    @Test func readsWritesAndUpgradesHereAndInThreeProcessesLoseNothingAndNeverHang() throws {
        let scratch = try Scratch()
        let counter = scratch.file("counter.txt", contents: "0")
        let children = try (0..<3).map { index in try ChildProcess(["mix", counter.path, "150", "\(index + 10)"]) }
        let local = Box<[(Int, Int, String?)]>([])
        let threads = (0..<3).map { index in
            onThread {
                let result = mixedAccesses(counter, times: 150, seed: index)
                local.mutate { $0.append(result) }
            }
        }
        #expect(threads.allSatisfy { $0.wait(seconds: 120) }, "a thread here hung")
        var increments = local.value.reduce(0) { $0 + $1.0 }
        for result in local.value { #expect(result.2 == nil) }
        for child in children {
            let line = child.expect("DONE") ?? "no answer"
            #expect(line.hasPrefix("DONE"), "\(line)")
            increments += Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
            child.waitForExit()
        }
        let value = try Coordinator().coordinate(readingItemAt: counter) { try String(contentsOf: $0, encoding: .utf8) }
        #expect(Int(value) == increments)
    }
}

