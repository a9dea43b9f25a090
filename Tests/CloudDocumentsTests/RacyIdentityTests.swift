import Foundation
import Glibc
import SystemSupport
import Testing
@testable import CloudDocuments

/// `RacyIdentity.stillHolds`: the byte check a save makes when the file's identity looks unchanged
/// but was recorded within a clock tick of its change time.
@Suite("The racy-identity byte check")
struct RacyIdentityTests {
    @Test func nothingKeptAlwaysHolds() throws {
        try Scratch.with { folder in
            #expect(RacyIdentity.stillHolds(nil, at: folder.appendingPathComponent("missing.txt")))
        }
    }

    @Test func theSameBytesHoldAndAnyDifferenceDoesNot() throws {
        try Scratch.with { folder in
            let url = folder.appendingPathComponent("note.txt")
            try Data("hello".utf8).write(to: url)
            #expect(RacyIdentity.stillHolds(Data("hello".utf8), at: url))
            #expect(!RacyIdentity.stillHolds(Data("hellO".utf8), at: url), "same length, other bytes")
            #expect(!RacyIdentity.stillHolds(Data("hell".utf8), at: url), "the file is longer than what was kept")
            #expect(!RacyIdentity.stillHolds(Data("hello!".utf8), at: url), "the file is shorter than what was kept")
            try Data().write(to: url)
            #expect(RacyIdentity.stillHolds(Data(), at: url))
            #expect(!RacyIdentity.stillHolds(Data("x".utf8), at: url))
        }
    }

    @Test func aFileThatCannotBeReadCountsAsChanged() throws {
        try Scratch.with { folder in
            #expect(!RacyIdentity.stillHolds(Data("x".utf8), at: folder.appendingPathComponent("missing.txt")))
            #expect(!RacyIdentity.stillHolds(Data("x".utf8), at: folder), "a folder")
        }
    }

    @Test func aLargeKeptCopyIsComparedWhole() throws {
        try Scratch.with { folder in
            let url = folder.appendingPathComponent("big.bin")
            var bytes = Data((0..<(RacyIdentity.byteLimit)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            try bytes.write(to: url)
            #expect(RacyIdentity.stillHolds(bytes, at: url))
            bytes[bytes.count - 1] ^= 0xFF
            #expect(!RacyIdentity.stillHolds(bytes, at: url), "the last byte differs")
        }
    }

    @Test("look: the identity is the file's (links followed), taken from the descriptor its bytes are read through")
    func lookGivesTheFilesIdentity() throws {
        try Scratch.with { folder in
            let url = folder.appendingPathComponent("note.txt")
            try Data("hello".utf8).write(to: url)
            let link = folder.appendingPathComponent("link.txt")
            #expect(symlink(url.path, link.path) == 0)
            for path in [url.path, link.path] {
                let withBytes = RacyIdentity.look(at: path, kept: Data("hello".utf8))
                #expect(withBytes.identity == FileIdentity.of(url.path, followingLinks: true))
                #expect(withBytes.holds)
                let withoutBytes = RacyIdentity.look(at: path, kept: nil)
                #expect(withoutBytes.identity == FileIdentity.of(url.path, followingLinks: true))
                #expect(withoutBytes.holds)
            }
            let missing = RacyIdentity.look(at: folder.appendingPathComponent("missing.txt").path, kept: Data("x".utf8))
            #expect(missing.identity == nil)
            #expect(!missing.holds)
        }
    }

    @Test("look: a FIFO or a folder at the path has an identity but holds nothing, and is not read")
    func lookAtWhatIsNotAFile() throws {
        try Scratch.with { folder in
            let fifo = folder.appendingPathComponent("fifo")
            #expect(mkfifo(fifo.path, 0o644) == 0)
            let atFIFO = RacyIdentity.look(at: fifo.path, kept: Data())
            #expect(atFIFO.identity != nil)
            #expect(!atFIFO.holds, "opened without blocking, never read")
            let atFolder = RacyIdentity.look(at: folder.path, kept: Data())
            #expect(atFolder.identity != nil)
            #expect(!atFolder.holds)
        }
    }

    @Test("look: an empty file holds empty kept bytes, and differs from any")
    func lookAtAnEmptyFile() throws {
        try Scratch.with { folder in
            let url = folder.appendingPathComponent("empty.txt")
            try Data().write(to: url)
            #expect(RacyIdentity.look(at: url.path, kept: Data()).holds)
            #expect(!RacyIdentity.look(at: url.path, kept: Data("a".utf8)).holds)
        }
    }
}
