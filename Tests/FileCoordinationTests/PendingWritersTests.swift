import Foundation
import Glibc
import Testing
import TestSupport
@testable import FileCoordination

/// The lock directory's shared count of writers waiting at pending gates: a hint that lets fresh
/// readers skip asking the kernel, and that falls back to asking whenever it cannot be trusted.
@Suite("Pending writers: the shared count")
struct PendingWritersTests {
    @Test("zero when no writer waits; counted while one does, in every process's view; a truncated file means \"ask the kernel\"")
    func countAndFallback() throws {
        let scratch = try Scratch()
        let directory = scratch.url.path
        let count = try #require(PendingWriters.of(directoryPath: directory))
        #expect(count.noneWaiting)
        count.counting {
            #expect(!count.noneWaiting)
            // Another process sees the count in the file (here: its bytes).
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: directory + "/" + PendingWriters.fileName))) ?? Data()
            #expect(bytes.count == 8 && bytes.contains { $0 != 0 })
        }
        #expect(count.noneWaiting)
        // A thrown error still ends the count.
        struct Failure: Error {}
        #expect(throws: Failure.self) { try count.counting { () throws(Failure) in throw Failure() } }
        #expect(count.noneWaiting)
        // Truncated by another process: never trusted again in this process (readers ask the kernel).
        let truncate = try ToolProcess.run(URL(fileURLWithPath: "/usr/bin/truncate"), ["-s", "0", directory + "/" + PendingWriters.fileName])
        #expect(truncate.status == 0, "\(truncate.output)")
        #expect(!count.noneWaiting)
    }
}
