import Foundation
import Testing
@testable import CloudDocuments

/// The wording a person reads: each piece of advice once, and nothing that is untrue for the
/// situation at hand (issue 7, "smaller things a new user hit").
@Suite("DocumentError wording")
struct ErrorWordingTests {
    private let url = URL(fileURLWithPath: "/tmp/folder/notes.txt")

    private func occurrences(of needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    @Test("a load failure caused by invalid contents gives its advice once")
    func loadFailureAdviceOnce() {
        let error = DocumentError.couldNotLoad(url, underlying: DocumentError.contentsInvalid("not valid UTF-8"))
        let text = error.errorDescription ?? ""
        #expect(occurrences(of: "restore an earlier version", in: text) == 1, "\(text)")
        #expect(text.contains("not valid UTF-8"), "\(text)")
        #expect(!text.contains(".."), "\(text)")
        #expect(error.recoverySuggestion == DocumentError.contentsInvalid("x").recoverySuggestion)
        // What happened, without advice: the reason alone.
        #expect(!(error.failureReason ?? "").contains("restore an earlier version"), "\(error.failureReason ?? "")")
    }

    @Test("a load failure with a cause that has no advice gives the general advice once")
    func loadFailureGeneralAdvice() {
        struct BadMagic: LocalizedError { var errorDescription: String? { "bad magic number" } }
        struct Plain: Error {}
        for underlying in [BadMagic() as any Error, Plain()] {
            let text = DocumentError.couldNotLoad(url, underlying: underlying).errorDescription ?? ""
            #expect(occurrences(of: "restore an earlier version", in: text) == 1, "\(text)")
            #expect(occurrences(of: "could not be loaded", in: text) == 1, "\(text)")
        }
    }

    @Test("disk full does not claim a previous version exists")
    func diskFullForNewFile() {
        let text = DocumentError.diskFull(url).errorDescription ?? ""
        #expect(!text.contains("the previous version was kept"), "\(text)")
        #expect(text.contains("nothing on disk was changed"), "\(text)")
        #expect(text.contains("Free some space on the disk and save again."), "\(text)")
    }
}
