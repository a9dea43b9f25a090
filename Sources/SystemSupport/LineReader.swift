import Glibc

/// Whole lines read from a pipe or file descriptor, for programs that talk to a child process
/// line by line (the benchmarks, the tests' worker processes). Not thread-safe: one reader.
package struct LineReader {
    private let descriptor: Int32
    private var buffer: [UInt8] = []

    /// Reads lines from `descriptor` (not closed by the reader).
    package init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// The next line, without its newline; `nil` at the end of input, on a read error, or when
    /// nothing arrives for `timeoutMilliseconds` (-1: wait as long as it takes). EINTR is retried.
    package mutating func readLine(timeoutMilliseconds: Int32 = -1) -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                defer { buffer.removeFirst(newline + 1) }
                return String(decoding: buffer[..<newline], as: UTF8.self)
            }
            if timeoutMilliseconds >= 0 {
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard case .success(let ready) = valueOrErrno({ poll(&poller, 1, timeoutMilliseconds) }), ready > 0
                else { return nil }
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            guard case .success(let count) = valueOrErrno({ read(descriptor, &chunk, chunk.count) }), count > 0
            else { return nil }
            buffer += chunk[..<count]
        }
    }
}
