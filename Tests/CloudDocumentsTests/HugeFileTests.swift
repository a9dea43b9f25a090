import Foundation
import Glibc
import Testing
@testable import CloudDocuments

/// A file claiming more bytes than the machine has memory (a sparse file made with
/// `truncate -s 1T`) fails a read with a typed error. It used to trap: the reader allocated a
/// buffer of the claimed size, and Foundation traps when an allocation fails.
@Suite("Files larger than memory")
struct HugeFileTests {
    /// Makes a sparse file of 1 TiB, or returns false when the file system refuses.
    func makeSparseFile(at url: URL) -> Bool {
        let fd = open(url.path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return ftruncate(fd, 1 << 40) == 0
    }

    @Test("opening a document whose file claims 1 TiB fails with notReadable; the document stays closed")
    func hugeDocumentFile() async throws {
        try await withNote(containing: nil) { _, url, document in
            guard makeSparseFile(at: url) else { return }
            let error = await expectDocumentError("notReadable") { try await document.openThrowing() }
            #expect(error != nil)
            #expect(document.documentState == .closed)
        }
    }

    @Test("reading a package holding a file that claims 1 TiB fails with notReadable")
    func hugeFileInPackage() throws {
        try Scratch.with { folder in
            let package = folder.appendingPathComponent("doc.pkg")
            try FileManager.default.createDirectory(at: package, withIntermediateDirectories: false)
            guard makeSparseFile(at: package.appendingPathComponent("huge.bin")) else { return }
            expectDocumentError("notReadable") { try FilePackage.read(from: package) }
        }
    }
}
