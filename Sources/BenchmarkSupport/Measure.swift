import Foundation
import Glibc

/// The timing helpers every benchmark uses, so their figures mean the same thing: one clock, one
/// median and one percentile formula.
///
/// **Percentiles are nearest-rank on the sorted samples**: `percentile(values, p)` is the sample
/// at index `round((count − 1) × p)` — p50 of an even count is the upper of the two middle
/// samples, p99 of 100 samples is the 99th smallest. No interpolation, so every figure printed is
/// a time that was measured.
public enum Measure {
    /// Monotonic nanoseconds (`CLOCK_MONOTONIC`).
    public static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// CPU time used by the whole process (every thread) so far, in nanoseconds: less disturbed
    /// by other programs on a busy machine than the time on the clock.
    public static func processCPUTime() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Nanoseconds taken by `body`.
    public static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = now()
        try body()
        return Double(now() - start)
    }

    /// Nanoseconds per call of `body`: the median of `rounds` rounds of `iterations` calls, after
    /// a warm-up of a tenth of a round.
    public static func perCall(iterations: Int, rounds: Int = 7, _ body: () throws -> Void) rethrows -> Double {
        for _ in 0..<max(1, iterations / 10) { try body() }
        var samples: [Double] = []
        for _ in 0..<rounds {
            let start = now()
            for _ in 0..<iterations { try body() }
            samples.append(Double(now() - start) / Double(iterations))
        }
        return median(samples)
    }

    /// `percentile(values, 0.5)`; NaN for no samples.
    public static func median(_ values: [Double]) -> Double { percentile(values, 0.5) }

    /// The nearest-rank percentile `p` (0…1) of `values`; NaN for no samples.
    public static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let index = min(sorted.count - 1, max(0, Int((Double(sorted.count - 1) * p).rounded())))
        return sorted[index]
    }
}

/// Prints a Markdown table row, at once (also into a pipe).
public func row(_ cells: String...) {
    print("| " + cells.joined(separator: " | ") + " |")
    fflush(nil)
}

/// `value` with `digits` decimals.
public func format(_ value: Double, _ digits: Int = 2) -> String {
    String(format: "%.\(digits)f", value)
}

/// Stops the benchmark: a baseline or a measured path failed, so its figure would be a lie (a
/// failing raw save looks fast). Prints `message` to standard error and exits with status 1.
public func benchmarkFailed(_ message: String) -> Never {
    FileHandle.standardError.write(Data("benchmark failed: \(message)\n".utf8))
    exit(1)
}
