import Foundation
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
}
