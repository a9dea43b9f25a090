import Foundation
import SystemSupport

/// Encodes and decodes `RemoteFrame`s (Docs/RemotePresenters.md, *The wire format*).
///
/// A frame on the stream is `[body length: UInt32 LE][body]`, the body
/// `[version: UInt8][kind: UInt8][fields…]`. Limits: a body of at most `maximumFrameLength`
/// bytes, paths and texts of at most `textLimit` bytes, lookups of at most `entryLimit` entries.
/// `decode` validates everything (lengths, tags, UTF-8, absolute paths without NUL, no trailing
/// bytes) and throws `RemoteCodecError` — it never traps; `encode` throws `.tooLarge` rather than
/// produce a frame the other side would refuse.
enum RemoteMessageCodec {
    static let version: UInt8 = 2
    /// The largest body accepted; a bigger announced length closes the connection unread.
    static let maximumFrameLength = 64 * 1024
    /// Paths, purpose identifiers, error domains and descriptions.
    static let textLimit = 4096
    /// Lookup answers.
    static let entryLimit = 1024
    /// Bytes before the body: its length.
    static let headerLength = 4

    private enum Kind: UInt8 {
        case request = 1, answer = 2, lookup = 3, lookupAnswer = 4
    }

    private enum MessageTag: UInt8 {
        case relinquishToReader = 1, relinquishToWriter, reacquire, saveChanges, accommodateDeletion,
             accommodateSubitemDeletion, itemDidChange, itemDidMove, subitemDidAppear, subitemDidChange,
             subitemDidMove, versionDidGain, versionDidLose, versionDidResolveConflict, accommodateEviction
    }

    private enum OutcomeTag: UInt8 {
        case relinquished = 1, completed, gone
    }

    // MARK: Framing

    /// The frame as sent: its length, then its body.
    static func encode(_ frame: RemoteFrame) throws(RemoteCodecError) -> [UInt8] {
        let body = try encodeBody(frame)
        guard body.count <= maximumFrameLength else { throw .tooLarge("a frame of \(body.count) bytes (at most \(maximumFrameLength))") }
        var writer = WireWriter()
        writer.u32(UInt32(body.count))
        return writer.bytes + body
    }

    /// The body length announced by a frame's first `headerLength` bytes; throws when it is over
    /// the limit (the frame is then not read at all).
    static func bodyLength(header: [UInt8]) throws(RemoteCodecError) -> Int {
        var reader = WireReader(header)
        let length = Int(try reader.u32())
        guard length <= maximumFrameLength else { throw .malformed("a frame of \(length) bytes (at most \(maximumFrameLength))") }
        guard length >= 2 else { throw .malformed("a frame of \(length) bytes is too short") }
        return length
    }

    /// Decodes a whole frame (length and body), as `encode` makes it.
    static func decode(frame bytes: [UInt8]) throws(RemoteCodecError) -> RemoteFrame {
        guard bytes.count >= headerLength else { throw .malformed("the frame ends early") }
        let length = try bodyLength(header: Array(bytes[0..<headerLength]))
        guard bytes.count - headerLength == length else { throw .malformed("the frame's length does not match its body") }
        return try decode(body: Array(bytes[headerLength...]))
    }

    /// Decodes a frame body.
    static func decode(body: [UInt8]) throws(RemoteCodecError) -> RemoteFrame {
        guard body.count <= maximumFrameLength else { throw .malformed("a frame of \(body.count) bytes") }
        var reader = WireReader(body)
        let version = try reader.u8()
        guard version == Self.version else { throw .unsupportedVersion(version) }
        guard let kind = Kind(rawValue: try reader.u8()) else { throw .malformed("unknown frame kind") }
        let frame: RemoteFrame
        switch kind {
        case .request: frame = .request(try readRequest(&reader))
        case .answer: frame = .answer(try readAnswer(&reader))
        case .lookup: frame = .lookup(try readLookup(&reader))
        case .lookupAnswer: frame = .lookupAnswer(try readLookupAnswer(&reader))
        }
        try reader.expectEnd()
        return frame
    }

    private static func encodeBody(_ frame: RemoteFrame) throws(RemoteCodecError) -> [UInt8] {
        var writer = WireWriter()
        writer.u8(version)
        switch frame {
        case .request(let request):
            writer.u8(Kind.request.rawValue)
            try write(request, to: &writer)
        case .answer(let answer):
            writer.u8(Kind.answer.rawValue)
            try write(answer, to: &writer)
        case .lookup(let lookup):
            writer.u8(Kind.lookup.rawValue)
            writer.u64(lookup.id)
            try writePath(lookup.path, to: &writer)
            writer.u8(lookup.scope.rawValue)
        case .lookupAnswer(let answer):
            writer.u8(Kind.lookupAnswer.rawValue)
            writer.u64(answer.id)
            guard answer.entries.count <= entryLimit else { throw .tooLarge("\(answer.entries.count) lookup entries") }
            writer.u32(UInt32(answer.entries.count))
            for entry in answer.entries {
                writer.u64(entry.presenterNumber)
                try writePath(entry.path, to: &writer)
            }
        }
        return writer.bytes
    }

    // MARK: Requests

    private static func write(_ request: RemoteRequest, to writer: inout WireWriter) throws(RemoteCodecError) {
        writer.u64(request.id)
        writer.u64(request.presenterNumber)
        try writePath(request.presentedPath, to: &writer)
        try write(request.message, to: &writer)
    }

    private static func readRequest(_ reader: inout WireReader) throws(RemoteCodecError) -> RemoteRequest {
        let id = try reader.u64()
        let number = try reader.u64()
        let path = try readPath(&reader)
        let message = try readMessage(&reader)
        return RemoteRequest(id: id, presenterNumber: number, presentedPath: path, message: message)
    }

    private static func write(_ message: PresenterMessage, to writer: inout WireWriter) throws(RemoteCodecError) {
        switch message {
        case .relinquishToReader: writer.u8(MessageTag.relinquishToReader.rawValue)
        case .relinquishToWriter: writer.u8(MessageTag.relinquishToWriter.rawValue)
        case .reacquire(let id):
            writer.u8(MessageTag.reacquire.rawValue)
            writer.u64(id.value)
        case .saveChanges: writer.u8(MessageTag.saveChanges.rawValue)
        case .accommodateDeletion: writer.u8(MessageTag.accommodateDeletion.rawValue)
        case .accommodateEviction: writer.u8(MessageTag.accommodateEviction.rawValue)
        case .accommodateSubitemDeletion(let url):
            writer.u8(MessageTag.accommodateSubitemDeletion.rawValue)
            try writeURL(url, to: &writer)
        case .itemDidChange: writer.u8(MessageTag.itemDidChange.rawValue)
        case .itemDidMove(let url):
            writer.u8(MessageTag.itemDidMove.rawValue)
            try writeURL(url, to: &writer)
        case .subitemDidAppear(let url):
            writer.u8(MessageTag.subitemDidAppear.rawValue)
            try writeURL(url, to: &writer)
        case .subitemDidChange(let url):
            writer.u8(MessageTag.subitemDidChange.rawValue)
            try writeURL(url, to: &writer)
        case .subitemDidMove(let from, let to):
            writer.u8(MessageTag.subitemDidMove.rawValue)
            try writeURL(from, to: &writer)
            try writeURL(to, to: &writer)
        case .versionDidGain(let version):
            writer.u8(MessageTag.versionDidGain.rawValue)
            try write(version, to: &writer)
        case .versionDidLose(let version):
            writer.u8(MessageTag.versionDidLose.rawValue)
            try write(version, to: &writer)
        case .versionDidResolveConflict(let version):
            writer.u8(MessageTag.versionDidResolveConflict.rawValue)
            try write(version, to: &writer)
        }
    }

    private static func readMessage(_ reader: inout WireReader) throws(RemoteCodecError) -> PresenterMessage {
        guard let tag = MessageTag(rawValue: try reader.u8()) else { throw .malformed("unknown presenter message") }
        switch tag {
        case .relinquishToReader: return .relinquishToReader
        case .relinquishToWriter: return .relinquishToWriter
        case .reacquire: return .reacquire(ReacquirerID(value: try reader.u64()))
        case .saveChanges: return .saveChanges
        case .accommodateDeletion: return .accommodateDeletion
        case .accommodateEviction: return .accommodateEviction
        case .accommodateSubitemDeletion: return .accommodateSubitemDeletion(at: try readURL(&reader))
        case .itemDidChange: return .itemDidChange
        case .itemDidMove: return .itemDidMove(to: try readURL(&reader))
        case .subitemDidAppear: return .subitemDidAppear(at: try readURL(&reader))
        case .subitemDidChange: return .subitemDidChange(at: try readURL(&reader))
        case .subitemDidMove:
            let from = try readURL(&reader)
            return .subitemDidMove(from: from, to: try readURL(&reader))
        case .versionDidGain: return .versionDidGain(try readVersion(&reader))
        case .versionDidLose: return .versionDidLose(try readVersion(&reader))
        case .versionDidResolveConflict: return .versionDidResolveConflict(try readVersion(&reader))
        }
    }

    // MARK: Answers and lookups

    private static func write(_ answer: RemoteAnswer, to writer: inout WireWriter) throws(RemoteCodecError) {
        writer.u64(answer.id)
        switch answer.outcome {
        case .relinquished(let reacquirer):
            writer.u8(OutcomeTag.relinquished.rawValue)
            try writer.optional(reacquirer) { (writer: inout WireWriter, value: UInt64) throws(RemoteCodecError) in writer.u64(value) }
        case .completed(let error):
            writer.u8(OutcomeTag.completed.rawValue)
            try writer.optional(error) { (writer: inout WireWriter, error: RemoteErrorDescription) throws(RemoteCodecError) in
                try writer.text(error.domain, limit: textLimit)
                writer.i64(error.code)
                try writer.text(error.message, limit: textLimit)
            }
        case .gone:
            writer.u8(OutcomeTag.gone.rawValue)
        }
    }

    private static func readAnswer(_ reader: inout WireReader) throws(RemoteCodecError) -> RemoteAnswer {
        let id = try reader.u64()
        guard let tag = OutcomeTag(rawValue: try reader.u8()) else { throw .malformed("unknown answer") }
        switch tag {
        case .relinquished:
            return RemoteAnswer(id: id, outcome: .relinquished(reacquirer: try reader.optional { (reader: inout WireReader) throws(RemoteCodecError) in try reader.u64() }))
        case .completed:
            let error = try reader.optional { (reader: inout WireReader) throws(RemoteCodecError) -> RemoteErrorDescription in
                let domain = try reader.text(limit: textLimit)
                let code = try reader.i64()
                return RemoteErrorDescription(domain: domain, code: code, message: try reader.text(limit: textLimit))
            }
            return RemoteAnswer(id: id, outcome: .completed(error))
        case .gone:
            return RemoteAnswer(id: id, outcome: .gone)
        }
    }

    private static func readLookup(_ reader: inout WireReader) throws(RemoteCodecError) -> RemoteLookup {
        let id = try reader.u64()
        let path = try readPath(&reader)
        let scope = RemoteLookup.Scope(rawValue: try reader.u8())
        guard !scope.isEmpty, scope.isSubset(of: .all) else { throw .malformed("unknown lookup scope") }
        return RemoteLookup(id: id, path: path, scope: scope)
    }

    private static func readLookupAnswer(_ reader: inout WireReader) throws(RemoteCodecError) -> RemoteLookupAnswer {
        let id = try reader.u64()
        let count = Int(try reader.u32())
        guard count <= entryLimit else { throw .malformed("\(count) lookup entries") }
        var entries: [RemoteLookupAnswer.Entry] = []
        for _ in 0..<count {
            let number = try reader.u64()
            entries.append(.init(presenterNumber: number, path: try readPath(&reader)))
        }
        return RemoteLookupAnswer(id: id, entries: entries)
    }

    // MARK: Paths, URLs, versions

    /// A lossless path string as its bytes: absolute, no NUL byte, at most `textLimit` bytes.
    private static func writePath(_ path: String, to writer: inout WireWriter) throws(RemoteCodecError) {
        let bytes = PathBytes.bytes(of: path)
        guard bytes.first == UInt8(ascii: "/") else { throw .tooLarge("a path that is not absolute") }
        try writer.blob(bytes, limit: textLimit)
    }

    private static func readPath(_ reader: inout WireReader) throws(RemoteCodecError) -> String {
        let bytes = try reader.blob(limit: textLimit)
        guard bytes.first == UInt8(ascii: "/") else { throw .malformed("a path that is not absolute") }
        guard !bytes.contains(0) else { throw .malformed("a path holding a NUL byte") }
        return PathBytes.string(fromBytes: bytes)
    }

    /// A file URL as its path's bytes and whether it names a directory.
    private static func writeURL(_ url: URL, to writer: inout WireWriter) throws(RemoteCodecError) {
        guard url.isFileURL else { throw .tooLarge("a URL that is not a file URL") }
        try writePath(PathBytes.path(of: url), to: &writer)
        writer.bool(url.hasDirectoryPath)
    }

    private static func readURL(_ reader: inout WireReader) throws(RemoteCodecError) -> URL {
        var path = try readPath(&reader)
        var isDirectory = try reader.bool()
        // A path ending in `.` or `..` names a directory: Foundation spells such a URL with a
        // final `/` once it is rebuilt, so build it that way at once and a URL decoded here
        // encodes and decodes to itself (the fuzz test found `/v/1/.` turning into `/v/1/./`).
        if path.hasSuffix("/.") || path.hasSuffix("/..") {
            path += "/"
            isDirectory = true
        }
        return PathBytes.fileURL(path, isDirectory: isDirectory)
    }

    private static func write(_ version: FileVersionReference, to writer: inout WireWriter) throws(RemoteCodecError) {
        try writeURL(version.itemURL, to: &writer)
        try writeURL(version.url, to: &writer)
        try writer.text(version.persistentIdentifier, limit: textLimit)
        writer.bool(version.isConflict)
    }

    private static func readVersion(_ reader: inout WireReader) throws(RemoteCodecError) -> FileVersionReference {
        let itemURL = try readURL(&reader)
        let url = try readURL(&reader)
        let identifier = try reader.text(limit: textLimit)
        return FileVersionReference(itemURL: itemURL, url: url, persistentIdentifier: identifier, isConflict: try reader.bool())
    }
}
