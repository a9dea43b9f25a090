import Foundation
import Testing
@testable import FileCoordination

/// A coordination that waits while a coordinated move (`item(at:didMoveTo:)`) moves its item is
/// handed the item where it is now — with or without presenters, through every API.
@Suite("Moves while waiting")
struct MoveWhileWaitingTests {
    /// Holds `a.txt` (.forMoving) and `b.txt` (.forReplacing) on a thread; once `waiter` is asleep
    /// on `a.txt`'s lock, moves `a.txt` to `b.txt` and announces it. Returns `b.txt`.
    private func moveWhileSomeoneWaits(in scratch: Scratch, _ waiter: @escaping @Sendable (URL) -> Void) -> (URL, Signal) {
        let a = scratch.file("a.txt", contents: "moved")
        let b = scratch.file("b.txt")
        let mover = Coordinator()
        let holder = Holder(mover) { c, inside in
            try c.coordinate(writingItemAt: a, options: .forMoving, writingItemAt: b, options: .forReplacing) { from, to in
                inside()
                try FileManager.default.moveItem(at: from, to: to)
                c.item(at: from, didMoveTo: to)
            }
        }
        let done = onThread { waiter(a) }
        #expect(Polling.holds { KernelLockProbe.someoneWaits(for: a) }, "the waiter never waited for a.txt")
        holder.release()
        return (b, done)
    }

    /// A synchronous read (the fast path: no presenter registered) or write waiting for the item
    /// follows the move: its accessor gets `b.txt`, with the moved contents.
    @Test("a synchronous read or write (no presenter registered) follows the move", arguments: ["read", "write"])
    func synchronousAccessGetsTheNewURL(_ access: String) throws {
        let scratch = try Scratch()
        let got = Box<String?>(nil)
        let (_, done) = moveWhileSomeoneWaits(in: scratch) { a in
            let look = { (url: URL) in "\(url.lastPathComponent):\((try? String(contentsOf: url, encoding: .utf8)) ?? "missing")" }
            got.value = access == "read" ? try? Coordinator().coordinate(readingItemAt: a, byAccessor: look)
                                         : try? Coordinator().coordinate(writingItemAt: a, byAccessor: look)
        }
        #expect(done.wait())
        #expect(got.value == "b.txt:moved")
    }

    @Test("coordinate(with:queue:) updates the caller's intents before the accessor runs")
    func queueVariantUpdatesTheIntents() throws {
        let scratch = try Scratch()
        let got = Box<URL?>(nil)
        let queue = OperationQueue()
        let (b, done) = moveWhileSomeoneWaits(in: scratch) { a in
            let intent = FileAccessIntent.readingIntent(with: a)
            let ran = Signal()
            Coordinator().coordinate(with: [intent], queue: queue) { error in
                if error == nil { got.value = intent.url }
                ran.fire()
            }
            _ = ran.wait()
        }
        #expect(done.wait())
        #expect(got.value?.lastPathComponent == b.lastPathComponent)
    }

    @Test("an item moved again and again while a call waits ends in .itemKeptMoving, not .timedOut",
          arguments: [Coordinator.ReadingOptions(), .resolvesSymbolicLink])
    func anItemThatKeepsMovingIsReported(options: Coordinator.ReadingOptions) throws {
        let scratch = try Scratch()
        let moves = MoveLog.retryLimit + 1
        let files = (0...moves).map { scratch.file("m\($0).txt", contents: $0 == 0 ? "x" : nil) }
        // One holder per place, each moving its item one step on when released.
        let holders = (0..<moves).map { index in
            Holder(Coordinator()) { c, inside in
                // The destination is not locked here: the next holder holds it.
                try c.coordinate(writingItemAt: files[index], options: .forMoving) { from in
                    inside()
                    try FileManager.default.moveItem(at: from, to: files[index + 1])
                    c.item(at: from, didMoveTo: files[index + 1])
                }
            }
        }
        let outcome = Box<String>("")
        let done = onThread {
            do {
                _ = try Coordinator().coordinate(readingItemAt: files[0], options: options) { $0 }
                outcome.value = "ran"
            } catch let error as CoordinationError {
                outcome.value = caseName(error)
            } catch {
                outcome.value = "\(error)"
            }
        }
        for index in 0..<moves {
            #expect(Polling.holds { KernelLockProbe.someoneWaits(for: files[index]) }, "the reader never waited for m\(index)")
            holders[index].release()
        }
        #expect(done.wait())
        #expect(outcome.value == "itemKeptMoving")
    }
}

@Suite("Intents")
struct FileAccessIntentTests {
    @Test("the async variant hands the accessor the caller's own intent objects, updated")
    func asyncVariantUpdatesTheSameObjects() async throws {
        let scratch = try Scratch()
        let target = scratch.file("target.txt", contents: "t")
        let link = scratch.url.appendingPathComponent("link.txt")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let intent = FileAccessIntent.readingIntent(with: link, options: .resolvesSymbolicLink)
        let same = try await Coordinator().coordinate(with: [intent]) { intents in intents[0] === intent }
        #expect(same)
        #expect(intent.url.lastPathComponent == "target.txt")
    }
}
