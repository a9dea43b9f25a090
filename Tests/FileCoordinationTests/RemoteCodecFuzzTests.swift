import Foundation
import Testing
@testable import FileCoordination

/// Feeds the decoder random bytes and mutations of valid frames for a bounded time. Every input
/// must be refused with `RemoteCodecError` or decode to a frame that encodes and decodes to
/// itself; nothing may trap. The duration is `REMOTE_FUZZ_SECONDS` (2 s by default, so the suite
/// stays quick; the long runs are reported in Docs/RemotePresenters.md), the seed
/// `REMOTE_FUZZ_SEED` (random by default, printed so a failure can be replayed).
@Suite("Remote presenters: decoder fuzzing")
struct RemoteCodecFuzzTests {
    @Test func randomAndMutatedFramesNeverTrap() throws {
        let environment = ProcessInfo.processInfo.environment
        let seconds = environment["REMOTE_FUZZ_SECONDS"].flatMap(Double.init) ?? 2
        let seed = environment["REMOTE_FUZZ_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        var random = SplitMix64(seed: seed)
        let seeds = try Self.validFrames().map { try RemoteMessageCodec.encode($0) }
        var inputs = 0, accepted = 0
        let clock = ContinuousClock()
        let end = clock.now + .milliseconds(Int(seconds * 1000))
        while clock.now < end {
            for _ in 0..<256 {
                let input = Self.input(from: seeds, using: &random)
                inputs += 1
                guard let frame = Self.decoded(input) else { continue }  // refused: what a malformed frame must get
                accepted += 1
                let again = (try? RemoteMessageCodec.encode(frame)).flatMap(Self.decoded)
                #expect(again == frame, "seed \(seed): \(input) \(Self.urls(frame)) \(again.map(Self.urls) ?? [])")
            }
        }
        print("remote codec fuzz: seed \(seed), \(seconds) s, \(inputs) inputs, \(accepted) decoded")
        #expect(inputs > 0)
    }

    /// The URLs a frame carries, spelled out (for failure messages: URLs that print alike may differ).
    static func urls(_ frame: RemoteFrame) -> [String] {
        guard case .request(let request) = frame else { return [] }
        let urls: [URL]
        switch request.message {
        case .accommodateSubitemDeletion(let url), .itemDidMove(let url), .subitemDidAppear(let url), .subitemDidChange(let url):
            urls = [url]
        case .subitemDidMove(let from, let to): urls = [from, to]
        case .versionDidGain(let version), .versionDidLose(let version), .versionDidResolveConflict(let version):
            urls = [version.itemURL, version.url]
        default: urls = []
        }
        return urls.map { "\($0.absoluteString) dir=\($0.hasDirectoryPath)" }
    }

    /// The decoded frame, or nil when the decoder refused it (with a `RemoteCodecError`, the only
    /// error it throws).
    static func decoded(_ bytes: [UInt8]) -> RemoteFrame? {
        let result = Result { () throws(RemoteCodecError) -> RemoteFrame in try RemoteMessageCodec.decode(frame: bytes) }
        return try? result.get()
    }

    /// One input: random bytes (a quarter of the time), else a valid frame mutated 1–8 times.
    static func input(from seeds: [[UInt8]], using random: inout SplitMix64) -> [UInt8] {
        if random.next() % 4 == 0 {
            var bytes = (0..<Int(random.next() % 300)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if bytes.count >= 4, random.next() % 2 == 0 {
                // A consistent length, so the body is what gets exercised.
                let length = UInt32(bytes.count - 4)
                bytes[0] = UInt8(length & 0xFF); bytes[1] = UInt8(length >> 8); bytes[2] = 0; bytes[3] = 0
                if bytes.count > 5 { bytes[4] = 1; bytes[5] = UInt8(1 + random.next() % 4) }
            }
            return bytes
        }
        var bytes = seeds[Int(random.next() % UInt64(seeds.count))]
        for _ in 0..<(1 + random.next() % 8) {
            guard !bytes.isEmpty else { break }
            let at = Int(random.next() % UInt64(bytes.count))
            switch random.next() % 7 {
            case 0: bytes[at] ^= UInt8(1 << (random.next() % 8))
            case 1: bytes[at] = UInt8(truncatingIfNeeded: random.next())
            case 2: bytes.removeSubrange(at..<min(bytes.count, at + Int(random.next() % 16)))
            case 3: bytes.insert(contentsOf: (0..<Int(random.next() % 16)).map { _ in UInt8(truncatingIfNeeded: random.next()) }, at: at)
            case 4: bytes[at] = [0x00, 0xFF, 0x7F, 0x80, 0x2F, 0x01][Int(random.next() % 6)]
            case 5:
                // Splice in part of another valid frame.
                let other = seeds[Int(random.next() % UInt64(seeds.count))]
                let from = Int(random.next() % UInt64(other.count))
                bytes.replaceSubrange(at..<min(bytes.count, at + 8), with: other[from..<min(other.count, from + 8)])
            default: break
            }
            // Keep the length consistent half of the time, so mutations reach the fields.
            if bytes.count >= 4, random.next() % 2 == 0 {
                let length = UInt32(bytes.count - 4)
                for index in 0..<4 { bytes[index] = UInt8(truncatingIfNeeded: length >> (8 * UInt32(index))) }
            }
        }
        return bytes
    }

    static func validFrames() throws -> [RemoteFrame] {
        var frames = RemoteMessageCodecTests.everyMessage.enumerated().map { index, message in
            RemoteFrame.request(RemoteRequest(
                id: UInt64(index), presenterNumber: 77, presentedPath: "/home/ann/notes.txt", message: message))
        }
        frames += [
            .answer(RemoteAnswer(id: 1, outcome: .relinquished(reacquirer: 4))),
            .answer(RemoteAnswer(id: 1, outcome: .completed(RemoteErrorDescription(domain: "d", code: -1, message: "m")))),
            .answer(RemoteAnswer(id: 1, outcome: .gone)),
            .lookup(RemoteLookup(id: 5, path: "/a/b", scope: .all)),
            .lookupAnswer(RemoteLookupAnswer(id: 5, entries: [.init(presenterNumber: 1, path: "/a"), .init(presenterNumber: 2, path: "/a/b")])),
        ]
        return frames
    }
}

