import Foundation
import SystemSupport
import Testing
@testable import FileCoordination

@Suite("Remote presenters: wire codec")
struct RemoteMessageCodecTests {
    static let fileURL = URL(fileURLWithPath: "/home/ann/notes.txt", isDirectory: false)
    static let folderURL = URL(fileURLWithPath: "/home/ann/Folder", isDirectory: true)
    static let version = FileVersionReference(itemURL: fileURL, url: URL(fileURLWithPath: "/v/1", isDirectory: false),
                                              persistentIdentifier: "v-1 é", isConflict: true)

    static let everyMessage: [PresenterMessage] = [
        .relinquishToReader, .relinquishToWriter, .reacquire(ReacquirerID(value: .max)), .saveChanges,
        .accommodateDeletion, .accommodateSubitemDeletion(at: fileURL), .itemDidChange, .itemDidMove(to: folderURL),
        .subitemDidAppear(at: fileURL), .subitemDidChange(at: folderURL), .subitemDidMove(from: fileURL, to: folderURL),
        .versionDidGain(version), .versionDidLose(version), .versionDidResolveConflict(version),
    ]

    private func roundTrip(_ frame: RemoteFrame) throws -> RemoteFrame {
        try RemoteMessageCodec.decode(frame: RemoteMessageCodec.encode(frame))
    }

    @Test("every presenter message survives the round trip", arguments: everyMessage.indices)
    func everyMessageRoundTrips(index: Int) throws {
        let message = Self.everyMessage[index]
        let frame = RemoteFrame.request(RemoteRequest(id: 42, presenterNumber: 0xDEAD_BEEF, presentedPath: "/home/ann/notes.txt",
                                                      message: message))
        #expect(try roundTrip(frame) == frame)
    }

    @Test("every answer survives the round trip")
    func answersRoundTrip() throws {
        let outcomes: [RemoteAnswer.Outcome] = [
            .relinquished(reacquirer: nil), .relinquished(reacquirer: 9), .completed(nil),
            .completed(RemoteErrorDescription(domain: "NSCocoaErrorDomain", code: -4, message: "disk full ✓")), .gone,
        ]
        for outcome in outcomes {
            let frame = RemoteFrame.answer(RemoteAnswer(id: 3, outcome: outcome))
            #expect(try roundTrip(frame) == frame)
        }
    }

    @Test("lookups and their answers survive the round trip")
    func lookupsRoundTrip() throws {
        let lookup = RemoteFrame.lookup(RemoteLookup(id: 1, path: "/a/b", scope: [.item, .inside]))
        #expect(try roundTrip(lookup) == lookup)
        let answer = RemoteFrame.lookupAnswer(RemoteLookupAnswer(id: 1, entries: [.init(presenterNumber: 5, path: "/a/b"),
                                                                                  .init(presenterNumber: 6, path: "/a")]))
        #expect(try roundTrip(answer) == answer)
        let empty = RemoteFrame.lookupAnswer(RemoteLookupAnswer(id: 2, entries: []))
        #expect(try roundTrip(empty) == empty)
    }

    @Test("a path that is not UTF-8 keeps its bytes, in paths and in URLs")
    func nonUTF8PathsKeepTheirBytes() throws {
        let path = PathBytes.string(fromBytes: Array("/d/caf".utf8) + [0xFF] + Array(".txt".utf8))
        let url = PathBytes.fileURL(path)
        let frame = RemoteFrame.request(RemoteRequest(id: 1, presenterNumber: 2, presentedPath: path,
                                                      message: .itemDidMove(to: url)))
        guard case .request(let decoded) = try roundTrip(frame), case .itemDidMove(let decodedURL) = decoded.message else {
            Issue.record("not a request"); return
        }
        #expect(decoded.presentedPath == path)
        #expect(PathBytes.bytes(of: PathBytes.path(of: decodedURL)) == PathBytes.bytes(of: path))
    }

    @Test("a URL ending in . or .. decodes to one that encodes and decodes to itself (found by the fuzz test)",
          arguments: ["/v/1/.", "/v/..", "/.", "/..", "/v/1/./"])
    func dotEndingURLsAreStable(path: String) throws {
        for isDirectory in [false, true] {
            let frame = RemoteFrame.request(RemoteRequest(id: 1, presenterNumber: 1, presentedPath: "/a",
                                                          message: .itemDidMove(to: URL(fileURLWithPath: path, isDirectory: isDirectory))))
            let once = try roundTrip(frame)
            #expect(try roundTrip(once) == once)
        }
    }

    @Test("a remote error comes back as an NSError with the remote domain, code and description")
    func remoteErrorsKeepDomainCodeAndDescription() {
        struct Refusal: LocalizedError { var errorDescription: String? { "the document refused" } }
        let sent = RemoteErrorDescription(describing: NSError(domain: "com.example.editor", code: 17,
                                                              userInfo: [NSLocalizedDescriptionKey: "not now"]))
        #expect(sent.domain == "com.example.editor" && sent.code == 17 && sent.message == "not now")
        let received = sent.nsError
        #expect(received.domain == "com.example.editor")
        #expect(received.code == 17)
        #expect(received.localizedDescription == "not now")
        #expect(RemoteErrorDescription(describing: Refusal()).message == "the document refused")
    }

    @Test("a long description is cut at a character boundary to fit")
    func longDescriptionsAreCut() throws {
        let long = String(repeating: "é", count: 5000)  // 10,000 bytes
        let cut = RemoteErrorDescription(describing: NSError(domain: "d", code: 1, userInfo: [NSLocalizedDescriptionKey: long]))
        #expect(cut.message.utf8.count <= RemoteErrorDescription.descriptionLimit)
        #expect(cut.message.utf8.count == 4096)
        let frame = RemoteFrame.answer(RemoteAnswer(id: 1, outcome: .completed(cut)))
        #expect(try roundTrip(frame) == frame)
    }

    @Test("values over the limits are refused when sending, not sent")
    func oversizedValuesAreNotSent() {
        let longPath = "/" + String(repeating: "a", count: 5000)
        #expect(throws: RemoteCodecError.self) {
            try RemoteMessageCodec.encode(.lookup(RemoteLookup(id: 1, path: longPath, scope: .item)))
        }
        #expect(throws: RemoteCodecError.self) {
            try RemoteMessageCodec.encode(.lookup(RemoteLookup(id: 1, path: "relative", scope: .item)))
        }
        let many = (0..<1025).map { RemoteLookupAnswer.Entry(presenterNumber: UInt64($0), path: "/x") }
        #expect(throws: RemoteCodecError.self) {
            try RemoteMessageCodec.encode(.lookupAnswer(RemoteLookupAnswer(id: 1, entries: many)))
        }
    }

    @Test("an announced length over 64 KiB is refused before anything is read")
    func oversizedLengthsAreRefused() {
        #expect(throws: RemoteCodecError.self) { try RemoteMessageCodec.bodyLength(header: [0x01, 0x00, 0x01, 0x00]) }
        #expect(throws: RemoteCodecError.self) { try RemoteMessageCodec.bodyLength(header: [0xFF, 0xFF, 0xFF, 0xFF]) }
        #expect((try? RemoteMessageCodec.bodyLength(header: [0x00, 0x00, 0x01, 0x00])) == 65536)
    }

    @Test("every truncation of a valid frame is refused")
    func truncationsAreRefused() throws {
        let frame = try RemoteMessageCodec.encode(.request(RemoteRequest(
            id: 1, presenterNumber: 2, presentedPath: "/a", message: .versionDidGain(Self.version))))
        for length in 0..<frame.count {
            #expect(throws: RemoteCodecError.self) { try RemoteMessageCodec.decode(frame: Array(frame[..<length])) }
        }
    }

    @Test("a wrong version, an unknown kind, trailing bytes and bad fields are refused")
    func malformedBodiesAreRefused() throws {
        let body = Array(try RemoteMessageCodec.encode(.answer(RemoteAnswer(id: 1, outcome: .gone))).dropFirst(4))
        #expect(throws: RemoteCodecError.unsupportedVersion(3)) { try RemoteMessageCodec.decode(body: [3] + body.dropFirst()) }
        #expect(throws: RemoteCodecError.self) { try RemoteMessageCodec.decode(body: [RemoteMessageCodec.version, 99] + body.dropFirst(2)) }
        #expect(throws: RemoteCodecError.self) { try RemoteMessageCodec.decode(body: body + [0]) }
        // A relative path, a NUL in a path, text that is not UTF-8, a bad boolean.
        var lookup = WireWriter()
        lookup.u8(RemoteMessageCodec.version); lookup.u8(3); lookup.u64(1)
        var relative = lookup; try relative.blob(Array("a".utf8), limit: 10); relative.u8(1)
        var withNUL = lookup; try withNUL.blob([UInt8(ascii: "/"), 0], limit: 10); withNUL.u8(1)
        var badScope = lookup; try badScope.blob([UInt8(ascii: "/")], limit: 10); badScope.u8(8)
        for body in [relative.bytes, withNUL.bytes, badScope.bytes] {
            #expect(throws: RemoteCodecError.self) { try RemoteMessageCodec.decode(body: body) }
        }
        var answer = WireWriter()
        answer.u8(RemoteMessageCodec.version); answer.u8(2); answer.u64(1); answer.u8(2); answer.u8(1)
        try answer.blob([0xC3], limit: 10)  // half a character
        answer.i64(1); try answer.text("x", limit: 10)
        #expect(throws: RemoteCodecError.self) { try RemoteMessageCodec.decode(body: answer.bytes) }
        var notBoolean = WireWriter()
        notBoolean.u8(RemoteMessageCodec.version); notBoolean.u8(2); notBoolean.u64(1); notBoolean.u8(1); notBoolean.u8(2)
        #expect(throws: RemoteCodecError.self) { try RemoteMessageCodec.decode(body: notBoolean.bytes) }
    }

    @Test("a frame of the first wire version (which could lend locks) is refused, not misread")
    func firstVersionRefused() throws {
        var body = try RemoteMessageCodec.encode(.lookup(RemoteLookup(id: 1, path: "/a", scope: .all)))
        body[RemoteMessageCodec.headerLength] = 1
        #expect(throws: RemoteCodecError.self) { try RemoteMessageCodec.decode(frame: body) }
    }
}
