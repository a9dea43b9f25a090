import Foundation
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
}
