import Foundation

/// Apple's `ubiquityIdentityToken`: an opaque value that stands for "the cloud this process is
/// signed in to". Equal tokens mean the same configured root; a different token means the user
/// configured another root (Apple: signed in to another account), and then an app drops what it
/// cached about the old container. `nil` (from ``UbiquityAccount/identityToken``) means signed
/// out. Compare tokens with `==`; store them with `Codable`. The text inside is a digest of the
/// root folder's path: do not parse it.
public struct UbiquityIdentityToken: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The opaque text of the token.
    public let rawValue: String

    /// A token from its text (as stored by `Codable`, or read from `description`).
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The token of the root folder `root`.
    init(root: URL) {
        let bytes = Array(("clouddocuments-ubiquity:" + root.standardizedFileURL.path).utf8)
        // Two FNV-1a 64-bit digests with different offsets: 128 bits, stable across processes
        // and releases (unlike `Hasher`, which is seeded per process).
        func fnv(_ offset: UInt64) -> UInt64 {
            bytes.reduce(offset) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
        }
        let high = fnv(0xcbf2_9ce4_8422_2325), low = fnv(0x8422_2325_cbf2_9ce4)
        rawValue = String(high, radix: 16) + "-" + String(low, radix: 16)
    }

    public var description: String { rawValue }
}

extension UbiquityAccount {
    /// Apple's `FileManager.ubiquityIdentityToken`: the token of the configured root, or `nil`
    /// when signed out (no root configured, or the configuration cannot be read). Cheap (one
    /// `stat` of the configuration file); any thread.
    ///
    /// To hear when it changes, keep an ``beginObservingIdentityChanges()`` observation and
    /// observe ``identityDidChangeNotification``.
    public var identityToken: UbiquityIdentityToken? {
        guard let root = (try? configuration())?.root else { return nil }
        return UbiquityIdentityToken(root: root)
    }
}
