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
}
