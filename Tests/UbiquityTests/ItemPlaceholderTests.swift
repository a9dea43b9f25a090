import Foundation
import Testing
import TestSupport
@testable import Ubiquity

/// The placeholder an evicted item leaves (files on demand): its name, format and failures.
@Suite("Item placeholders: names, format, bad files")
struct ItemPlaceholderTests {
    @Test("a placeholder is a hidden file with another name; the real name maps both ways; odd names are refused")
    func names() {
        #expect(ItemPlaceholder.placeholderName(forItemNamed: "Notes.txt") == ".Notes.txt.clouddocs-placeholder")
        #expect(ItemPlaceholder.itemName(forPlaceholderNamed: ".Notes.txt.clouddocs-placeholder") == "Notes.txt")
        #expect(ItemPlaceholder.itemName(forPlaceholderNamed: "Notes.txt") == nil)
        #expect(ItemPlaceholder.itemName(forPlaceholderNamed: ".clouddocs-placeholder") == nil)
        #expect(ItemPlaceholder.itemName(forPlaceholderNamed: "..clouddocs-placeholder") == nil)
        #expect(ItemPlaceholder.itemName(forPlaceholderNamed: "...clouddocs-placeholder") == nil)
        #expect(ItemPlaceholder.placeholderName(forItemNamed: String(repeating: "x", count: 240)) == nil)
        let url = URL(fileURLWithPath: "/tmp/a/Report.pages")
        #expect(ItemPlaceholder.placeholderURL(forItemAt: url)?.path == "/tmp/a/.Report.pages.clouddocs-placeholder")
        #expect(ItemPlaceholder.itemURL(forPlaceholderAt: URL(fileURLWithPath: "/tmp/a/.Report.pages.clouddocs-placeholder"))?.path == url.path)
    }

    @Test("written beside the item and read back equal; removing it twice is fine")
    func roundTrip() throws {
        try Scratch.with("placeholder") { folder in
            let item = folder.appendingPathComponent("Ünïcode name.txt")
            #expect(try ItemPlaceholder.read(forItemAt: item) == nil)
            let placeholder = ItemPlaceholder(name: item.lastPathComponent, size: 104_857_600,
                                              modificationDate: Date(timeIntervalSince1970: 1_790_000_000.25),
                                              creationDate: nil, isPackage: false, remoteTag: "\"abc\"")
            try placeholder.write(besideItemAt: item)
            #expect(!FileManager.default.fileExists(atPath: item.path))
            #expect(try ItemPlaceholder.read(forItemAt: item) == placeholder)
            try ItemPlaceholder.remove(forItemAt: item)
            try ItemPlaceholder.remove(forItemAt: item)
            #expect(try ItemPlaceholder.read(forItemAt: item) == nil)
        }
    }

    @Test("garbage, a newer format, another item's name, a huge file or a folder: a typed error, never a crash",
          arguments: ["{ not json", #"{"format": 2, "name": "a.txt"}"#, #"{"format": 1}"#,
                      #"{"format":1,"name":"b.txt","size":1,"modificationDate":0,"isPackage":false}"#,
                      #"{"format":1,"name":"a.txt","size":-5,"modificationDate":0,"isPackage":false}"#,
                      #"{"format":1,"name":"../x","size":1,"modificationDate":0,"isPackage":false}"#, "huge", "folder"])
    func invalid(_ contents: String) throws {
        try Scratch.with("placeholder-bad") { folder in
            let item = folder.appendingPathComponent("a.txt")
            let url = try #require(ItemPlaceholder.placeholderURL(forItemAt: item))
            switch contents {
            case "huge": try Data(count: ItemPlaceholder.maximumSize + 1).write(to: url)
            case "folder": try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
            default: try Data(contents.utf8).write(to: url)
            }
            do throws(UbiquityError) {
                _ = try ItemPlaceholder.read(forItemAt: item)
                Issue.record("read a bad placeholder: \(contents)")
            } catch {
                guard case .placeholderInvalid = error else { Issue.record("wrong error \(error)"); return }
                #expect(error.localizedDescription.contains("placeholder"))
            }
        }
    }

    @Test("on a full disk nothing is left under the placeholder's name and the error says so",
          .enabled(if: SmallTmpfs.isAvailable, Comment(rawValue: SmallTmpfs.unavailableMessage)))
    func fullDisk() throws {
        try Scratch.with("placeholder-full") { outer in
            let folder = try SmallTmpfs.mount(size: "64k", inside: outer)
            defer { SmallTmpfs.unmount(folder) }
            let filler = folder.appendingPathComponent("filler")
            // Fill the file system to the last block.
            let handle = try FileHandle(forWritingTo: { FileManager.default.createFile(atPath: filler.path, contents: nil); return filler }())
            while (try? handle.write(contentsOf: Data(count: 4096))) != nil {}
            try? handle.close()
            let item = folder.appendingPathComponent("a.txt")
            let placeholder = ItemPlaceholder(name: "a.txt", size: 1, modificationDate: Date())
            #expect(throws: UbiquityError.self) { try placeholder.write(besideItemAt: item) }
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            #expect(names.filter { $0 != "filler" }.isEmpty, "left behind: \(names)")
        }
    }
}

@Suite("Placeholder facts: the query's fast copy")
struct PlaceholderFactsTests {
    @Test("the attribute round-trips, unknown birth time (Int64.min) included; bad values are refused")
    func attribute() {
        let facts = PlaceholderFacts(size: 123, modifiedNanoseconds: 1_790_000_000_123_456_789, createdNanoseconds: .min, isPackage: true)
        let bytes = Array(facts.attributeValue.utf8)
        #expect(bytes.withUnsafeBufferPointer { PlaceholderFacts(attributeBytes: $0) } == facts)
        for bad in ["", "1", "2 1 1 1 0", "1 -1 1 1 0", "1 1 1 1 2", "1 1 1 1 0 ", "1 99999999999999999999 1 1 0", "1 a 1 1 0"] {
            #expect(Array(bad.utf8).withUnsafeBufferPointer { PlaceholderFacts(attributeBytes: $0) } == nil, "\(bad)")
        }
    }

    @Test("a written placeholder's facts come from its attribute (the JSON is not read)")
    func readsTheAttribute() throws {
        try Scratch.with("placeholder-facts") { folder in
            let item = folder.appendingPathComponent("a.txt")
            try ItemPlaceholder(name: "a.txt", size: 42, modificationDate: Date(timeIntervalSince1970: 5)).write(besideItemAt: item)
            let url = try #require(ItemPlaceholder.placeholderURL(forItemAt: item))
            // Spoil the JSON in place: the attribute stays with the inode.
            let handle = try FileHandle(forWritingTo: url)
            try handle.write(contentsOf: Data("garbage garbage".utf8))
            try handle.close()
            let facts = try #require(PlaceholderFacts.read(placeholderAt: url.path))
            #expect(facts.size == 42 && facts.modifiedNanoseconds == 5_000_000_000 && facts.createdNanoseconds == .min)
        }
    }
}

@Suite("Placeholder name filter: the walk's cheap test")
struct PlaceholderNameFilterTests {
    @Test("says maybe for every placeholder name ItemPlaceholder makes, and no for names without the suffix")
    func agreesWithItemPlaceholder() throws {
        for item in ["a", "file-1.txt", "é.pages", "x.clouddocs-placeholder"] {
            let name = try #require(ItemPlaceholder.placeholderName(forItemNamed: item))
            #expect(PlaceholderNameFilter.mayBePlaceholder(Array(name.utf8)), "\(name)")
            let bytes = Array(name.utf8)
            #expect(bytes.withUnsafeBytes { PlaceholderNameFilter.mayBePlaceholder($0[...]) }, "\(name)")
        }
        for name in ["", ".", ItemPlaceholder.nameSuffix, "." + ItemPlaceholder.nameSuffix, ".a.clouddocs-placeholde",
                     ".a.clouddocs-placeholderx", ".a.Clouddocs-placeholder", "a.txt"] {
            #expect(!PlaceholderNameFilter.mayBePlaceholder(Array(name.utf8)), "\(name)")
        }
        // Whatever the filter lets through, the naming rule decides; it never refuses a real one.
        #expect(ItemPlaceholder.isPlaceholderName(".a" + ItemPlaceholder.nameSuffix))
    }
}
