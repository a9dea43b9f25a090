import Foundation
import Glibc

/// The one configuration of the process's shared ubiquity account (`UbiquityAccount.shared`,
/// which `FileManager.default.url(forUbiquityContainerIdentifier:)` and the other Apple-named
/// calls use) in the test process.
///
/// The shared account reads its environment once, when first used, and every test target runs in
/// one process — so every test that uses the shared account must go through this fixture, which
/// points `CLOUDDOCUMENTS_UBIQUITY_CONFIG` at a file of its own before anything reads it, and
/// writes the same fixed configuration there (idempotent, so suites of different targets may call
/// it at once): root `<folder>/cloud`, containers `com.example.notes` (the default) and
/// `com.example.other`, provider `none`. Tests must not change that file; tests about changing
/// configurations make their own `UbiquityAccount(environment:)`.
public enum SharedUbiquityFixture {
    /// The folder of this process's fixture (`/tmp/clouddocuments-ubiquity-<pid>`).
    public static let folder: URL = {
        let url = URL(fileURLWithPath: "/tmp/clouddocuments-ubiquity-\(getpid())", isDirectory: true)
        try? FileManager.default.createDirectory(at: url.appendingPathComponent("cloud"), withIntermediateDirectories: true)
        let file = url.appendingPathComponent("ubiquity.conf")
        let text = "root = \(url.path)/cloud\ncontainer = com.example.notes\ncontainer = com.example.other\nprovider = none\n"
        if (try? String(contentsOf: file, encoding: .utf8)) != text {
            try? text.write(to: file, atomically: true, encoding: .utf8)
        }
        setenv("CLOUDDOCUMENTS_UBIQUITY_CONFIG", file.path, 1)
        unsetenv("CLOUDDOCUMENTS_UBIQUITY_ROOT")
        unsetenv("CLOUDDOCUMENTS_UBIQUITY_CONTAINERS")
        unsetenv("CLOUDDOCUMENTS_UBIQUITY_PROVIDER")
        return url
    }()

    /// The root of the shared account's containers.
    public static var root: URL { folder.appendingPathComponent("cloud", isDirectory: true) }

    /// The default container's folder.
    public static var defaultContainer: URL { root.appendingPathComponent("com.example.notes", isDirectory: true) }

    /// A new, empty folder outside the containers, for "local" documents.
    public static func localFolder() throws -> URL {
        let url = folder.appendingPathComponent("local-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Call first in every test that uses the shared account (reading `folder` sets it up).
    public static func setUp() { _ = folder }
}
