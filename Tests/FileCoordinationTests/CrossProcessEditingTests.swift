import Foundation
import Glibc
import Testing
import TestSupport
@testable import FileCoordination

/// Several processes with a `TextDocument` open on one file, each appending and saving, then
/// reading the file through a coordinated read with no timeout (`CoordinationTestHelper
/// document-loop`) — what used to hang both processes for ever in 4 runs of 5 (issue 15). Each
/// must finish, every line appended must be in the file once or in an unresolved conflict version
/// (when two saves overlap, the document keeps the other text as one: nothing is ever silently
/// dropped), and no answer from another process is ever cut off by the limit.
@Suite("Cross-process editing: documents open in several processes at once", .serialized)
struct CrossProcessEditingTests {
    @Test("processes that append, save and read one document at once all finish, and keep every line", arguments: [2, 3])
    func appendSaveAndReadLoops(processes: Int) throws {
        let setup = try RemoteDeliveryTests.Setup(contents: "")
        let environment = Self.environment(setup)
        let rounds = 30
        let tags = (0..<processes).map { "P\($0)" }
        let children = try tags.map { tag in
            try ChildProcess(["document-loop", setup.file.path, tag, "\(rounds)"], environment: environment)
        }
        defer { for child in children { child.closeInput(); child.waitForExit() } }
        for child in children { #expect(child.readLine() == "OPENED") }
        for child in children { child.send("go") }
        let errors = Self.waitUntilDone(children)
        let expected = tags.flatMap { tag in (0..<rounds).map { "\(tag)-\($0)" } }
        // A presenter's save refused with an upgrade conflict (`wouldDeadlock`) used to stop a
        // process now and then; the asker now asks again (UpgradeConflictRetryTests).
        #expect(errors.isEmpty, "\(errors)")
        try Self.expectKept(expected, in: setup.file, environment: environment)
    }

    /// Documents open in two processes while two others append with the README's read-modify-write
    /// (issue 15's soak, without moves): every line stays. A document's reload used to run inside
    /// its own save (its reads share the save's lock owner): the merge then took the reloaded text
    /// for the common ancestor and dropped the appenders' lines, about one line in 3,000.
    @Test("documents and read-modify-write appenders on one file keep every line")
    func documentsAndAppendersKeepEveryLine() throws {
        let setup = try RemoteDeliveryTests.Setup(contents: "")
        let environment = Self.environment(setup)
        let rounds = 150, appends = 600
        let documents = try ["D0", "D1"].map { tag in
            try ChildProcess(["document-loop", setup.file.path, tag, "\(rounds)"], environment: environment)
        }
        let appenders = try ["A0", "A1"].map { tag in
            try ChildProcess(["append-loop", setup.file.path, tag, "\(appends)"], environment: environment)
        }
        defer { for child in documents + appenders { child.closeInput(); child.waitForExit() } }
        for child in documents { #expect(child.readLine() == "OPENED") }
        for child in appenders { #expect(child.readLine() == "READY") }
        for child in documents + appenders { child.send("go") }
        let errors = Self.waitUntilDone(documents + appenders)
        #expect(errors.isEmpty, "\(errors)")
        let expected = ["D0", "D1"].flatMap { tag in (0..<rounds).map { "\(tag)-\($0)" } }
            + ["A0", "A1"].flatMap { tag in (0..<appends).map { "\(tag)-\($0)" } }
        try Self.expectKept(expected, in: setup.file, environment: environment)
    }

    /// `kill -9` at any moment: while two processes edit the document, a third one with the
    /// document open is killed, three times, at a different point of its loop each time (after
    /// 1, 4 and 9 saves — mid-save, mid-read, or while asked to save by the others). The others
    /// never wait for it past the kernel's notice that it is gone (no cut-off), finish, and every
    /// line a process saw saved — the victims' included — is in the file or a conflict version;
    /// the file is never torn.
    @Test("a process killed with SIGKILL while others edit the document loses nothing it saved and stalls nobody")
    func killingAnEditorLosesNothingSaved() throws {
        let setup = try RemoteDeliveryTests.Setup(contents: "")
        let environment = Self.environment(setup)
        let rounds = 40
        let survivors = try ["P0", "P1"].map { tag in
            try ChildProcess(["document-loop", setup.file.path, tag, "\(rounds)"], environment: environment)
        }
        defer { for child in survivors { child.closeInput(); child.waitForExit() } }
        for child in survivors { #expect(child.readLine() == "OPENED") }
        for child in survivors { child.send("go") }
        var saved: [String] = []
        for (number, savesBeforeKill) in [1, 4, 9].enumerated() {
            let tag = "K\(number)"
            let victim = try ChildProcess(["document-loop", setup.file.path, tag, "1000", "--report"], environment: environment)
            #expect(victim.readLine() == "OPENED")
            victim.send("go")
            for _ in 0..<savesBeforeKill {
                guard let line = victim.readLine(), line.hasPrefix("SAVED ") else {
                    Issue.record("victim \(tag) stopped before its saves")
                    break
                }
                saved.append(String(line.dropFirst("SAVED ".count)))
            }
            victim.kill9()
            victim.waitForExit()
        }
        let errors = Self.waitUntilDone(survivors)
        #expect(errors.isEmpty, "\(errors)")
        let expected = ["P0", "P1"].flatMap { tag in (0..<rounds).map { "\(tag)-\($0)" } } + saved
        try Self.expectKept(expected, in: setup.file, environment: environment)
    }

    // MARK: Helpers

    /// Children share a private lock directory and version store; presenters in other processes
    /// are on, and so are save requests to them (the default).
    static func environment(_ setup: RemoteDeliveryTests.Setup) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment[LockDirectory.environmentVariable] = setup.lockDirectory
        environment[RemotePresence.environmentVariable] = "1"
        environment.removeValue(forKey: RemotePresence.savesEnvironmentVariable)  // the default: on
        environment["CLOUDDOCUMENTS_VERSION_STORE"] = setup.scratch.url.path + "/versions"  // private
        return environment
    }

    /// Waits for each child's "DONE" line (a child silent for 60 s is a hang) and checks that no
    /// answer from another process was cut off by the limit; returns the "ERROR" lines.
    static func waitUntilDone(_ children: [ChildProcess]) -> [String] {
        var errors: [String] = []
        for child in children {
            let line = child.expect("DONE")
            #expect(line != nil, "a process went silent for 60 s: a hang")
            if let line, line.hasPrefix("ERROR") { errors.append(line) } else {
                #expect(line?.hasSuffix(" cutoffs=0") == true, "\(line ?? "")")
            }
        }
        return errors
    }

    /// Every line of `expected` is in `file` once, or in one of its unresolved conflict versions;
    /// every line of the file is whole (a known tag, a number).
    static func expectKept(_ expected: [String], in file: URL, environment: [String: String]) throws {
        let text = try String(contentsOf: file, encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init)
        for line in lines {
            #expect(line.split(separator: "-").count == 2 && Int(line.split(separator: "-").last ?? "") != nil,
                    "a torn line: \(line)")
        }
        let versions = try ChildProcess(["conflict-lines", file.path], environment: environment)
        var kept: [String] = []
        while let line = versions.readLine(), !line.hasPrefix("END"), !line.hasPrefix("ERROR") { kept.append(line) }
        versions.waitForExit()
        var counts: [String: Int] = [:]
        for line in lines { counts[line, default: 0] += 1 }
        for line in expected {
            #expect((counts[line] ?? 0) <= 1, "\(line) twice in the file")
        }
        let lost = expected.filter { counts[$0] == nil && !kept.contains($0) }
        #expect(lost.isEmpty, "neither in the file nor in a conflict version: \(lost)")
    }
}
