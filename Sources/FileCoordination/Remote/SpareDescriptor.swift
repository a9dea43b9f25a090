import Glibc

/// One descriptor kept open (`/dev/null`) so that a process at its descriptor limit can still take
/// a waiting connection off its listener — and close it — instead of leaving it there, where
/// `poll` would report the listener readable again at once and the endpoint's thread would spin.
/// Used by the endpoint's thread alone.
struct SpareDescriptor {
    private var fd: Int32 = Self.open()

    /// Frees the spare, accepts one connection from `listener`, closes it and takes the spare
    /// again. False when there was no spare (another thread may have taken the freed number) or
    /// nothing was accepted: the caller then stops polling the listener for a while.
    mutating func refuseOne(on listener: Int32) -> Bool {
        guard fd >= 0 else {
            fd = Self.open()
            return false
        }
        Glibc.close(fd)
        let accepted = UnixSocket.accept(listener)
        if case .success(let connection) = accepted { Glibc.close(connection) }
        fd = Self.open()
        if case .success = accepted { return true }
        return false
    }

    mutating func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    private static func open() -> Int32 {
        Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
    }
}
