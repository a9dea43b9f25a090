import Dispatch
import Foundation
import Glibc
import Testing
import TestSupport
@testable import FileCoordination

/// Presenters in other processes relinquish *before* the asker takes its locks, so no lock is
/// held across that round trip (Docs/RemotePresenters.md §3), and the relinquishment is given
/// back when the locks take longer than `RemotePresence.earlyRelinquishWindow`. Real processes.
@Suite("Remote presenters: relinquishing before the locks", .serialized)
struct RemoteEarlyRelinquishTests {
    /// A write of `setup.file` on a thread of its own; `wait()` returns its outcome.
    private final class BackgroundWrite: @unchecked Sendable {
        // @unchecked: `outcome` is written by the thread before it signals `done`, and read only
        // after `wait()` has seen that signal.
        private var outcome: String = "did not finish"
        private let done = DispatchSemaphore(value: 0)

        init(_ coordinator: Coordinator, _ url: URL) {
            Thread.detachNewThread { [self] in
                do {
                    try coordinator.coordinate(writingItemAt: url) { _ in }
                    outcome = "written"
                } catch {
                    outcome = "\(error)"
                }
                done.signal()
            }
        }

        func wait() -> String {
            _ = done.wait(timeout: .now() + .seconds(Int(Polling.hangGuard.components.seconds)))
            return outcome
        }
    }

    private static func holder(_ setup: RemoteDeliveryTests.Setup, mode: String) throws -> ChildProcess {
        var environment = ProcessInfo.processInfo.environment
        environment[LockDirectory.environmentVariable] = setup.lockDirectory
        environment[RemotePresence.environmentVariable] = "1"
        let child = try ChildProcess(["remote-write-holder", setup.file.path, mode], environment: environment)
        #expect(child.expect("PRESENTING") == "PRESENTING")
        return child
    }

    /// The next `count` lines the child prints (the reacquirer reaches it after our access has
    /// returned: read before its input is closed, which unregisters its presenter), then its stop.
    private static func lines(_ count: Int, of child: ChildProcess) -> [String] {
        let lines = (0..<count).compactMap { _ in child.readLine() }
        child.closeInput()
        #expect(child.readLine() == "STOPPED")
        child.waitForExit()
        return lines
    }

    @Test("a writer's relinquish request reaches the presenter while another process still holds the lock, and is made once")
    func relinquishesWhileTheLockIsHeld() throws {
        let setup = try RemoteDeliveryTests.Setup()
        setup.runtime.remote.earlyRelinquishWindow = Polling.hangGuard  // never given back early here
        let child = try Self.holder(setup, mode: "until-line")
        child.send("hold")
        #expect(child.readLine() == "HOLDING")
        let write = BackgroundWrite(setup.coordinator(timeout: Polling.hangGuard), setup.file)
        // Printed while the other process still holds the write lock: asked before our lock.
        #expect(child.readLine() == "RELINQUISH-WRITER")
        child.send("release")
        #expect(write.wait() == "written")
        let lines = Self.lines(2, of: child)
        #expect(Set(lines) == ["RELEASED", "REACQUIRE"], "one relinquishment, given back once: \(lines)")
        #expect(setup.runtime.remote.delivery.cutOffCount == 0)
    }

    @Test("a presenter whose own coordinated write waits for our reacquirer gets it back after the window, then relinquishes under our lock")
    func givesBackWhenTheLockTakesLong() throws {
        let setup = try RemoteDeliveryTests.Setup()
        setup.runtime.remote.earlyRelinquishWindow = .milliseconds(50)
        let child = try Self.holder(setup, mode: "until-reacquired")
        child.send("hold")
        #expect(child.readLine() == "HOLDING")
        // Without giving back, this write would wait for a lock held by a write that waits for
        // this write's reacquirer: for ever (the child's hang guard would end it with GAVE-UP).
        let write = BackgroundWrite(setup.coordinator(timeout: nil), setup.file)
        #expect(write.wait() == "written")
        let lines = Self.lines(6, of: child)
        #expect(lines.prefix(3) == ["RELINQUISH-WRITER", "REACQUIRE", "GIVEN-BACK"], "\(lines)")
        #expect(Set(lines.dropFirst(3)) == ["RELEASED", "RELINQUISH-WRITER", "REACQUIRE"], "asked again with our lock: \(lines)")
        #expect(lines.count == 6, "\(lines)")
        #expect(setup.runtime.remote.delivery.cutOffCount == 0)
    }

    @Test("with early relinquishment off, the presenter is asked only once the lock is ours")
    func offAsksUnderTheLock() throws {
        let setup = try RemoteDeliveryTests.Setup()
        setup.runtime.remote.relinquishesBeforeLocking = false
        let child = try Self.holder(setup, mode: "until-line")
        child.send("hold")
        #expect(child.readLine() == "HOLDING")
        let write = BackgroundWrite(setup.coordinator(timeout: Polling.hangGuard), setup.file)
        child.send("release")
        #expect(write.wait() == "written")
        let lines = Self.lines(3, of: child)
        #expect(lines.first == "RELEASED" || lines.first == "RELINQUISH-WRITER", "\(lines)")
        #expect(lines.filter { $0 == "RELINQUISH-WRITER" }.count == 1 && lines.last == "REACQUIRE", "\(lines)")
    }
}
