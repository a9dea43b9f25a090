import Foundation
import Testing
import TestSupport
@testable import Ubiquity

/// What `clouddocs` prints for an item outside the cloud and for a usage error (issue 16, items 8
/// and 15).
@Suite("clouddocs: status outside the cloud, usage errors")
struct ClouddocsOutputTests {
    private func clouddocs(_ arguments: [String], _ cloud: ScratchCloud) throws -> ToolRun {
        try runExampleTool("clouddocs", arguments, in: cloud.local, environment: cloud.environment)
    }

    @Test("status of a file outside every container says only that it is not ubiquitous")
    func statusOutside() throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let local = try cloud.localFile("here.txt")
        for path in [local.path, "/etc/passwd"] {
            let run = try clouddocs(["status", path], cloud)
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.output == "ubiquitous: false\n")
        }
    }

    @Test("a usage error prints the error and the one usage line of its command, status 2",
          arguments: [(["status"], "usage: clouddocs status <file>"),
                      (["move-to-local", "a"], "usage: clouddocs move-to-local <file> <dest>"),
                      (["kv", "set", "key"], "usage: clouddocs kv set <key> <value> [--type string|int|double|bool|data-base64|json] [--container ID]"),
                      (["ls", "--until-count"], "usage: clouddocs ls [--container ID] [--data] [--until-count N] [PATTERN]")])
    func usageLine(arguments: [String], usage: String) throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let run = try clouddocs(arguments, cloud)
        #expect(run.status == 2)
        let lines = run.errors.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 3 && lines[0].hasPrefix("clouddocs: ") && lines[1] == usage && lines[2].isEmpty, "\(run.errors)")
        #expect(run.output.isEmpty)
    }

    @Test("an unknown command names itself and points at help; no arguments and help print the full usage")
    func unknownAndFull() throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let unknown = try clouddocs(["frobnicate"], cloud)
        #expect(unknown.status == 2)
        #expect(unknown.errors.split(separator: "\n").count == 2, "\(unknown.errors)")
        #expect(unknown.errors.contains("frobnicate"))
        let none = try clouddocs([], cloud)
        #expect(none.status == 2)
        #expect(none.errors.contains("move-to-cloud") && none.errors.contains("kv watch") && none.errors.contains("ls ["))
        let help = try clouddocs(["help"], cloud)
        #expect(help.status == 0)
        #expect(help.output.contains("move-to-cloud") && help.output.contains("kv watch") && help.output.contains("ls ["))
    }
}
