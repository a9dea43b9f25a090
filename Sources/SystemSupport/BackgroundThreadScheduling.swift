import CSystemShim
import Glibc

/// Scheduling of threads that watch and tidy in the background.
public enum BackgroundThreadScheduling {
    /// Puts the calling thread in Linux's `SCHED_BATCH` class: it still gets its fair share of
    /// the CPU (same weight as any other thread of the process), but waking up does not let it
    /// preempt a thread that is running.
    ///
    /// For threads whose work may wait a few hundred microseconds without anyone noticing — the
    /// change monitor's inotify thread, the lock-file reclaimer. Every save wakes the change
    /// monitor of each process watching the folder (five inotify events per save); on a machine
    /// with few cores, a woken monitor that preempts the thread holding the file's write lock
    /// delays every process queued for that lock. With `SCHED_BATCH` it runs on an idle core at
    /// once, or when the running thread blocks or its time slice ends.
    ///
    /// Best effort, on the calling thread only: where the kernel refuses (another scheduling
    /// class already set, a sandbox that filters `sched_setscheduler`), nothing changes. Returns
    /// whether the thread is now in `SCHED_BATCH`. Any thread; call it from the thread itself.
    @discardableResult
    public static func makeCurrentThreadBackground() -> Bool {
        var parameters = sched_param()
        parameters.sched_priority = 0
        return pthread_setschedparam(pthread_self(), CSHIM_SCHED_BATCH, &parameters) == 0
    }

    /// Whether the calling thread is in `SCHED_BATCH` (for tests).
    public static var isCurrentThreadBackground: Bool {
        var policy: Int32 = 0
        var parameters = sched_param()
        return pthread_getschedparam(pthread_self(), &policy, &parameters) == 0 && policy == CSHIM_SCHED_BATCH
    }
}
