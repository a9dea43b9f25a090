import Foundation
import Testing
@testable import FileCoordination

/// A host program's own `SIGURG` handler — installed with `SA_RESTART`, before or after our first
/// wait — must not disable timeouts or `cancel()` (the wake signal is a real-time signal of ours).
@Suite("Host signal handlers")
struct HostSignalTests {
    @Test("timeouts and cancel() still end kernel waits in a process with its own SA_RESTART SIGURG handler",
          arguments: ["before", "after"])
    func hostSIGURGHandlerDoesNotDisableTimeouts(when: String) throws {
        let scratch = try Scratch()
        let file = scratch.file("held.txt", contents: "x")
        let writer = Holder.writing(file)
        let child = try ChildProcess(["host-sigurg", file.path, when])
        if when == "after" { #expect(child.expect("TIMEDOUT") == "TIMEDOUT") }
        #expect(child.expect("TIMEDOUT") == "TIMEDOUT")
        #expect(child.expect("WAITING") == "WAITING")
        #expect(Polling.holds { KernelLockProbe.someoneWaits(for: file) }, "the child never waited in the kernel")
        child.send("cancel")
        #expect(child.expect("CANCELLED") == "CANCELLED")
        writer.release()
        child.closeInput()
        child.waitForExit()
    }

    @Test("the wake signal is a real-time signal, not the host's SIGURG")
    func theWakeSignalIsRealTime() {
        let (id, signal) = KernelWaitInterrupter.shared.register(deadline: nil)
        KernelWaitInterrupter.shared.unregister(id)
        #expect(signal.map { $0 >= __libc_current_sigrtmin() && $0 <= __libc_current_sigrtmax() } == true)
    }
}
