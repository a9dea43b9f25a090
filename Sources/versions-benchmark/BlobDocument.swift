import CloudDocuments
import Foundation

/// The simplest possible document: its contents are a blob of bytes in a plain stored property.
final class BlobDocument: CloudDocument {
    var blob = Data()

    override func contents(forType typeName: String) throws -> DocumentContents {
        .data(blob)
    }

    override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        blob = contents.data ?? Data()
    }
}
