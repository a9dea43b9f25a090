import Glibc

extension OFDLock {
    /// Takes a lock, sleeping in the kernel until it is granted, the context's deadline passes
    /// (`.timedOut`) or one of its tokens is cancelled (`.cancelled`). No polling: the thread
    /// sleeps in `F_OFD_SETLKW` and is woken by the kernel or by `KernelWaitInterrupter`.
    static func acquireWaiting(
        _ kind: Kind, fd: Int32, start: Int, length: Int, context: WaitContext, path: String
    ) throws(CoordinationError) {
        try context.check()
        let interrupter = KernelWaitInterrupter.shared
        let id = interrupter.register(deadline: context.deadline)
        let stopObservingCancel = context.onCancel { interrupter.interrupt(id) }
        // Dispatch worker threads (and so Swift concurrency's) block most signals; let ours in
        // for the duration of the wait, then restore the thread's mask.
        var interruptOnly = sigset_t(), previousMask = sigset_t()
        sigemptyset(&interruptOnly)
        sigaddset(&interruptOnly, SIGURG)
        pthread_sigmask(SIG_UNBLOCK, &interruptOnly, &previousMask)
        defer {
            pthread_sigmask(SIG_SETMASK, &previousMask, nil)
            stopObservingCancel()
            interrupter.unregister(id)
        }
        while true {
            switch apply(kind, fd: fd, start: start, length: length, wait: true) {
            case .done:
                return
            case .interrupted, .wouldBlock:
                if let reason = interrupter.reason(id) {
                    throw reason == .timedOut ? .timedOut : .cancelled
                }
                try context.check()
            case .failed(let code):
                throw .lockFailed(path: path, errno: code)
            }
        }
    }
}
