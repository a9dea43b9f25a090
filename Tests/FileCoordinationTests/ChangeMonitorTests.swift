import Foundation
import SystemSupport
import TestSupport
import Testing
@testable import FileCoordination

@Suite("Changes made outside this process's coordinators")
struct ChangeMonitorTests {
    @Test func anUncoordinatedWriteReachesThePresenter() throws {
        let scratch = try Scratch()
        let file = scratch.file("watched.txt", contents: "old")
        let (presenter, changed) = RecordingPresenter.signallingChanges(file)
        try withPresenters([presenter]) {
            try "new contents".write(to: file, atomically: true, encoding: .utf8)  // replaced by rename
            #expect(changed.wait(), "the presenter was told")
        }
        #expect(presenter.log.first == "didChange")
    }

    @Test func aCoordinatedWriteInAnotherProcessReachesThePresenter() throws {
        let scratch = try Scratch()
        let counter = scratch.file("counter.txt", contents: "41")
        let (presenter, changed) = RecordingPresenter.signallingChanges(counter)
        try withPresenters([presenter]) {
            let child = try ChildProcess(["increment", counter.path, "1"])
            #expect(child.expect("DONE") == "DONE")
            child.waitForExit()
            #expect(changed.wait(), "the presenter was told")
        }
        #expect(try String(contentsOf: counter, encoding: .utf8) == "42")
    }

    @Test func aCoordinatedWriteHereIsReportedOnce() throws {
        let scratch = try Scratch()
        let file = scratch.file("once.txt", contents: "a")
        let presenter = RecordingPresenter(file)
        let (probe, probed) = RecordingPresenter.signallingChanges(scratch.file("probe.txt", contents: "p"))
        try withPresenters([presenter, probe]) {
            try Coordinator().coordinate(writingItemAt: file) { url in
                try "b".write(to: url, atomically: false, encoding: .utf8)
            }
            // An uncoordinated write of another watched file, made afterwards, is reported after
            // the kernel's report of the first write has been read: by then, a duplicate would show.
            try "q".write(to: scratch.file("probe.txt"), atomically: false, encoding: .utf8)
            #expect(probed.wait())
        }
        #expect(presenter.log.filter { $0 == "didChange" }.count == 1)
    }

    /// A save of another program that does not coordinate, as CloudDocuments' `SafeSave` makes it:
    /// a temporary `.NAME.cdsave-…` beside the item, written, closed and renamed over it.
    private func saveUncoordinated(_ contents: String, to file: URL, digits: String = "0123456789ab") throws {
        let temporary = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).cdsave-\(digits)")
        try contents.write(to: temporary, atomically: false, encoding: .utf8)
        #expect(rename(temporary.path, file.path) == 0)
    }

    @Test("the names of save temporaries, on their bytes")
    func saveTemporaryNames() {
        #expect(ChangeMonitor.isSaveTemporary(".doc.txt.cdsave-0123456789ab"))
        #expect(ChangeMonitor.isSaveTemporary(".doc.pkg.cdold-abcdef012345"))
        #expect(ChangeMonitor.isSaveTemporary(".x.cdsave-000000000000"))
        #expect(!ChangeMonitor.isSaveTemporary(".cdsave-0123456789ab"), "no name before the marker")
        #expect(!ChangeMonitor.isSaveTemporary("doc.txt.cdsave-0123456789ab"), "not hidden")
        #expect(!ChangeMonitor.isSaveTemporary(".doc.txt.cdsave-0123456789a"), "11 digits")
        #expect(!ChangeMonitor.isSaveTemporary(".doc.txt.cdsave-0123456789AB"), "upper case")
        #expect(!ChangeMonitor.isSaveTemporary(".doc.txt.cdsave_0123456789ab"))
        #expect(!ChangeMonitor.isSaveTemporary(".doc.txt.sync-0123456789ab"))
        #expect(!ChangeMonitor.isSaveTemporary(""))
        let odd: [UInt8] = [UInt8(ascii: "."), 0xFF] + Array(".cdsave-0123456789ab".utf8)  // not UTF-8
        #expect(ChangeMonitor.isSaveTemporary(bytes: odd))
        #expect(ChangeMonitor.isSaveTemporary(PathBytes.string(fromBytes: odd)))
    }

    @Test("a save through a temporary by a program that does not coordinate reaches the presenter; a presented save temporary is watched too")
    func uncoordinatedSavesThroughTemporaries() throws {
        let scratch = try Scratch()
        let file = scratch.file("saved.txt", contents: "v1")
        // An item that has a save temporary's name is presented like any other.
        let odd = scratch.file(".kept.txt.cdsave-00000000abcd", contents: "k1")
        let (presenter, changed) = RecordingPresenter.signallingChanges(file)
        let (oddPresenter, oddChanged) = RecordingPresenter.signallingChanges(odd)
        try withPresenters([presenter, oddPresenter]) {
            try saveUncoordinated("v2", to: file)
            #expect(changed.wait(), "the presenter was told")
            try saveUncoordinated("v3", to: file, digits: "ba9876543210")
            #expect(changed.wait(), "and told of the second save")
            try "k2".write(to: odd, atomically: true, encoding: .utf8)
            #expect(oddChanged.wait(), "the presenter of the item named like a save temporary was told")
        }
        #expect(presenter.log.filter { $0 == "didChange" }.count == 2)
        #expect(!presenter.log.contains { $0.hasPrefix("didMove") || $0 == "accommodateDeletion" }, "\(presenter.log)")
    }

    @Test("inside a presented folder, a save through a temporary is the item's change; the temporary is never reported")
    func folderPresenterAndSaveTemporaries() throws {
        let scratch = try Scratch()
        let folder = try scratch.directory("root")
        let file = scratch.file("root/a.txt", contents: "v1")
        let recorder = FolderRecorder(folder)
        try withPresenters([recorder]) {
            try saveUncoordinated("v2", to: file)
            #expect(recorder.waitUntil { $0.contains("change a.txt") }, "\(recorder.events)")
            // A save temporary left behind (a crash), then removed: nothing to tell.
            let stray = folder.appendingPathComponent(".a.txt.cdsave-0000000000ff")
            try "x".write(to: stray, atomically: false, encoding: .utf8)
            try FileManager.default.removeItem(at: stray)
            // Reported after every earlier report of the kernel (its order): a report of the
            // temporaries would be there by now.
            try "p".write(to: folder.appendingPathComponent("probe.txt"), atomically: false, encoding: .utf8)
            #expect(recorder.waitUntil { $0.contains("appear probe.txt") }, "\(recorder.events)")
        }
        #expect(!recorder.events.contains { $0.contains(".cdsave-") }, "\(recorder.events)")
    }
}
