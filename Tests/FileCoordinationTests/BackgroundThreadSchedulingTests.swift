import FileCoordination
import Foundation
import SystemSupport
import Testing
import TestSupport

@Suite("SystemSupport: background threads (SCHED_BATCH)")
struct BackgroundThreadSchedulingTests {
    @Test("a thread that asks is in SCHED_BATCH, and only that thread")
    func onlyTheCallingThread() {
        let result = Locked<(asked: Bool, isBackground: Bool)?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let asked = BackgroundThreadScheduling.makeCurrentThreadBackground()
            result.withLock { $0 = (asked, BackgroundThreadScheduling.isCurrentThreadBackground) }
            done.signal()
        }
        thread.start()
        #expect(done.wait(timeout: .now() + .seconds(Int(Polling.hangGuard.components.seconds))) == .success)
        let (asked, isBackground) = result.withLock { $0 } ?? (false, false)
        #expect(asked == isBackground)
        // Linux lets any thread move itself to SCHED_BATCH (no privilege needed).
        #expect(isBackground)
        #expect(!BackgroundThreadScheduling.isCurrentThreadBackground)
    }
}
