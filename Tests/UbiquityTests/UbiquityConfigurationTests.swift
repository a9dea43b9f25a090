import Foundation
import Testing
import TestSupport
@testable import Ubiquity

@Suite struct UbiquityConfigurationTests {
    @Test func fileKeysAndEnvironmentOverrides() throws {
        let folderScratch = try Scratch("ubiquity-config")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let file = folder.appending(path: "ubiquity.conf")
        try """
            # a comment
            root = \(folder.path)/cloud   # trailing comment
            container = com.example.notes
            container = com.example.other
            provider = none
            """.write(to: file, atomically: true, encoding: .utf8)
        let fromFile = try UbiquityConfiguration.load(environment: ["CLOUDDOCUMENTS_UBIQUITY_CONFIG": file.path])
        #expect(fromFile.root?.path == folder.path + "/cloud")
        #expect(fromFile.containerIdentifiers == ["com.example.notes", "com.example.other"])
        #expect(fromFile.provider == UbiquityProviderKind.none)

        let overridden = try UbiquityConfiguration.load(environment: [
            "CLOUDDOCUMENTS_UBIQUITY_CONFIG": file.path,
            "CLOUDDOCUMENTS_UBIQUITY_CONTAINERS": "a.b, c",
            "CLOUDDOCUMENTS_UBIQUITY_PROVIDER": "external",
        ])
        #expect(overridden.containerIdentifiers == ["a.b", "c"])
        #expect(overridden.provider == .externalSyncTool)

        let signedOut = try UbiquityConfiguration.load(environment: ["CLOUDDOCUMENTS_UBIQUITY_CONFIG": file.path, "CLOUDDOCUMENTS_UBIQUITY_ROOT": ""])
        #expect(signedOut.root == nil)
    }

    @Test("a file with CRLF line ends (written on Windows) reads as the same lines, and errors name the right line")
    func crlfLineEnds() throws {
        let parsed = try UbiquityConfiguration.parse("root = /srv/cloud\r\ncontainer = com.example.notes\r\nprovider = none\r\n", path: "crlf.conf")
        #expect(parsed.root?.path == "/srv/cloud")
        #expect(parsed.containerIdentifiers == ["com.example.notes"])
        #expect(parsed.provider == UbiquityProviderKind.none)
        #expect(throws: UbiquityError.configurationInvalid(path: "crlf.conf", line: 2, reason: "expected `key = value`")) {
            try UbiquityConfiguration.parse("root = /srv/cloud\r\nnonsense\r\n", path: "crlf.conf")
        }
    }

    @Test func badLinesNameFileAndLine() {
        #expect(throws: UbiquityError.configurationInvalid(path: "f", line: 2, reason: "the root must be an absolute path, not `relative`")) {
            try UbiquityConfiguration.parse("container = a\nroot = relative\n", path: "f")
        }
        #expect(throws: UbiquityError.self) { try UbiquityConfiguration.parse("container = ../x", path: "f") }
        #expect(throws: UbiquityError.self) { try UbiquityConfiguration.parse("colour = blue", path: "f") }
        #expect(throws: UbiquityError.self) { try UbiquityConfiguration.parse("just words", path: "f") }
    }

    @Test func containerURLsAndSignedOut() throws {
        let folderScratch = try Scratch("ubiquity-config")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let account = UbiquityAccount(configuration: UbiquityConfiguration(root: folder, containerIdentifiers: ["com.example.notes"]))
        let url = try #require(account.url(forUbiquityContainerIdentifier: nil))
        #expect(url.standardizedFileURL.path == folder.appending(path: "com.example.notes").standardizedFileURL.path)
        var isFolder: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: url.appending(path: "Documents").path, isDirectory: &isFolder) && isFolder.boolValue)
        #expect(account.url(forUbiquityContainerIdentifier: "com.example.other") != nil)

        let signedOut = UbiquityAccount(configuration: UbiquityConfiguration(root: nil, containerIdentifiers: ["x"]))
        #expect(signedOut.url(forUbiquityContainerIdentifier: nil) == nil)
        #expect(throws: UbiquityError.notSignedIn) { try signedOut.container() }
        let noIdentifier = UbiquityAccount(configuration: UbiquityConfiguration(root: folder))
        #expect(throws: UbiquityError.noContainerIdentifier) { try noIdentifier.container() }
    }

    @Test func sharedAccountRereadsAnEditedFile() throws {
        let folderScratch = try Scratch("ubiquity-config")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let file = folder.appending(path: "ubiquity.conf")
        let account = UbiquityAccount(environment: ["CLOUDDOCUMENTS_UBIQUITY_CONFIG": file.path])
        #expect(account.url(forUbiquityContainerIdentifier: "a") == nil)
        try "root = \(folder.path)\ncontainer = a\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(account.url(forUbiquityContainerIdentifier: nil)?.lastPathComponent == "a")
    }
}
