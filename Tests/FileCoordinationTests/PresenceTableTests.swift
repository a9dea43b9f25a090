import Foundation
import Glibc
import Testing
import TestSupport
@testable import FileCoordination

@Suite("Remote presenters: presence table")
struct PresenceTableTests {
    @Test("a published path concerns itself and what is inside it, and is inside its ancestors; withdrawn, nothing")
    func publishAndWithdraw() throws {
        let scratch = try Scratch()
        let table = try #require(PresenceTable.open(scratch.url.path + "/@presence"))
        #expect(table.candidates(forItemAt: "/a/b/c.txt") == 0)
        let claim = try #require(PresenceTable.SlotClaim.claim(in: table))
        defer { claim.release() }
        claim.add("/a/b/c.txt")
        #expect(table.pid(ofSlot: claim.slot) == getpid())
        #expect(table.candidates(forItemAt: "/a/b/c.txt") == claim.bit)
        #expect(table.candidates(forItemAt: "/a/b/c.txt/inside") == claim.bit)  // presented: a directory above it
        #expect(table.candidates(forItemAt: "/a/b/other.txt") == 0)
        #expect(table.candidates(forItemAt: "/a/b") == 0)
        #expect(table.candidates(inside: "/a/b") == claim.bit)
        #expect(table.candidates(inside: "/a") == claim.bit)
        #expect(table.candidates(inside: "/") == claim.bit)
        #expect(table.candidates(inside: "/a/b/c.txt") == 0)
        #expect(table.candidates(forItemAt: "/a/b/c.txt", excluding: claim.bit) == 0)
        let counter = table.publications(ofSlot: claim.slot)
        claim.add("/a/b/c.txt")  // presented twice: withdrawn once, still there
        #expect(table.publications(ofSlot: claim.slot) == counter &+ 1)  // every addition counts
        claim.remove("/a/b/c.txt")
        #expect(table.candidates(forItemAt: "/a/b/c.txt") == claim.bit)
        #expect(table.publications(ofSlot: claim.slot) == counter &+ 1)  // withdrawing publishes nothing
        claim.remove("/a/b/c.txt")
        #expect(table.candidates(forItemAt: "/a/b/c.txt") == 0)
        #expect(table.candidates(inside: "/a") == 0)
    }

    @Test("with 10,000 paths published elsewhere, few unrelated paths are candidates")
    func falsePositivesStayRare() throws {
        let scratch = try Scratch()
        let table = try #require(PresenceTable.open(scratch.url.path + "/@presence"))
        let claim = try #require(PresenceTable.SlotClaim.claim(in: table))
        defer { claim.release() }
        for index in 0..<10_000 { claim.add("/home/ann/Documents/presented-\(index).txt") }
        var hits = 0
        for index in 0..<10_000 where table.candidates(forItemAt: "/home/ann/Documents/other-\(index).txt") != 0 { hits += 1 }
        print("presence table: \(hits) of 10,000 unrelated paths were candidates")
        #expect(hits < 500)  // expected about 0.4 % per prefix
        for index in 0..<10_000 { #expect(table.candidates(forItemAt: "/home/ann/Documents/presented-\(index).txt") == claim.bit) }
    }

    @Test("another process's slot is seen while it lives; once it is killed, its slot is reaped and its bits are gone")
    func deadProcessesAreReaped() throws {
        let scratch = try Scratch()
        let tablePath = scratch.url.path + "/@presence"
        let table = try #require(PresenceTable.open(tablePath))
        let child = try ChildProcess(["presence-publish", tablePath, "/srv/doc.txt"])
        let line = try #require(child.expect("PUBLISHED"))
        let slot = try #require(Int(line.dropFirst("PUBLISHED ".count)))
        let bit: UInt64 = 1 << UInt64(slot)
        #expect(table.candidates(forItemAt: "/srv/doc.txt") == bit)
        #expect(table.pid(ofSlot: slot) == child.process.processIdentifier)
        #expect(!table.reapIfDead(slot))  // alive: not touched
        #expect(table.candidates(forItemAt: "/srv/doc.txt") == bit)

        child.kill9()
        #expect(table.candidates(forItemAt: "/srv/doc.txt") == bit)  // stale until reaped
        #expect(table.reapIfDead(slot))
        #expect(table.candidates(forItemAt: "/srv/doc.txt") == 0)
        #expect(table.pid(ofSlot: slot) == 0)
    }

    @Test("a process that releases its slot withdraws everything")
    func releaseWithdraws() throws {
        let scratch = try Scratch()
        let tablePath = scratch.url.path + "/@presence"
        let table = try #require(PresenceTable.open(tablePath))
        let child = try ChildProcess(["presence-publish", tablePath, "/srv/a.txt", "/srv/b/c.txt"])
        _ = try #require(child.expect("PUBLISHED"))
        #expect(table.candidates(forItemAt: "/srv/b/c.txt") != 0)
        child.closeInput()
        #expect(child.expect("RELEASED") == "RELEASED")
        child.waitForExit()
        #expect(table.candidates(forItemAt: "/srv/a.txt") == 0)
        #expect(table.candidates(inside: "/srv") == 0)
    }
}
