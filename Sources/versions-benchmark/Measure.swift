import Foundation
import Glibc

/// Timing helpers: a nanosecond monotonic clock, medians and percentiles, table rows.
enum Measure {
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Nanoseconds taken by `body`.
    static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = now()
        try body()
        return Double(now() - start)
    }

    static func median(_ values: [Double]) -> Double { percentile(values, 0.5) }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let index = min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))
        return sorted[index]
    }
}

/// Prints a Markdown table row, at once (also into a pipe).
func row(_ cells: String...) {
    print("| " + cells.joined(separator: " | ") + " |")
    fflush(nil)
}

func format(_ value: Double, _ digits: Int = 2) -> String {
    String(format: "%.\(digits)f", value)
}

/// Milliseconds, from nanoseconds.
func ms(_ nanoseconds: Double, _ digits: Int = 3) -> String { format(nanoseconds / 1e6, digits) }

/// `ratio ×`, with the verdict against `goal` (lower is better).
func verdict(_ value: Double, atMost goal: Double) -> String { value <= goal ? "met" : "**missed**" }
