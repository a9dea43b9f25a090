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
        #expect(readIsBlocked(file))
        #expect(writeIsBlocked(file))
        child.send()
        #expect(child.expect("RELEASED") == "RELEASED")
        child.waitForExit()
        #expect(!readIsBlocked(file))
    }

    @Test func readersInTwoProcessesShareButExcludeWriters() throws {
        let scratch = try Scratch()
        let file = scratch.file("r.txt", contents: "x")
        let child = try ChildProcess(["hold", "read", file.path])
        #expect(child.expect("HELD") == "HELD")
        #expect(!readIsBlocked(file))
        #expect(writeIsBlocked(file))
        child.send()
        child.waitForExit()
    }

    @Test func ourWriterBlocksAnotherProcess() throws {
        let scratch = try Scratch()
        let file = scratch.file("ours.txt", contents: "x")
        let writer = Holder.writing(file)
        let child = try ChildProcess(["try", "read", file.path, "150"])
        #expect(child.expect("ERROR")?.contains("timed out") == true)
        writer.release()
        let again = try ChildProcess(["try", "read", file.path, "5000"])
        #expect(again.expect("OK")?.hasPrefix("OK") == true)
    }

    @Test func aDirectoryDeleteInAnotherProcessExcludesItsContents() throws {
        let scratch = try Scratch()
        let directory = try scratch.directory("tree")
        let inner = scratch.file("tree/inner.txt", contents: "x")
        try Coordinator().coordinate(readingItemAt: inner) { _ in }  // its lock file exists
        let child = try ChildProcess(["hold", "delete", directory.path])
        #expect(child.expect("HELD") == "HELD")
        #expect(readIsBlocked(inner))
        #expect(readIsBlocked(scratch.file("tree/brand-new.txt")))
        #expect(!readIsBlocked(scratch.file("outside.txt")))
        child.send()
        child.waitForExit()
        #expect(!readIsBlocked(inner))
    }

    @Test func ourReaderInsideADirectoryHoldsOffADeleteInAnotherProcess() throws {
        let scratch = try Scratch()
        let directory = try scratch.directory("held")
        let inner = scratch.file("held/deep/inner.txt", contents: "x")
        let reader = Holder.reading(inner)
        let child = try ChildProcess(["try", "delete", directory.path, "150"])
        #expect(child.expect("ERROR")?.contains("timed out") == true)
        reader.release()
    }

    @Test func thePackageRuleHoldsAcrossProcesses() throws {
        Coordinator.registerPackageExtension("cdxpkg")
        let scratch = try Scratch()
        let first = scratch.file("Doc.cdxpkg/a.txt", contents: "a")
        let second = scratch.file("Doc.cdxpkg/sub/b.txt", contents: "b")
        let child = try ChildProcess(["package-ext", "cdxpkg", "hold", "write", first.path])
        #expect(child.expect("HELD") == "HELD")
        #expect(readIsBlocked(second))
        child.send()
        child.waitForExit()
        #expect(!readIsBlocked(second))
    }

    @Test func killingAHolderWithSIGKILLReleasesItsLocks() throws {
        let scratch = try Scratch()
        let file = scratch.file("killed.txt", contents: "x")
        let child = try ChildProcess(["hold", "write", file.path])
        #expect(child.expect("HELD") == "HELD")
        #expect(writeIsBlocked(file))
        child.kill9()
        #expect(!fails(with: "timedOut") { try impatient(10_000).coordinate(writingItemAt: file) { _ in } })
    }

    @Test func samePurposeAcrossProcessesNeverBlocks() throws {
        let scratch = try Scratch()
        let file = scratch.file("purpose.txt", contents: "x")
        let child = try ChildProcess(["hold", "write", file.path, "com.example.sync"])
        #expect(child.expect("HELD") == "HELD")
        #expect(!fails(with: "timedOut") {
            try impatient(5_000, purpose: "com.example.sync").coordinate(writingItemAt: file) { _ in }
        })
        #expect(fails(with: "timedOut") {
            try impatient(150, purpose: "com.example.other").coordinate(writingItemAt: file) { _ in }
        })
        #expect(writeIsBlocked(file))
        child.send()
        child.waitForExit()
    }

    @Test func aWriterGetsInWithin100msWhileTwoProcessesLoopOnReads() throws {
        let scratch = try Scratch()
        let file = scratch.file("busy.txt", contents: String(repeating: "r", count: 4096))
        let readers = try (0..<2).map { _ in try ChildProcess(["loop-read", file.path]) }
        for reader in readers { #expect(reader.expect("LOOPING") == "LOOPING") }
        for _ in 0..<10 {
            let writer = impatient(100)
            #expect(!fails(with: "timedOut") {
                try writer.coordinate(writingItemAt: file) { url in
                    try String(repeating: "w", count: 4096).write(to: url, atomically: false, encoding: .utf8)
                }
            })
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
