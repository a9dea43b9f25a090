import Glibc

/// The random end of a temporary save item's name: `.<marker>-` and 12 lowercase hex digits
/// (48 bits), as ``SavePaths/siblingName(of:marker:)`` puts after the target's name.
///
/// The bits come from a per-process generator (SplitMix64 over a counter) seeded once from the
/// system's random source, not from a `getrandom` call per save: that system call and the
/// `String(radix:)` formatting were together about 3 µs of every save's fixed cost (`perf`,
/// Docs/Performance.md). The names only need to differ — between the saves of one process (the
/// counter never repeats within 2⁶⁴ names) and between processes (each seeds itself; a child made
/// by `fork` sees another process id and seeds itself again). A clash is still harmless: the
/// temporary file is created with `O_EXCL`. Internal; any thread.
enum TemporaryNameSuffix {
    /// The generator's state: the process it was seeded in, and the counter.
    private static let state = Locked<(process: pid_t, counter: UInt64)>((0, 0))

    /// A fresh suffix for `marker` (`cdsave`, `cdold`).
    static func make(marker: String) -> String {
        var value = next48()
        let digits = String(unsafeUninitializedCapacity: 12) { buffer in
            for index in stride(from: 11, through: 0, by: -1) {
                let digit = UInt8(truncatingIfNeeded: value & 0xF)
                buffer[index] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
                value >>= 4
            }
            return 12
        }
        return "." + marker + "-" + digits
    }

    /// 48 random bits. `process` is the calling process's id (another value only in tests).
    static func next48(inProcess process: pid_t = getpid()) -> UInt64 {
        let counter = state.withLock { state -> UInt64 in
            if state.process != process {
                var system = SystemRandomNumberGenerator()
                state = (process, system.next())
            }
            state.counter &+= 0x9E37_79B9_7F4A_7C15
            return state.counter
        }
        // SplitMix64's output function.
        var mixed = counter
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return (mixed ^ (mixed >> 31)) & 0xFFFF_FFFF_FFFF
    }
}
