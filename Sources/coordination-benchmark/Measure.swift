import Foundation

/// Timing helpers: medians of repeated rounds, nanosecond clock, percentiles.
enum Measure {
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Nanoseconds per call of `body`, the median of `rounds` rounds of `iterations` calls.
    static func perCall(iterations: Int, rounds: Int = 7, _ body: () throws -> Void) rethrows -> Double {
        for _ in 0..<max(1, iterations / 10) { try body() }  // warm up
        var samples: [Double] = []
        for _ in 0..<rounds {
            let start = now()
            for _ in 0..<iterations { try body() }
            samples.append(Double(now() - start) / Double(iterations))
        }
        return median(samples)
    }

    static func median(_ values: [Double]) -> Double {
        percentile(values, 0.5)
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let index = min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))
        return sorted[index]
    }
}

/// Keeps a second thread alive, so uncontended lock costs are measured as a threaded program pays them.
func startIdleThread() {
    Thread { while true { sleep(3600) } }.start()
}

/// Prints a Markdown table row.
func row(_ cells: String...) {
    print("| " + cells.joined(separator: " | ") + " |")
}

func format(_ value: Double, _ digits: Int = 2) -> String {
    String(format: "%.\(digits)f", value)
}
