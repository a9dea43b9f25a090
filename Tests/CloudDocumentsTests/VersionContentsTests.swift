import Foundation
import Glibc
import Testing
@testable import CloudDocuments

@Suite("Version contents: copying and flushing")
struct VersionContentsTests {
    @Test("a copy has the source's bytes: larger than one copy step, empty, and a procfs file that reports size 0")
    func copiesBytes() throws {
        let folderScratch = try Scratch("clouddocs-contents")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        let large = Data((0..<(3 << 20) + 17).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) })
        try large.write(to: folder.appendingPathComponent("large"))
        try Data().write(to: folder.appendingPathComponent("empty"))

        try VersionContents.copy(folder.path + "/large", to: folder.path + "/large copy")
        try VersionContents.copy(folder.path + "/empty", to: folder.path + "/empty copy")
        // stat says 0 bytes (procfs), yet read/write copies every byte.
        try VersionContents.copy("/proc/self/status", to: folder.path + "/status copy")

        #expect(try Data(contentsOf: folder.appendingPathComponent("large copy")) == large)
        #expect(try Data(contentsOf: folder.appendingPathComponent("empty copy")).isEmpty)
        let status = try String(contentsOf: folder.appendingPathComponent("status copy"), encoding: .utf8)
        #expect(status.contains("VmRSS:"))
    }

    @Test("syncing files and folders together succeeds; a missing one is reported after the others finished")
    func syncsTogether() throws {
        let folderScratch = try Scratch("clouddocs-contents")
        defer { folderScratch.remove() }
        let folder = folderScratch.url
        try Data("x".utf8).write(to: folder.appendingPathComponent("file"))
        try VersionContents.syncTogether([folder.path + "/file", folder.path])
        #expect(throws: FileVersionError.self) {
            try VersionContents.syncTogether([folder.path, folder.path + "/missing", folder.path + "/file"])
        }
    }
}
