import Foundation
import SystemSupport

/// The persistent identifier of the conflict version that a sync tool's conflict copy stands for,
/// as a string (`FileVersion.PersistentIdentifier.rawValue`; the change monitor puts it — as
/// ``SyncToolRules`` gives it — into the `FileVersionReference` of its version messages, so both
/// agree).
///
/// The identifier is derived from the copy's name, the only thing about a copy that is stable across
/// processes and restarts: `conflict-copy:` followed by the name, where `%` is written `%25` and
/// each byte that is not valid UTF-8 `%XX`. It is therefore always valid text (no NUL, unlike a
/// lossless path string) and never a UUID, the identifiers of stored versions.
package enum ConflictCopyIdentifier {
    private static let prefix = "conflict-copy:"

    /// The identifier of the conflict version for the copy named `name` (one file name, a lossless
    /// path string).
    package static func identifier(forCopyNamed name: String) -> String {
        var text = prefix
        var escaping = false
        for scalar in name.unicodeScalars {
            if escaping {
                text += String(format: "%%%02X", scalar.value)
                escaping = false
            } else if scalar.value == 0 {
                escaping = true
            } else if scalar == "%" {
                text += "%25"
            } else {
                text.unicodeScalars.append(scalar)
            }
        }
        return text
    }

    /// The copy's name (a lossless path string) in an identifier made by
    /// ``identifier(forCopyNamed:)``, or nil when `identifier` is not such an identifier.
    package static func copyName(in identifier: String) -> String? {
        guard identifier.hasPrefix(prefix) else { return nil }
        let encoded = Array(identifier.utf8.dropFirst(prefix.utf8.count))
        var bytes: [UInt8] = []
        var index = 0
        while index < encoded.count {
            let byte = encoded[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < encoded.count,
                      let value = UInt8(String(decoding: encoded[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
                index += 3
            } else {
                bytes.append(byte)
                index += 1
            }
        }
        guard !bytes.isEmpty, !bytes.contains(0), !bytes.contains(UInt8(ascii: "/")) else { return nil }
        return PathBytes.string(fromBytes: bytes)
    }
}

extension SyncConflictNamingOptions {
    /// ``thisMachine``, looked up once per process: the options with which both the version
    /// queries and the change monitor recognise conflict copies, so they always agree.
    package static let local = SyncConflictNamingOptions.thisMachine
}
