import Foundation
import Glibc
import Testing

/// Whether this process may mount a small tmpfs (root with CAP_SYS_ADMIN): the cross-file-system
/// and full-disk tests need one and are skipped with ``TmpfsAvailability/unavailableMessage``
/// where `mount(2)` is refused.
enum TmpfsAvailability {
    /// Tried once, on a scratch folder.
    static let isAvailable: Bool = {
        let probe = "/tmp/ubiquity-mountprobe-\(UUID().uuidString)"
        guard mkdir(probe, 0o700) == 0 else { return false }
        defer { rmdir(probe) }
        guard mount("tmpfs", probe, "tmpfs", 0, "size=16k") == 0 else { return false }
        _ = umount2(probe, Int32(MNT_DETACH))
        return true
    }()

    static let unavailableMessage: Comment =
        "mounting a tmpfs needs root with CAP_SYS_ADMIN (mount(2) was refused here): the cross-file-system and full-disk cases cannot be made"
}
