import CloudDocuments
import Foundation

/// The file format of ``TextDocument`` without a document: for a program that changes a text file
/// inside one coordinated write (``CoordinatedFileEdit``) instead of opening, editing and closing
/// a document, and must read and write the bytes exactly as the document does.
extension TextDocument {
    /// The text of a file's bytes, as opening a document reads it: UTF-8, with a leading
    /// byte-order mark stripped and reported. Line endings are kept as they are.
    ///
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - name: The file's name, for the error message.
    /// - Throws: ``DocumentError/contentsInvalid(_:)`` when `data` is not valid UTF-8, saying
    ///   where (opening a document wraps this in ``DocumentError/couldNotLoad(_:underlying:)``).
    ///
    /// Pure; any thread.
    public nonisolated static func decodeFile(_ data: Data, name: String) throws -> (text: String, hasByteOrderMark: Bool) {
        let (text, mark) = try decode(data, name: name)
        return (text, mark)
    }

    /// The bytes a document saves for `text`: its UTF-8, preceded by the byte-order mark
    /// (`EF BB BF`) when `byteOrderMark` is true. ``decodeFile(_:name:)`` of the result gives
    /// back `text` and `byteOrderMark`. Pure; any thread.
    public nonisolated static func encodeFile(text: String, byteOrderMark: Bool) -> Data {
        var data = Data(capacity: text.utf8.count + 3)
        if byteOrderMark { data.append(contentsOf: Self.byteOrderMark) }
        data.append(contentsOf: text.utf8)
        return data
    }

    /// `text` with every occurrence of `target` replaced by `replacement`, and how many there
    /// were: the rule of ``replace(_:with:)`` (left to right, not overlapping, compared byte for
    /// byte as UTF-8; nothing is replaced when `target` is empty). Pure; any thread.
    public nonisolated static func replacingOccurrences(of target: String, with replacement: String,
                                                        in text: String) -> (text: String, count: Int) {
        let (result, count) = replacing(target, with: replacement, in: text)
        return (result, count)
    }
}
