import Foundation
import Testing
@testable import Ubiquity

@Suite struct MetadataPredicateTests {
    private func item(_ name: String, folder: String = "/cloud/Documents", size: Int64 = 10) -> MetadataItem {
        MetadataItem(id: 1, folderPath: folder, name: name,
                     stamp: ItemStamp(isFolder: false, size: size, modified: 0, created: .min, inode: 1), flags: [])
    }

    private func accepts(_ format: String, _ arguments: Any..., name: String, folder: String = "/cloud/Documents") throws -> Bool {
        try MetadataItemPredicate(format: format, argumentArray: arguments).evaluate(item(name, folder: folder))
    }

    @Test func theSeedsFormats() throws {
        #expect(try accepts("%K LIKE '*.txt'", "kMDItemFSName", name: "notes.txt"))
        #expect(try !accepts("%K LIKE '*.txt'", "kMDItemFSName", name: "notes.md"))
        #expect(try accepts("%K LIKE %@", "kMDItemFSName", "n?tes.*", name: "notes.txt"))
        #expect(try accepts("%K == 'x'", "kMDItemFSName", name: "x"))
        #expect(try !accepts("%K == 'x'", "kMDItemFSName", name: "X"))
        #expect(try accepts("%K == [c] 'x'", "kMDItemFSName", name: "X"))
        #expect(try accepts("%K BEGINSWITH 'Rep'", "kMDItemFSName", name: "Report.pages"))
        #expect(try accepts("%K ENDSWITH '.pages'", "kMDItemFSName", name: "Report.pages"))
        #expect(try accepts("%K CONTAINS[c] 'PORT'", "kMDItemFSName", name: "Report.pages"))
        #expect(try accepts("%K CONTAINS[cd] 'resume'", "kMDItemFSName", name: "Résumé.txt"))
        #expect(try !accepts("%K CONTAINS[c] 'resume'", "kMDItemFSName", name: "Résumé.txt"))
        #expect(try accepts("%K CONTAINS '/Documents/'", "kMDItemPath", name: "a.txt"))
        #expect(try accepts("%K == 'notes'", "kMDItemDisplayName", name: "notes.txt"))
        #expect(try accepts("kMDItemFSName like[c] \"*.TXT\"", name: "a.txt"))
    }

    @Test func logicAndParentheses() throws {
        let format = "(%K LIKE '*.txt' OR %K LIKE '*.md') AND NOT %K BEGINSWITH 'draft'"
        let args: [Any] = ["kMDItemFSName", "kMDItemFSName", "kMDItemFSName"]
        let predicate = try MetadataItemPredicate(format: format, argumentArray: args)
        #expect(predicate.evaluate(item("a.txt")))
        #expect(predicate.evaluate(item("b.md")))
        #expect(!predicate.evaluate(item("draft.md")))
        #expect(!predicate.evaluate(item("c.pdf")))
        #expect(try accepts("%K ENDSWITH '.txt' && !(%K == 'b.txt') || FALSEPREDICATE", "kMDItemFSName", "kMDItemFSName", name: "a.txt"))
        #expect(try accepts("%K > 5 AND %K <= %d", "kMDItemFSSize", "kMDItemFSSize", 10, name: "a"))
    }

    @Test("the ubiquitous attributes the format accepts are compared with the item's values, not always false")
    func ubiquitousAttributes() throws {
        var ubiquitous = item("a.txt")
        ubiquitous.flags.insert(.ubiquitous)
        let current = try MetadataItemPredicate(format: "%K == %@", argumentArray: [
            "NSMetadataUbiquitousItemDownloadingStatusKey", "NSURLUbiquitousItemDownloadingStatusCurrent"])
        #expect(current.evaluate(ubiquitous))
        #expect(!current.evaluate(item("a.txt")))      // not in a container: no status
        let notDownloaded = try MetadataItemPredicate(format: "%K != %@", argumentArray: [
            "NSMetadataUbiquitousItemDownloadingStatusKey", "NSURLUbiquitousItemDownloadingStatusNotDownloaded"])
        #expect(notDownloaded.evaluate(ubiquitous))
        let whole = try MetadataItemPredicate(format: "%K >= 100", argumentArray: ["NSMetadataUbiquitousItemPercentDownloadedKey"])
        #expect(whole.evaluate(ubiquitous) == (ubiquitous.ubiquitousStatus.percentDownloaded.map { $0 >= 100 } ?? false))
    }

    @Test("a Boolean attribute compared with an integer argument of any width: non-zero is true, never a trap")
    func flagWithWideIntegerArguments() throws {
        var ubiquitous = item("a.txt")
        ubiquitous.flags.insert(.ubiquitous)
        for argument in [UInt64.max, UInt64(1) << 63, UInt(Int.max) + 1] as [any BinaryInteger] {
            let predicate = try MetadataItemPredicate(format: "%K == %d", argumentArray: ["NSMetadataItemIsUbiquitousKey", argument])
            #expect(predicate.evaluate(ubiquitous), "\(argument)")
        }
        let zero = try MetadataItemPredicate(format: "%K == %d", argumentArray: ["NSMetadataItemIsUbiquitousKey", UInt64(0)])
        #expect(!zero.evaluate(ubiquitous))
    }

    @Test func badFormatsAreErrorsNotCrashes() {
        let bad: [(String, [Any])] = [
            ("%K LIKE", ["kMDItemFSName"]),
            ("%K LIKE '*.txt", ["kMDItemFSName"]),
            ("%K SOUNDSLIKE 'x'", ["kMDItemFSName"]),
            ("%K LIKE %@", ["kMDItemFSName"]),
            ("%K LIKE 'x'", ["kMDItemNoSuchThing"]),
            ("kMDItemFSName == 'a' AND", []),
            ("(kMDItemFSName == 'a'", []),
            ("kMDItemFSSize LIKE 'a'", []),
            ("kMDItemFSName == 'a' extra", []),
            ("%K == 'a'", ["kMDItemFSName", "surplus"]),
            ("%Q", []),
            ("kMDItemFSName ==[x] 'a'", []),
        ]
        for (format, arguments) in bad {
            #expect(throws: MetadataPredicateFormatError.self, "\(format)") {
                try MetadataItemPredicate(format: format, argumentArray: arguments)
            }
        }
        do {
            _ = try MetadataItemPredicate(format: "%K LIKE", argumentArray: ["kMDItemFSName"])
        } catch {
            #expect(error.offset == 7)
            #expect(error.localizedDescription.contains("expected a text value for kMDItemFSName"))
        }
    }

    @Test func closureAndPredicateMacro() {
        let closure = MetadataItemPredicate { $0.name.hasPrefix("a") }
        #expect(closure.evaluate(item("apple")))
        #expect(!closure.evaluate(item("pear")))
        let macro = MetadataItemPredicate(#Predicate<MetadataItem> { $0.name.contains("txt") && $0.size > 5 })
        #expect(macro.evaluate(item("a.txt", size: 6)))
        #expect(!macro.evaluate(item("a.txt", size: 5)))
    }
}
