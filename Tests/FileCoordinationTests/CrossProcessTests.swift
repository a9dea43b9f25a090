import Foundation
import Glibc
import Testing
@testable import FileCoordination

/// Real separate processes (`CoordinationTestHelper`), sequenced through pipes.
@Suite("Across processes")
struct CrossProcessTests {
    @Test func aWriterInAnotherProcessExcludesOurReaderUntilItLeaves() throws {
        let scratch = try Scratch()
        let file = scratch.file("x.txt", contents: "x")
        let child = try ChildProcess(["hold", "write", file.path])
        #expect(child.expect("HELD") == "HELD")
        #expect(readWaits(file))
        #expect(writeWaits(file))
        child.send()
        #expect(child.expect("RELEASED") == "RELEASED")
        child.waitForExit()
        #expect(readGetsIn(file))
    }

    @Test func readersInTwoProcessesShareButExcludeWriters() throws {
        let scratch = try Scratch()
        let file = scratch.file("r.txt", contents: "x")
        let child = try ChildProcess(["hold", "read", file.path])
        #expect(child.expect("HELD") == "HELD")
        #expect(readGetsIn(file))
        #expect(writeWaits(file))
        child.send()
        child.waitForExit()
    }

    @Test func ourWriterBlocksAnotherProcess() throws {
        let scratch = try Scratch()
        let file = scratch.file("ours.txt", contents: "x")
        let writer = Holder.writing(file)
        let child = try ChildProcess(["try", "read", file.path, "probe"])
        #expect(child.readLine() == "WAITED")
        child.waitForExit()
        writer.release()
        let again = try ChildProcess(["try", "read", file.path, "wait"])
        #expect(again.readLine() == "OK")
        again.waitForExit()
    }

    @Test func aDirectoryDeleteInAnotherProcessExcludesItsContents() throws {
        let scratch = try Scratch()
        let directory = try scratch.directory("tree")
        let inner = scratch.file("tree/inner.txt", contents: "x")
        try Coordinator().coordinate(readingItemAt: inner) { _ in }  // its lock file exists
        let child = try ChildProcess(["hold", "delete", directory.path])
        #expect(child.expect("HELD") == "HELD")
        #expect(readWaits(inner))
        #expect(readWaits(scratch.file("tree/brand-new.txt")))
        #expect(readGetsIn(scratch.file("outside.txt")))
        child.send()
        child.waitForExit()
        #expect(readGetsIn(inner))
    }

    @Test func ourReaderInsideADirectoryHoldsOffADeleteInAnotherProcess() throws {
        let scratch = try Scratch()
        let directory = try scratch.directory("held")
        let inner = scratch.file("held/deep/inner.txt", contents: "x")
        let reader = Holder.reading(inner)
        let child = try ChildProcess(["try", "delete", directory.path, "probe"])
        #expect(child.readLine() == "WAITED")
        child.waitForExit()
        reader.release()
    }

    @Test func thePackageRuleHoldsAcrossProcesses() throws {
        Coordinator.registerPackageExtension("cdxpkg")
        let scratch = try Scratch()
        let first = scratch.file("Doc.cdxpkg/a.txt", contents: "a")
        let second = scratch.file("Doc.cdxpkg/sub/b.txt", contents: "b")
        let child = try ChildProcess(["package-ext", "cdxpkg", "hold", "write", first.path])
        #expect(child.expect("HELD") == "HELD")
        #expect(readWaits(second))
        child.send()
        child.waitForExit()
        #expect(readGetsIn(second))
    }

    @Test func killingAHolderWithSIGKILLReleasesItsLocks() throws {
        let scratch = try Scratch()
        let file = scratch.file("killed.txt", contents: "x")
        let child = try ChildProcess(["hold", "write", file.path])
        #expect(child.expect("HELD") == "HELD")
        #expect(writeWaits(file))
        child.kill9()
        #expect(writeGetsIn(file))
    }

    @Test func samePurposeAcrossProcessesNeverBlocks() throws {
        let scratch = try Scratch()
        let file = scratch.file("purpose.txt", contents: "x")
        let child = try ChildProcess(["hold", "write", file.path, "com.example.sync"])
        #expect(child.expect("HELD") == "HELD")
        #expect(writeGetsIn(file, purpose: "com.example.sync"))
        #expect(writeWaits(file, purpose: "com.example.other"))
        #expect(writeWaits(file))
        child.send()
        child.waitForExit()
    }

    /// Readers looping in other processes never starve a writer: once the writer is queued (it
    /// holds the pending gate), each reader finishes at most the read it was in, and the writer
    /// goes next. Checked by the readers' counts, not by how long the writer waited.
    @Test func aWriterGoesNextWhileTwoProcessesLoopOnReads() throws {
        let scratch = try Scratch()
        let file = scratch.file("busy.txt", contents: String(repeating: "r", count: 4096))
        let counts = (0..<2).map { scratch.file("reads-\($0)") }
        let readers = try counts.map { try ChildProcess(["loop-read", file.path, $0.path]) }
        for reader in readers { #expect(reader.expect("LOOPING") == "LOOPING") }
        @Sendable func reads() -> [Int] { counts.map { Int((try? String(contentsOf: $0, encoding: .utf8)) ?? "") ?? 0 } }
        for round in 0..<10 {
            let during = Box<[Int]?>(nil)
            let written = onThread {
                try? patient().coordinate(writingItemAt: file) { url in
                    during.value = reads()
                    try String(repeating: "w", count: 4096).write(to: url, atomically: false, encoding: .utf8)
                }
            }
            // Queued (or already in, when it found no reader inside).
            try Polling.blockUntil("the writer of round \(round) to queue") {
                LockProbe.writerIsWaiting(file) || during.value != nil
            }
            let queued = reads()
            #expect(written.wait())
            let inside = try #require(during.value, "round \(round): the write never ran")
            for (reader, (before, then)) in zip(queued, inside).enumerated() {
                #expect(then - before <= 1, "round \(round): reader \(reader) read \(then - before) times while the writer was queued")
            }
        }
        for reader in readers {
            reader.closeInput()
            #expect(reader.expect("STOPPED") == "STOPPED")
            reader.waitForExit()
        }
    }

    @Test func fourProcessesIncrementACounter2000TimesWithoutLosingOne() throws {
        let scratch = try Scratch()
        let counter = scratch.file("counter.txt", contents: "0")
        let children = try (0..<4).map { _ in try ChildProcess(["increment", counter.path, "500"]) }
        for child in children {
            #expect(child.expect("DONE") == "DONE")
            child.waitForExit()
        }
        let value = try Coordinator().coordinate(readingItemAt: counter) { try String(contentsOf: $0, encoding: .utf8) }
        #expect(value == "2000")
    }
}
