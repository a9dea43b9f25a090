import Foundation
import Glibc
import TestSupport
import Testing

/// A separate process running `CoordinationTestHelper save-and-wait`, which starts a save and
/// stops in the middle of it until told to go on. Driven through pipes; never by sleeping.
final class SaveWorker: Sendable {
    private let child: ChildProcess

    /// Starts a worker saving 2 MiB (`package`: a package of two 1 MiB files) to `url`, and
    /// returns once it is in the middle of writing its temporary item (it said "WRITING").
    init(saving kind: String, to url: URL) throws {
        child = try ChildProcess(["save-and-wait", kind, url.path])
        let line = child.readLine()
        #expect(line == "WRITING", "the worker should be writing, said \(line ?? "nothing")")
    }

    /// The next line the worker prints (nil after 60 s of silence or at its end).
    func readLine() -> String? { child.readLine() }

    /// Lets the worker finish its save; returns what it printed then ("SAVED" on success).
    func finish() -> String? {
        child.send("go")
        let line = child.readLine()
        child.waitForExit()
        return line
    }

    /// `kill -9` in the middle of the save, and waits until the process is gone.
    func kill9() { child.kill9() }
}
