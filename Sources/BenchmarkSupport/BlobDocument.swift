import CloudDocuments
import Foundation

/// The simplest possible document, written as a user would: its contents are a blob of bytes in a
/// plain stored property (main-actor state, like every `CloudDocument` subclass's). Shared by the
/// benchmarks that measure documents.
public final class BlobDocument: CloudDocument {
    public var blob = Data()

    public override func contents(forType typeName: String) throws -> DocumentContents {
        .data(blob)
    }

    public override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        blob = contents.data ?? Data()
    }
}
