import BenchmarkSupport
import Glibc

/// The raw paths the coordinated ones are compared with, measured by the same program.
enum Raw {
    /// open + read 4 KiB + close.
    static func readFile(_ path: String, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return -1 }
        let count = read(fd, buffer.baseAddress, buffer.count)
        close(fd)
        return count
    }

    /// One exclusive `flock` and its release; a failure stops the benchmark (a failing baseline
    /// would look fast).
    static func flockCycle(_ fd: Int32) {
        guard flock(fd, LOCK_EX) == 0, flock(fd, LOCK_UN) == 0 else { benchmarkFailed("raw flock: errno \(errno)") }
    }
}
