import Foundation
import Glibc
import SystemSupport
import Testing
import TestSupport
@testable import FileCoordination

/// The message rules beyond relinquishment, reaching a presenter in another process
/// (`CoordinationTestHelper remote-present`): exactly one change report per coordinated write,
/// deletion asked before the delete.
@Suite("Remote presenters: change and deletion rules across processes", .serialized)
struct RemoteMessageRulesTests {
    typealias Setup = RemoteDeliveryTests.Setup

    /// Lines the child prints until it stops.
    private func linesUntilStopped(_ child: ChildProcess) -> [String] {
        var lines: [String] = []
        while let line = child.readLine(), line != "STOPPED" { lines.append(line) }
        return lines
    }

    @Test("a coordinated write by another process is reported once: the message and the change monitor do not both report it")
    func oneChangeReportPerWrite() throws {
        let setup = try Setup()
        let child = try setup.present()
        defer { child.waitForExit() }
        try setup.coordinator().coordinate(writingItemAt: setup.file) { url in
            #expect(child.readLine() == "RELINQUISH-WRITER")
            try Data("new bytes".utf8).write(to: url)
        }
        var lines: [String] = []
        while !lines.contains("REACQUIRE"), let line = child.readLine() { lines.append(line) }
        // An uncoordinated write afterwards: the change monitor reads the kernel's reports in
        // order, so any duplicate report of the coordinated write comes before this one's.
        try Data("uncoordinated, longer".utf8).write(to: setup.file)
        while lines.filter({ $0 == "DIDCHANGE" }).count < 2, let line = child.readLine() { lines.append(line) }
        child.closeInput()
        lines += linesUntilStopped(child)
        #expect(lines.filter { $0 == "DIDCHANGE" }.count == 2, "\(lines)")
    }

    @Test("a coordinated delete asks the presenter in another process to accommodate the deletion first")
    func deletionIsAskedFirst() throws {
        let setup = try Setup()
        let child = try setup.present()
        defer { child.closeInput(); child.waitForExit() }
        try setup.coordinator().coordinate(writingItemAt: setup.file, options: .forDeleting) { url in
            #expect(child.expect("DELETE") == "DELETE")
            try FileManager.default.removeItem(at: url)
        }
    }

    /// A folder `dir` holding `a.txt`, presented (both) by a `remote-watch` child.
    private func watchFolder(_ setup: Setup) throws -> (folder: URL, item: URL, child: ChildProcess) {
        let folder = setup.scratch.url.appendingPathComponent("dir")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        let item = folder.appendingPathComponent("a.txt")
        try Data("a".utf8).write(to: item)
        var environment = ProcessInfo.processInfo.environment
        environment[LockDirectory.environmentVariable] = setup.lockDirectory
        environment[RemotePresence.environmentVariable] = "1"
        let child = try ChildProcess(["remote-watch", folder.path, item.path], environment: environment)
        #expect(child.expect("PRESENTING") == "PRESENTING")
        return (folder, item, child)
    }

    @Test("a coordinated move reaches the presenters in another process once: the item's presenter moves, the folder's hears of a subitem move")
    func moveAcrossProcesses() throws {
        let setup = try Setup()
        let (folder, item, child) = try watchFolder(setup)
        defer { child.waitForExit() }
        let destination = folder.appendingPathComponent("b.txt")
        try setup.coordinator().coordinate(writingItemAt: item, options: .forMoving, writingItemAt: destination, options: .forReplacing) { from, to in
            try FileManager.default.moveItem(at: from, to: to)
            setup.coordinator().item(at: from, didMoveTo: to)
        }
        var lines: [String] = []
        while !(lines.contains { $0.hasPrefix("a.txt MOVED") } && lines.contains { $0.hasPrefix("dir SUBITEM-MOVED") }),
              let line = child.readLine() { lines.append(line) }
        #expect(lines.contains("a.txt MOVED \(PathBytes.path(of: destination))"), "\(lines)")
        // A write at the new place reaches the moved presenter (its process re-keyed it).
        try setup.coordinator().coordinate(writingItemAt: destination) { url in try Data("b".utf8).write(to: url) }
        while !lines.contains("a.txt DIDCHANGE"), let line = child.readLine() { lines.append(line) }
        child.closeInput()
        lines += linesUntilStopped(child)
        #expect(lines.filter { $0.hasPrefix("a.txt MOVED") }.count == 1, "\(lines)")
    }

    @Test("folder presenters in another process hear of subitems deleted, appeared and changed; the item's presenter accommodates its deletion")
    func subitemRulesAcrossProcesses() throws {
        let setup = try Setup()
        let (folder, item, child) = try watchFolder(setup)
        defer { child.closeInput(); child.waitForExit() }
        let created = folder.appendingPathComponent("c.txt")
        try setup.coordinator().coordinate(writingItemAt: created) { url in try Data("c".utf8).write(to: url) }
        #expect(child.expect("dir SUBITEM-APPEARED") == "dir SUBITEM-APPEARED \(PathBytes.path(of: created))")
        try setup.coordinator().coordinate(writingItemAt: created) { url in try Data("cc".utf8).write(to: url) }
        #expect(child.expect("dir SUBITEM-CHANGED") == "dir SUBITEM-CHANGED \(PathBytes.path(of: created))")
        try setup.coordinator().coordinate(writingItemAt: item, options: .forDeleting) { url in
            // Both asked before the delete runs.
            var asked: Set<String> = []
            while asked.count < 2, let line = child.readLine() {
                if line == "a.txt DELETE" || line == "dir SUBITEM-DELETE \(PathBytes.path(of: item))" { asked.insert(line) }
            }
            #expect(asked.count == 2)
            try FileManager.default.removeItem(at: url)
        }
    }
}
