import FileCoordination
import Foundation
import Glibc
import Synchronization

/// New random record identifiers (UUID version 4) from the kernel's random generator
/// (`/dev/urandom`), drawn from a pool refilled 4 KiB at a time (one read per 256 identifiers):
/// Foundation's `UUID()` on Linux opens and reads `/dev/urandom` for each one, and
/// `SystemRandomNumberGenerator` makes one `getrandom` call per 8 bytes — either was a third of
/// the cost of an insert.
///
/// The pool lives in this process only (Swift programs start processes with `posix_spawn`,
/// never a bare `fork` that would copy it into a child).
package enum RandomIdentifier {
    /// The unused random words, behind a mutex (any thread may insert records).
    private static let pool = Locked(RandomPool())

    package static func make() -> UUID {
        let (high, low) = pool.withLock { $0.nextPair() }
        return uuid(high: high & ~0xF000 | 0x4000, low: low)  // version 4
    }

    /// The UUID whose 16 bytes are `high` then `low` (big-endian), with the RFC 4122 variant bits
    /// set in `low` (the caller sets the version in `high`).
    static func uuid(high: UInt64, low: UInt64) -> UUID {
        let low = low & ~(0xC000_0000_0000_0000 as UInt64) | 0x8000_0000_0000_0000  // RFC 4122 variant
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { raw in
            for index in 0..<8 {
                raw[index] = UInt8(truncatingIfNeeded: high >> (56 - 8 * index))
                raw[8 + index] = UInt8(truncatingIfNeeded: low >> (56 - 8 * index))
            }
        }
        return UUID(uuid: uuid)
    }
}

/// 512 random words, handed out in pairs and refilled with one read of `/dev/urandom` when used up.
struct RandomPool {
    private var words = [UInt64](repeating: 0, count: 512)
    private var next = 512

    mutating func nextPair() -> (UInt64, UInt64) {
        if next + 2 > words.count { refill() }
        defer { next += 2 }
        return (words[next], words[next + 1])
    }

    private mutating func refill() {
        let filled = words.withUnsafeMutableBytes { raw -> Bool in
            guard let base = raw.baseAddress else { return false }
            let descriptor = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return false }
            defer { close(descriptor) }
            var done = 0
            while done < raw.count {
                let count = read(descriptor, base + done, raw.count - done)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                done += count
            }
            return true
        }
        if !filled {
            // /dev/urandom unavailable (a chroot, a sandbox): the standard library's generator
            // (getrandom), slower but always there.
            var generator = SystemRandomNumberGenerator()
            for index in words.indices { words[index] = generator.next() }
        }
        next = 0
    }
}
