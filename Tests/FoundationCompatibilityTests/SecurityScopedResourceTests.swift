import Foundation
import FoundationCompatibility
import Testing

// The three ways code written for Apple platforms brackets a picked file's access with
// security-scoped calls, compiled unchanged.

/// The pattern of most apps: remember whether access was started, stop only then.
private func readRemembering(_ url: URL) throws -> String {
    let didAccess = url.startAccessingSecurityScopedResource()
    defer { if didAccess { url.stopAccessingSecurityScopedResource() } }
    return try String(contentsOf: url, encoding: .utf8)
}

/// The strict pattern: no access, no read.
private func readRequiringAccess(_ url: URL) throws -> String? {
    guard url.startAccessingSecurityScopedResource() else { return nil }
    defer { url.stopAccessingSecurityScopedResource() }
    return try String(contentsOf: url, encoding: .utf8)
}

/// The Objective-C-shaped pattern, through `NSURL`.
private func readThroughNSURL(_ url: NSURL) -> String? {
    guard url.startAccessingSecurityScopedResource() else { return nil }
    defer { url.stopAccessingSecurityScopedResource() }
    return try? String(contentsOf: url as URL, encoding: .utf8)
}

@Suite("URL.startAccessingSecurityScopedResource / stopAccessingSecurityScopedResource")
struct SecurityScopedResourceTests {
    @Test("a file URL: access is granted (true), each pattern reads the file, and the calls balance")
    func fileURLs() throws {
        let scratch = try Scratch()
        let file = scratch.file("picked.txt", contents: "hello")
        #expect(try readRemembering(file) == "hello")
        #expect(try readRequiringAccess(file) == "hello")
        #expect(readThroughNSURL(file as NSURL) == "hello")
        #expect(file.securityScopedAccessCount == 0)

        // Counted per file, whatever the URL's spelling.
        #expect(file.startAccessingSecurityScopedResource())
        let spelled = URL(fileURLWithPath: scratch.url.path + "/./picked.txt")
        #expect(spelled.startAccessingSecurityScopedResource())
        #expect(file.securityScopedAccessCount == 2)
        spelled.stopAccessingSecurityScopedResource()
        file.stopAccessingSecurityScopedResource()
        #expect(file.securityScopedAccessCount == 0)

        // An unbalanced stop does nothing (the count never goes below zero).
        file.stopAccessingSecurityScopedResource()
        #expect(file.securityScopedAccessCount == 0)
        #expect(file.startAccessingSecurityScopedResource())
        #expect(file.securityScopedAccessCount == 1)
        file.stopAccessingSecurityScopedResource()
    }

    @Test("a missing file is still granted: access is decided by the file system when the file is used")
    func missingFile() throws {
        let scratch = try Scratch()
        let missing = scratch.url.appendingPathComponent("not-there.txt")
        #expect(missing.startAccessingSecurityScopedResource())
        missing.stopAccessingSecurityScopedResource()
        #expect(throws: (any Error).self) { try readRemembering(missing) }
    }

    @Test("a URL that is not a file URL has no security scope: false, and stop does nothing")
    func webURL() throws {
        let web = try #require(URL(string: "https://example.com/file.txt"))
        #expect(!web.startAccessingSecurityScopedResource())
        web.stopAccessingSecurityScopedResource()
        #expect(web.securityScopedAccessCount == 0)
        #expect(!(web as NSURL).startAccessingSecurityScopedResource())
    }

    @Test("balanced from many threads at once")
    func concurrentBalance() async throws {
        let scratch = try Scratch()
        let file = scratch.file("shared.txt", contents: "x")
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<200 {
                        let started = file.startAccessingSecurityScopedResource()
                        if started { file.stopAccessingSecurityScopedResource() }
                    }
                }
            }
        }
        #expect(file.securityScopedAccessCount == 0)
    }
}
