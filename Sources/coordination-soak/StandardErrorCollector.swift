import FileCoordination
import Foundation
import Glibc
import Synchronization

/// Reads a worker's standard error on a thread of its own until the worker closes it: copies it
/// to the worker's `.stderr` file, counts the lines saying a process did not answer a save
/// request, and keeps the first few other distinct lines.
final class StandardErrorCollector: Sendable {
    /// The library's line for a save request another process left unanswered (the wording has
    /// been "did not answer a save request within N ms" and "did not answer
    /// savePresentedItemChanges within N ms"; both are counted).
    static let unansweredSaveRequest = "did not answer a save request"
    static func isUnansweredSaveRequest(_ line: String) -> Bool {
        line.contains(unansweredSaveRequest) || line.contains("did not answer savePresentedItemChanges")
    }

    struct Counts: Sendable {
        var lines = 0
        var unansweredSaveRequests = 0
        var otherLines: [String] = []
    }

    private let counts = Locked(Counts())
    private let done = DispatchSemaphore(value: 0)

    /// Starts reading `descriptor` (closed at its end) into `file`.
    init(descriptor: Int32, file: URL) {
        let output = open(file.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        Thread { [self] in
            var pending: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(descriptor, &chunk, chunk.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                if output >= 0 { _ = chunk.withUnsafeBytes { write(output, $0.baseAddress, count) } }
                pending += chunk[..<count]
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    take(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeFirst(newline + 1)
                }
            }
            if !pending.isEmpty { take(String(decoding: pending, as: UTF8.self)) }
            if output >= 0 { close(output) }
            close(descriptor)
            done.signal()
        }.start()
    }

    private func take(_ line: String) {
        counts.withLock { counts in
            counts.lines += 1
            if Self.isUnansweredSaveRequest(line) {
                counts.unansweredSaveRequests += 1
            } else if counts.otherLines.count < 5, !counts.otherLines.contains(line) {
                counts.otherLines.append(String(line.prefix(300)))
            }
        }
    }

    var current: Counts { counts.withLock { $0 } }

    /// Waits until the worker's standard error is closed, at most `seconds`.
    func waitForEnd(seconds: Double) -> Bool {
        done.wait(timeout: .now() + seconds) == .success
    }
}
