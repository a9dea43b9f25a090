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
        let (id, signal) = interrupter.register(deadline: context.deadline)
        let stopObservingCancel = context.onCancel { interrupter.interrupt(id) }
        // Dispatch worker threads (and so Swift concurrency's) block most signals; let ours in
        // for the duration of the wait, then restore the thread's mask (after unregistering, so
        // no wake signal is left pending on a thread that blocks it).
        var interruptOnly = sigset_t(), previousMask = sigset_t()
        sigemptyset(&interruptOnly)
        if let signal { sigaddset(&interruptOnly, signal) }
        pthread_sigmask(SIG_UNBLOCK, &interruptOnly, &previousMask)
        defer {
            stopObservingCancel()
            interrupter.unregister(id)
            pthread_sigmask(SIG_SETMASK, &previousMask, nil)
        }
        // Without a wake signal (every real-time signal taken, SIGURG the host's) a kernel wait
        // could not be ended: try every millisecond instead.
        let sleepsInKernel = signal != nil
        while true {
            switch apply(kind, fd: fd, start: start, length: length, wait: sleepsInKernel) {
            case .done:
                return
            case .interrupted, .wouldBlock:
                if let reason = interrupter.reason(id) {
                    throw reason == .timedOut ? .timedOut : .cancelled
                }
                try context.check()
                if !sleepsInKernel { usleep(1000) }
            case .failed(let code):
                throw .lockFailed(path: path, errno: Errno(rawValue: code))
            }
        }
    }
}
