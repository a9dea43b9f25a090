import Foundation
import Testing
import TestSupport
@testable import Ubiquity

/// The `clouddocs` container commands, run as the built executable.
@Suite("clouddocs container commands")
struct ContainerCommandLineTests {
    private func clouddocs(_ arguments: [String], _ cloud: ScratchCloud) throws -> ToolRun {
        try runExampleTool("clouddocs", arguments, in: cloud.local, environment: cloud.environment)
    }

    @Test("containers lists identifier, folder and provider; move-to-cloud and move-to-local print the new path")
    func containersAndMoves() throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let listing = try clouddocs(["containers"], cloud)
        #expect(listing.status == 0, "\(listing.errors)")
        let rows = listing.output.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(rows.map { $0.first } == ["com.example.notes", "com.example.other"])
        #expect(rows.first?[1] == cloud.root.appending(path: "com.example.notes").standardizedFileURL.path)
        #expect(rows.first?.last == LocalOnlyProvider().name)

        _ = try cloud.localFile("note.txt", "hello")
        let toCloud = try clouddocs(["move-to-cloud", "note.txt", "--container", "com.example.other"], cloud)
        let inCloud = try cloud.account.container(identifier: "com.example.other").documentsURL.appending(path: "note.txt")
        #expect(toCloud.status == 0, "\(toCloud.errors)")
        #expect(toCloud.output == inCloud.path + "\n")
        #expect(text(at: inCloud) == "hello")

        let back = try clouddocs(["move-to-local", inCloud.path, "."], cloud)
        #expect(back.status == 0, "\(back.errors)")
        #expect(text(at: cloud.local.appending(path: "note.txt")) == "hello")
    }

    @Test("status prints the keys; conflicts lists a sync tool's conflict copy")
    func statusAndConflicts() throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let documents = try cloud.documents()
        let item = documents.appending(path: "plan.txt")
        try Data("mine".utf8).write(to: item)
        let copy = documents.appending(path: "plan.sync-conflict-20260101-120000-ABCDEFG.txt")
        try Data("theirs".utf8).write(to: copy)
        let status = try clouddocs(["status", item.path], cloud)
        #expect(status.status == 0, "\(status.errors)")
        for line in ["ubiquitous: true", "container: com.example.notes", "downloading-status: current", "downloaded: true",
                     "uploaded: true", "percent-downloaded: 100", "unresolved-conflicts: true"] {
            #expect(status.output.contains(line + "\n"), "\(status.output)")
        }
        let conflicts = try clouddocs(["conflicts", item.path], cloud)
        #expect(conflicts.status == 0, "\(conflicts.errors)")
        #expect(conflicts.output.split(separator: "\n").map { $0.split(separator: "\t").first.map(String.init) } == [copy.path])
    }

    @Test("errors are one line on stderr with status 1: a clash, evict and download without placeholders, signed out; usage errors 2")
    func errors() throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let inCloud = try cloud.documents().appending(path: "same.txt")
        try Data("cloud".utf8).write(to: inCloud)
        _ = try cloud.localFile("same.txt", "local")
        let clash = try clouddocs(["move-to-cloud", "same.txt"], cloud)
        #expect(clash.status == 1)
        #expect(clash.errors.contains("already exists"), "\(clash.errors)")
        #expect(text(at: inCloud) == "cloud")
        for command in ["evict", "download"] {
            let run = try clouddocs([command, inCloud.path], cloud)
            #expect(run.status == 1)
            #expect(run.errors.contains("no placeholders"), "\(run.errors)")
        }
        var signedOut = cloud.environment
        signedOut["CLOUDDOCUMENTS_UBIQUITY_ROOT"] = ""
        let containers = try runExampleTool("clouddocs", ["containers"], in: cloud.local, environment: signedOut)
        #expect(containers.status == 1)
        #expect(containers.errors.contains("No ubiquity root is configured"), "\(containers.errors)")
        #expect(try clouddocs(["status"], cloud).status == 2)
        #expect(try clouddocs(["move-to-cloud"], cloud).status == 2)
    }
}
