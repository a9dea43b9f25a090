import BenchmarkSupport
import Foundation

/// Why a measure could not be taken (a server that did not start, a tool that failed, a file
/// missing on either side): its figure would be a lie, so the benchmark stops with this message.
struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Waits until `condition` holds, checking every `interval` seconds, for at most `timeout`
/// seconds; throws saying what did not happen (with `details()`) when it did not.
func waitUntil(_ what: String, timeout: Double, interval: Double = 0.01, details: () -> String = { "" },
               _ condition: () throws(BenchmarkError) -> Bool) throws(BenchmarkError) {
    let deadline = Measure.now() + UInt64(timeout * 1e9)
    while true {
        if try condition() { return }
        if Measure.now() >= deadline { throw BenchmarkError("\(what) did not happen within \(Int(timeout)) s\n\(details())") }
        usleep(UInt32(interval * 1e6))
    }
}
