import BenchmarkSupport
import Foundation

/// Milliseconds, from nanoseconds.
func ms(_ nanoseconds: Double, _ digits: Int = 3) -> String { format(nanoseconds / 1e6, digits) }

/// `ratio ×`, with the verdict against `goal` (lower is better).
func verdict(_ value: Double, atMost goal: Double) -> String { value <= goal ? "met" : "**missed**" }
