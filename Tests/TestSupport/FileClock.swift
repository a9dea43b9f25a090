import Foundation
import Glibc

/// The clock the kernel stamps modification times with. It is coarse (one tick of a few
/// milliseconds), so two files written one right after the other often get the *same* mtime — and
/// sync tools decide conflicts by mtime (Syncthing: the newer wins; equal times fall back to the
/// device IDs). Tests that need the second write to be the newer one wait for the clock first.
public enum FileClock {
    /// Returns once a file written now gets a modification time later than `url`'s (checked by
    /// writing a probe file in the system temp folder; tmpfs and ext4 take their times from the same
    /// kernel clock).
    public static func waitUntilAfterModification(of url: URL, timeout: Duration = Polling.hangGuard) async throws {
        guard let reference = modificationTime(url.path) else {
            throw FixtureFailure(description: "no modification time for \(url.path)")
        }
        let probe = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("clouddocs-fileclock-\(UUID().uuidString)")
        defer { unlink(probe.path) }
        try await Polling.until("the file clock to pass \(url.lastPathComponent)'s mtime", timeout: timeout,
                                interval: .milliseconds(1)) {
            try Data().write(to: probe)
            guard let now = modificationTime(probe.path) else { return false }
            return now.tv_sec > reference.tv_sec || (now.tv_sec == reference.tv_sec && now.tv_nsec > reference.tv_nsec)
        }
    }

    private static func modificationTime(_ path: String) -> timespec? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mtim
    }
}
