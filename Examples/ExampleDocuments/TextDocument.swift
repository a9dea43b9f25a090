import CloudDocuments
import Foundation

/// A plain-text document: UTF-8 text, read and written byte for byte.
///
/// - The file must be valid UTF-8; anything else is rejected by ``load(fromContents:ofType:)`` with
///   ``DocumentError/contentsInvalid(_:)`` saying where the first invalid byte is (opening then
///   fails with ``DocumentError/couldNotLoad(_:underlying:)`` and the file is left alone).
/// - Line endings are kept as they are (CRLF stays CRLF, a file mixing both keeps both), and a
///   leading UTF-8 byte-order mark is remembered and written back (``hasByteOrderMark``); it is not
///   part of ``text``.
/// - Setting ``text`` (and ``append(_:)``, ``replace(_:with:)``) registers an undo action with the
///   document's ``CloudDocument/undoManager``, so undo and redo work and drive the change count.
///
/// ## Isolation
/// Like every ``CloudDocument``, a text document is `@MainActor`: its text is a plain stored
/// property, edited on the main actor, where the document also snapshots it for saving and loads
/// it; the bytes are read and written off the main actor. The compiler checks all of it — no lock.
public final class TextDocument: CloudDocument {
    private var storedText = ""
    /// The text as last loaded from the file: the common ancestor of a three-way merge until this
    /// document writes the file (then ``lastWritten`` is).
    private var loadedText = ""
    /// The bytes this document last wrote, recorded by the write step (off the main actor).
    nonisolated private let lastWritten = WrittenContents()

    /// Whether the file started with a UTF-8 byte-order mark (`EF BB BF`). It is written back on
    /// save. New documents have none.
    public private(set) var hasByteOrderMark = false

    nonisolated static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Creates a closed text document for `fileURL`, with empty text until it is opened. To make
    /// a new file, set ``text`` and save with ``SaveOperation/forCreating``.
    public nonisolated override init(fileURL: URL) {
        super.init(fileURL: fileURL)
    }

    /// The text. Setting a different value registers an undo action (named "Typing" unless the
    /// caller names it) that restores the old one.
    public var text: String {
        get { storedText }
        set { modify(actionName: nil) { _ in newValue } }
    }

    /// Appends `string` to the text, as one undoable change named "Append".
    public func append(_ string: String) {
        guard !string.isEmpty else { return }
        modify(actionName: "Append") { $0 + string }
    }

    /// Replaces every occurrence of `target` (left to right, not overlapping, compared byte for
    /// byte as UTF-8, so `"\n"` also matches the end of a `"\r\n"`) with `replacement`, as one
    /// undoable change named "Replace". Returns how many were replaced; 0 (and no change) when
    /// `target` is empty or absent.
    @discardableResult
    public func replace(_ target: String, with replacement: String) -> Int {
        var count = 0
        modify(actionName: "Replace") { old in
            let (new, replaced) = Self.replacing(target, with: replacement, in: old)
            count = replaced
            return replaced > 0 ? new : nil
        }
        return count
    }

    /// Applies `transform` to the text (`nil` or the same text: no change) and registers the
    /// undo action restoring the previous text.
    private func modify(actionName: String?, _ transform: (String) -> String?) {
        guard let new = transform(storedText), new != storedText else { return }
        let previous = storedText
        storedText = new
        let manager = undoManager
        manager.registerUndo(withTarget: self) { document in
            document.modify(actionName: nil) { _ in previous }
        }
        if manager.isUndoing || manager.isRedoing { return }
        if let actionName {
            manager.setActionName(actionName)
        } else if manager.undoActionName.isEmpty {
            manager.setActionName("Typing")
        }
    }

    // MARK: Hooks

    /// The text as UTF-8, preceded by the byte-order mark if the file had one.
    public override func contents(forType typeName: String) throws -> DocumentContents {
        .data(Self.encodeFile(text: storedText, byteOrderMark: hasByteOrderMark))
    }

    /// Reads UTF-8 text; a leading byte-order mark is stripped and remembered.
    ///
    /// - Throws: ``DocumentError/contentsInvalid(_:)`` for bytes that are not valid UTF-8 (saying
    ///   where) or for a folder.
    public override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        guard case .data(let data) = contents else {
            throw DocumentError.contentsInvalid("“\(fileURL.lastPathComponent)” is a folder, not a text file")
        }
        let (text, mark) = try Self.decode(data, name: fileURL.lastPathComponent)
        storedText = text
        loadedText = text
        lastWritten.set(nil)
        hasByteOrderMark = mark
    }

    // MARK: Merging instead of conflicting

    /// Records what was written, so the next save that finds the file changed merges against it.
    public nonisolated override func writeContents(_ contents: DocumentContents,
                                                   andAttributes attributes: [FileAttributeKey: any Sendable]?,
                                                   safelyTo url: URL, for saveOperation: SaveOperation) throws {
        try super.writeContents(contents, andAttributes: attributes, safelyTo: url, for: saveOperation)
        if case .data(let data) = contents { lastWritten.set(data) }
    }

    /// Goes beyond Apple: when the file changed since this document last read or wrote it, the
    /// two texts are merged line by line against that common ancestor (``TextMerge``). Edits that
    /// do not overlap — two programs appending lines, say — are both kept and no conflict version
    /// is made; overlapping edits return `nil`, so the save keeps the other text as an unresolved
    /// conflict version and the document becomes ``DocumentState/inConflict``. When both sides
    /// appended, the lines already in the file stay where they are and this document's appended
    /// lines follow them: a line, once saved, keeps its place before every line saved later (what
    /// a reader following the file, `tail -f` say, expects).
    ///
    /// Runs on the main actor inside the save's coordinated write. The document's text becomes
    /// the merge (edits made since the save's snapshot are merged onto it too); the undo history
    /// is kept.
    public override func resolveConflict(withCurrentContentsAt url: URL, ofType typeName: String,
                                         saving contents: DocumentContents) throws -> DocumentContents? {
        guard case .data(let oursData) = contents, let theirsData = try? Data(contentsOf: url) else { return nil }
        if let merged = mergedAppends(ours: oursData, theirs: theirsData, name: url.lastPathComponent) { return merged }
        guard let (ours, _) = try? Self.decode(oursData, name: url.lastPathComponent),
              let (theirs, _) = try? Self.decode(theirsData, name: url.lastPathComponent) else { return nil }
        var base = loadedText
        if let written = lastWritten.get(), let (text, _) = try? Self.decode(written, name: url.lastPathComponent) {
            base = text
        }
        // The file's side first: lines already in the file keep their place, and this
        // document's appended lines follow them (TextMerge puts its `ours` appends first).
        guard case .merged(let merged) = TextMerge.merge(base: base, ours: theirs, theirs: ours) else { return nil }
        if storedText == ours {
            storedText = merged
        } else if case .merged(let both) = TextMerge.merge(base: ours, ours: storedText, theirs: merged) {
            storedText = both  // edited again after the snapshot: keep those edits on the merge
        }
        return .data(Self.encodeFile(text: merged, byteOrderMark: hasByteOrderMark))
    }

    /// ``resolveConflict(withCurrentContentsAt:ofType:saving:)`` when both this document and the
    /// other writer only appended lines to what this document last wrote (two programs appending:
    /// every save meets the other's append; the file's side first, as there, keeps the file's
    /// bytes a prefix of the next merge's). The same result as the general merge, from the bytes
    /// (``TextMerge/mergeAppends(base:ours:theirs:)``): the merged file is decoded once, where the
    /// general merge decodes, splits and re-encodes three texts — all under the save's write lock,
    /// which the other writer waits for. `nil` when the case does not apply: merge in general.
    private func mergedAppends(ours oursData: Data, theirs theirsData: Data, name: @autoclosure () -> String) -> DocumentContents? {
        guard let written = lastWritten.get(), oursData.starts(with: Self.byteOrderMark) == hasByteOrderMark,
              let merged = TextMerge.mergeAppends(base: written, ours: theirsData, theirs: oursData),
              let (mergedText, _) = try? Self.decode(merged, name: name()) else { return nil }
        if Self.text(storedText, isEncodedIn: oursData) {
            storedText = mergedText
        } else if let (ours, _) = try? Self.decode(oursData, name: name()),
                  case .merged(let both) = TextMerge.merge(base: ours, ours: storedText, theirs: mergedText) {
            storedText = both  // edited again after the snapshot: keep those edits on the merge
        }
        return .data(merged)
    }

    /// Whether `data` (after a byte-order mark, if any) holds exactly the UTF-8 of `text`.
    nonisolated static func text(_ text: String, isEncodedIn data: Data) -> Bool {
        let body = data.starts(with: byteOrderMark) ? data.dropFirst(byteOrderMark.count) : data
        var text = text
        return text.withUTF8 { utf8 in
            guard utf8.count == body.count else { return false }
            guard !utf8.isEmpty else { return true }
            return body.withUnsafeBytes { body in memcmp(utf8.baseAddress!, body.baseAddress!, utf8.count) == 0 }
        }
    }

    // MARK: Text helpers

    /// Decodes UTF-8 `data`, with or without a byte-order mark. Never crashes on bad input. `name`
    /// (the file's, for the error) is asked for only when the bytes are not UTF-8.
    nonisolated static func decode(_ data: Data, name: @autoclosure () -> String) throws -> (String, Bool) {
        let mark = data.starts(with: byteOrderMark)
        let body = mark ? data.dropFirst(byteOrderMark.count) : data[...]
        if let text = String(validating: body, as: UTF8.self) {
            return (text, mark)
        }
        let offset = firstInvalidUTF8Offset(body) + (mark ? byteOrderMark.count : 0)
        let byte = offset < data.count ? data[data.startIndex + offset] : 0
        let hex = String(byte, radix: 16, uppercase: true)
        throw DocumentError.contentsInvalid(
            "“\(name())” is not valid UTF-8 text (invalid byte 0x\(hex.count < 2 ? "0" + hex : hex) at offset \(offset)); "
                + "TextDocument reads UTF-8 only, so convert the file to UTF-8 first")
    }

    /// The offset of the first byte that is not part of a valid UTF-8 sequence.
    nonisolated private static func firstInvalidUTF8Offset(_ bytes: Data.SubSequence) -> Int {
        var offset = 0
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var lastGood = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                offset += UTF8.width(scalar)
                lastGood = offset
            case .emptyInput:
                return lastGood
            case .error:
                return lastGood
            }
        }
    }

    /// `text` with every non-overlapping occurrence of `target` replaced, and the count.
    nonisolated static func replacing(_ target: String, with replacement: String, in text: String) -> (String, Int) {
        let needle = Array(target.utf8)
        guard !needle.isEmpty else { return (text, 0) }
        let haystack = Array(text.utf8)
        guard haystack.count >= needle.count else { return (text, 0) }
        var result: [UInt8] = []
        result.reserveCapacity(haystack.count)
        var count = 0
        var index = 0
        let first = needle[0]
        while index < haystack.count {
            if haystack[index] == first, index + needle.count <= haystack.count,
               haystack[index..<(index + needle.count)].elementsEqual(needle) {
                result.append(contentsOf: replacement.utf8)
                index += needle.count
                count += 1
            } else {
                result.append(haystack[index])
                index += 1
            }
        }
        guard count > 0 else { return (text, 0) }
        // Valid UTF-8 in, valid UTF-8 out: a valid needle can only match on scalar boundaries.
        return (String(decoding: result, as: UTF8.self), count)
    }
}

/// The bytes a text document last wrote: set by its write step on the document's file-access
/// queue, read by its merge hook on the main actor.
private final class WrittenContents: @unchecked Sendable {
    // @unchecked: `data` is only touched with `lock` held (an NSLock: pthread-based, so
    // ThreadSanitizer sees it).
    private let lock = NSLock()
    private var data: Data?

    func set(_ new: Data?) { lock.withLock { data = new } }
    func get() -> Data? { lock.withLock { data } }
}
