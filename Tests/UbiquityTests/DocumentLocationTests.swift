import Foundation
import Glibc
import Testing
@testable import Ubiquity

/// The helper routines every iCloud app writes for itself, as account and container API (issue
/// 16, item 13): the local documents folder, URLs in it and in a container's scopes, whether a
/// name exists there, and an item's modification date.
@Suite("Document locations, names and dates")
struct DocumentLocationTests {
    @Test("the local documents folder: XDG_DOCUMENTS_DIR from user-dirs.dirs, else ~/Documents; a configured one wins")
    func localDocumentsFolder() throws {
        let homeScratch = try Scratch("ubiquity-locations")
        defer { homeScratch.remove() }
        let home = homeScratch.url
        let config = home.appending(path: "config")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        let environment = ["HOME": home.path, "XDG_CONFIG_HOME": config.path,
                           "CLOUDDOCUMENTS_UBIQUITY_CONFIG": home.appending(path: "none.conf").path]
        func resolved(_ dirs: String?) throws -> String {
            let file = config.appending(path: "user-dirs.dirs")
            if let dirs { try Data(dirs.utf8).write(to: file) } else { try? FileManager.default.removeItem(at: file) }
            return UbiquityAccount(environment: environment).localDocumentsURL.standardizedFileURL.path
        }
        #expect(try resolved(nil) == home.path + "/Documents")
        #expect(try resolved("# written by xdg-user-dirs-update\nXDG_DESKTOP_DIR=\"$HOME/Desktop\"\nXDG_DOCUMENTS_DIR=\"$HOME/Papiers\"\n") == home.path + "/Papiers")
        #expect(try resolved("XDG_DOCUMENTS_DIR=\"/srv/shared docs\"\n") == "/srv/shared docs")
        #expect(try resolved("XDG_DOCUMENTS_DIR=\"$HOME/\"\n") == home.path + "/Documents", "the home folder itself means disabled")
        #expect(try resolved("XDG_DOCUMENTS_DIR=relative\n") == home.path + "/Documents")

        // Configured: the file key, then the environment over it.
        let conf = home.appending(path: "ubiquity.conf")
        try Data("documents = \(home.path)/Configured\n".utf8).write(to: conf)
        var configured = environment
        configured["CLOUDDOCUMENTS_UBIQUITY_CONFIG"] = conf.path
        #expect(UbiquityAccount(environment: configured).localDocumentsURL.path == home.path + "/Configured")
        configured["CLOUDDOCUMENTS_LOCAL_DOCUMENTS"] = home.path + "/FromEnvironment"
        #expect(UbiquityAccount(environment: configured).localDocumentsURL.path == home.path + "/FromEnvironment")
        let fixed = UbiquityAccount(configuration: UbiquityConfiguration(root: nil, localDocuments: home.appending(path: "Fixed")))
        #expect(fixed.localDocumentsURL.path == home.appending(path: "Fixed").path)
        #expect(throws: UbiquityError.configurationInvalid(path: "f", line: 1, reason: "the documents folder must be an absolute path, not `docs`")) {
            try UbiquityConfiguration.parse("documents = docs", path: "f")
        }
    }

    @Test("names: URLs in the local folder and in both scopes of a container, and whether each exists")
    func namesAndExistence() throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let account = UbiquityAccount(configuration: UbiquityConfiguration(
            root: cloud.root, containerIdentifiers: ["com.example.notes"], provider: .none, localDocuments: cloud.local))
        let container = try account.container()

        #expect(try account.localDocumentURL(named: "a.txt") == cloud.local.appending(path: "a.txt"))
        #expect(try account.ubiquitousDocumentURL(named: "Notes/b.txt").path == container.documentsURL.path + "/Notes/b.txt")
        #expect(try container.dataURL(named: "state.json").path == container.url.path + "/state.json")
        #expect(!account.localDocumentExists(named: "a.txt"))
        _ = try cloud.localFile("a.txt")
        #expect(account.localDocumentExists(named: "a.txt"))

        try FileManager.default.createDirectory(at: container.documentsURL.appending(path: "Notes"), withIntermediateDirectories: true)
        try Data("b".utf8).write(to: container.documentsURL.appending(path: "Notes/b.txt"))
        try Data("{}".utf8).write(to: container.url.appending(path: "state.json"))
        #expect(account.ubiquitousDocumentExists(named: "Notes/b.txt"))
        #expect(container.documentExists(named: "Notes/b.txt"))
        #expect(!account.ubiquitousDataExists(named: "Notes/b.txt"))
        #expect(account.ubiquitousDataExists(named: "state.json"))
        #expect(!account.ubiquitousDocumentExists(named: "state.json"))
        #expect(!account.ubiquitousDocumentExists(named: "b.txt", containerIdentifier: "com.example.other"))

        let signedOut = UbiquityAccount(configuration: UbiquityConfiguration(root: nil, containerIdentifiers: ["com.example.notes"]))
        #expect(!signedOut.ubiquitousDocumentExists(named: "Notes/b.txt"))
        #expect(throws: UbiquityError.notSignedIn) { try signedOut.ubiquitousDocumentURL(named: "x") }
    }

    @Test("names that would leave the folder or cannot be file names are refused, and exist nowhere",
          arguments: ["", "/etc/passwd", "../escape.txt", "a/../../b", "a//b", "trailing/", ".", "nul\u{0}byte", String(repeating: "n", count: 256)])
    func refusedNames(_ name: String) throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let account = UbiquityAccount(configuration: UbiquityConfiguration(
            root: cloud.root, containerIdentifiers: ["com.example.notes"], provider: .none, localDocuments: cloud.local))
        let refused = { (error: any Error) -> Bool in
            if case UbiquityError.invalidName(let refusedName, _) = error { return refusedName == name }
            return false
        }
        #expect(performing: { try account.localDocumentURL(named: name) }, throws: refused)
        #expect(performing: { try account.ubiquitousDocumentURL(named: name) }, throws: refused)
        #expect(performing: { try account.ubiquitousDataURL(named: name) }, throws: refused)
        #expect(!account.localDocumentExists(named: name))
        #expect(!account.ubiquitousDocumentExists(named: name))
        #expect(!account.ubiquitousDataExists(named: name))
    }

    @Test("the data scope does not name the documents scope")
    func dataScopeIsNotDocuments() throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let container = try cloud.account.container()
        #expect(throws: UbiquityError.self) { try container.dataURL(named: "Documents") }
        #expect(throws: UbiquityError.self) { try container.dataURL(named: "Documents/a.txt") }
        #expect(!container.dataExists(named: "Documents"))
        #expect(try container.dataURL(named: "Documents-old").lastPathComponent == "Documents-old")
    }

    @Test("an item's modification date (to the nanosecond) and the time since; a missing item is itemNotFound")
    func modificationDate() throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let file = try cloud.localFile("dated.txt")
        var times = [timespec(tv_sec: 1_700_000_000, tv_nsec: 250_000_000), timespec(tv_sec: 1_700_000_000, tv_nsec: 250_000_000)]
        #expect(utimensat(AT_FDCWD, file.path, &times, 0) == 0)
        let date = try cloud.account.modificationDate(ofItemAt: file)
        #expect(date == Date(timeIntervalSince1970: 1_700_000_000.25))
        let now = Date(timeIntervalSince1970: 1_700_000_090.25)
        #expect(try cloud.account.timeSinceModification(ofItemAt: file, now: now) == 90)
        let missing = cloud.local.appending(path: "missing.txt")
        #expect(throws: UbiquityError.itemNotFound(path: missing.path)) { try cloud.account.modificationDate(ofItemAt: missing) }
    }
}
