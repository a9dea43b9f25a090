import Foundation
import Testing
@testable import CloudDocuments

@Suite("Model values: DocumentState, DocumentContents, DocumentError, TypeIdentifiers")
struct DocumentStateTests {
    @Test("the flags have Apple's bit values and normal is empty")
    func bits() {
        #expect(DocumentState.normal.rawValue == 0)
        #expect(DocumentState.closed.rawValue == 1)
        #expect(DocumentState.inConflict.rawValue == 2)
        #expect(DocumentState.savingError.rawValue == 4)
        #expect(DocumentState.editingDisabled.rawValue == 8)
        #expect(DocumentState.progressAvailable.rawValue == 16)
    }

    @Test("description lists the flags in order, or says normal")
    func descriptions() {
        #expect(DocumentState.normal.description == "normal")
        #expect(DocumentState([.savingError, .closed]).description == "[closed, savingError]")
        #expect(DocumentState([.progressAvailable, .inConflict, .editingDisabled]).description
                == "[inConflict, editingDisabled, progressAvailable]")
        #expect(DocumentState(rawValue: 0x41).description == "[closed, 0x40]")
    }

    @Test("it behaves as an option set")
    func optionSet() {
        var state: DocumentState = .closed
        state.insert(.editingDisabled)
        state.remove(.closed)
        #expect(state == .editingDisabled)
        #expect(state.contains(.editingDisabled))
        #expect(!state.contains(.closed))
        #expect(Set([DocumentState.closed, .closed, .normal]).count == 2)
    }

    @Test("DocumentContents accessors")
    func contents() throws {
        let data = DocumentContents.data(Data("abc".utf8))
        #expect(data.data == Data("abc".utf8))
        #expect(data.package == nil)
        #expect(data.byteCount == 3)
        var package = FilePackage()
        try package.setFile(Data(count: 10), named: "x")
        let packaged = DocumentContents.package(package)
        #expect(packaged.data == nil)
        #expect(packaged.package == package)
        #expect(packaged.byteCount == 10)
        #expect(data != packaged)
    }

    struct LoaderFailure: Error, LocalizedError {
        var errorDescription: String? { "bad magic number" }
    }

    @Test("every error says what happened and what to do")
    func errorMessages() {
        let url = URL(fileURLWithPath: "/tmp/folder/doc.txt")
        let errors: [DocumentError] = [
            .fileNotFound(url), .notReadable(url, underlying: "Permission denied"),
            .couldNotLoad(url, underlying: LoaderFailure()), .alreadyExists(url),
            .saveFailed(url, reason: "rename failed", errno: .ioError), .diskFull(url),
            .folderMissing(url.deletingLastPathComponent()), .notWritable(url), .documentClosed,
            .documentAlreadyOpen, .editingDisabled, .invalidPackageEntryName("a/b"),
            .unsupportedPackageEntry(url, kind: "symbolic link"), .unsupportedFileType("public.png"),
            .contentsInvalid("not valid UTF-8"),
        ]
        for error in errors {
            let description = error.errorDescription ?? ""
            let suggestion = error.recoverySuggestion ?? ""
            #expect(!suggestion.isEmpty, "\(error) has no recovery suggestion")
            #expect(description.hasSuffix(suggestion), "\(description) does not end with what to do")
            #expect(description.count > suggestion.count + 10, "\(description) does not say what happened")
            #expect(error.localizedDescription == description)
        }
        #expect(DocumentError.diskFull(url).errorDescription?.contains("Free some space on the disk and save again.") == true)
        #expect(DocumentError.couldNotLoad(url, underlying: LoaderFailure()).errorDescription?.contains("bad magic number") == true)
        #expect(DocumentError.saveFailed(url, reason: "x", errno: .noSpace).errorDescription?.contains("No space left on device") == true)
    }

    @Test("couldNotLoad keeps the underlying error for inspection")
    func underlyingError() {
        let error = DocumentError.couldNotLoad(URL(fileURLWithPath: "/x"), underlying: LoaderFailure())
        guard case .couldNotLoad(_, let underlying) = error else { return }
        #expect(underlying is LoaderFailure)
    }

    @Test("type identifiers from extensions, like UTType", arguments: [
        ("txt", "public.plain-text"), ("TXT", "public.plain-text"), ("md", "net.daringfireball.markdown"),
        ("png", "public.png"), ("jpg", "public.jpeg"), ("jpeg", "public.jpeg"), ("json", "public.json"),
        ("pbm", "public.pbm"), ("pgm", "org.netpbm.pgm"), ("ppm", "org.netpbm.ppm"),
        ("", "public.data"), ("Weird", "dyn.ext-weird"),
    ])
    func typeIdentifiers(ext: String, type: String) {
        #expect(TypeIdentifiers.typeIdentifier(forExtension: ext) == type)
    }

    @Test("type identifiers for URLs: folders without an extension, files without one")
    func typeIdentifiersForURLs() {
        #expect(TypeIdentifiers.typeIdentifier(for: URL(fileURLWithPath: "/a/notes.md")) == "net.daringfireball.markdown")
        #expect(TypeIdentifiers.typeIdentifier(for: URL(fileURLWithPath: "/a/folder", isDirectory: true)) == "public.folder")
        #expect(TypeIdentifiers.typeIdentifier(for: URL(fileURLWithPath: "/a/README"), isDirectory: false) == "public.data")
        #expect(TypeIdentifiers.typeIdentifier(for: URL(fileURLWithPath: "/a/doc.pkgx", isDirectory: true)) == "dyn.ext-pkgx")
    }

    @Test("preferred extensions map back, Apple's choice where several exist", arguments: [
        ("public.plain-text", "txt"), ("public.jpeg", "jpeg"), ("net.daringfireball.markdown", "md"), ("org.netpbm.ppm", "ppm"),
        ("dyn.ext-weird", "weird"), ("public.data", nil), ("public.folder", nil), ("com.example.unknown", nil),
    ] as [(String, String?)])
    func preferredExtension(forType type: String, _ expected: String?) {
        #expect(TypeIdentifiers.preferredExtension(forType: type) == expected)
    }

    @Test("an extension's type identifier maps back to it", arguments: ["txt", "md", "png", "jpeg", "json", "ppm", "pgm", "pbm", "zzz"])
    func extensionRoundTrip(_ ext: String) {
        #expect(TypeIdentifiers.preferredExtension(forType: TypeIdentifiers.typeIdentifier(forExtension: ext)) == ext)
    }

    @Test("SaveOperation and ChangeKind cases exist and compare")
    func enums() {
        #expect(SaveOperation.forCreating != .forOverwriting)
        #expect(Set<ChangeKind>([.done, .undone, .redone, .cleared]).count == 4)
    }
}
