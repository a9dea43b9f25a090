import Foundation
import Testing
@testable import Ubiquity

/// A NUL byte cannot be part of a path: a `root =` holding one is a bad line (issue 16, item 4).
@Suite("ubiquity.conf: a NUL byte in the root")
struct ConfigurationNulByteTests {
    @Test("parse refuses a root with a NUL byte, naming the line")
    func parseRefuses() {
        #expect(throws: UbiquityError.configurationInvalid(path: "f", line: 2, reason: "the root must not contain a NUL byte")) {
            try UbiquityConfiguration.parse("container = com.example.notes\nroot = /tmp/nulroot\u{0}evil\n", path: "f")
        }
    }

    @Test("an account reading such a file is not signed in, and no folder is made")
    func noFolderIsMade() throws {
        let scratch = try Scratch("ubiquity-nul")
        defer { scratch.remove() }
        let folder = scratch.url
        let file = folder.appending(path: "ubiquity.conf")
        try Data("root = \(folder.path)/nulroot\u{0}evil\ncontainer = com.example.notes\n".utf8).write(to: file)
        let account = UbiquityAccount(environment: ["CLOUDDOCUMENTS_UBIQUITY_CONFIG": file.path])
        #expect(throws: UbiquityError.configurationInvalid(path: file.path, line: 1, reason: "the root must not contain a NUL byte")) {
            try account.configuration()
        }
        #expect(account.url(forUbiquityContainerIdentifier: nil) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["ubiquity.conf"])
    }
}
