import Foundation
import Testing
@testable import FileCoordination

/// `ResolvedURLMemo`, the fast route's per-thread memory of the last URL it resolved: it answers
/// only for the same bytes, the same caches and registry, and while nothing was invalidated.
@Suite("Resolved URL memo")
struct ResolvedURLMemoTests {
    private let caches = PathCaches()
    private let packages = PackageExtensions()

    private func remember(_ url: URL, as path: String, package: String? = nil) {
        ResolvedURLMemo.shared.store(url, caches: caches, packages: packages,
                                     generation: .init(caches: caches, packages: packages), itemPath: path, package: package)
    }

    @Test func theSameURLIsAnsweredFromMemory() {
        let url = URL(fileURLWithPath: "/tmp/memo-tests/a.txt")
        remember(url, as: "/tmp/memo-tests/a.txt", package: "/tmp")
        let found = ResolvedURLMemo.shared.lookup(URL(fileURLWithPath: "/tmp/memo-tests/a.txt"), caches: caches, packages: packages)
        #expect(found?.itemPath == "/tmp/memo-tests/a.txt")
        #expect(found?.package == "/tmp")
    }

    @Test func anotherURLOrAnotherRuntimeIsNotAnswered() {
        let url = URL(fileURLWithPath: "/tmp/memo-tests/a.txt")
        remember(url, as: "/tmp/memo-tests/a.txt")
        #expect(ResolvedURLMemo.shared.lookup(URL(fileURLWithPath: "/tmp/memo-tests/b.txt"), caches: caches, packages: packages) == nil)
        #expect(ResolvedURLMemo.shared.lookup(url, caches: PathCaches(), packages: packages) == nil)
        #expect(ResolvedURLMemo.shared.lookup(url, caches: caches, packages: PackageExtensions()) == nil)
    }

    /// "é" composed and decomposed are equal Swift strings but different names on Linux.
    @Test func canonicallyEquivalentButDifferentBytesAreNotAnswered() {
        let composed = URL(fileURLWithPath: "/tmp/memo-tests/caf\u{E9}.txt")
        let decomposed = URL(fileURLWithPath: "/tmp/memo-tests/cafe\u{301}.txt")
        remember(composed, as: "/tmp/memo-tests/caf\u{E9}.txt")
        #expect(ResolvedURLMemo.shared.lookup(decomposed, caches: caches, packages: packages) == nil)
    }

    @Test func anInvalidationOrAPackageChangeForgetsIt() {
        let url = URL(fileURLWithPath: "/tmp/memo-tests/a.txt")
        remember(url, as: "/tmp/memo-tests/a.txt")
        CanonicalPath.invalidate(under: "/nowhere/memo-tests", in: caches)
        #expect(ResolvedURLMemo.shared.lookup(url, caches: caches, packages: packages) == nil)
        remember(url, as: "/tmp/memo-tests/a.txt")
        packages.register("memotestpkg")
        #expect(ResolvedURLMemo.shared.lookup(url, caches: caches, packages: packages) == nil)
    }

    /// A resolution made while the caches were invalidated is stale at once.
    @Test func aResolutionOlderThanTheLastInvalidationIsNotAnswered() {
        let url = URL(fileURLWithPath: "/tmp/memo-tests/a.txt")
        let before = ResolvedURLMemo.Generations(caches: caches, packages: packages)
        caches.generation.advance()
        ResolvedURLMemo.shared.store(url, caches: caches, packages: packages, generation: before,
                                     itemPath: "/tmp/memo-tests/a.txt", package: nil)
        #expect(ResolvedURLMemo.shared.lookup(url, caches: caches, packages: packages) == nil)
    }

    /// Only absolute `file:///` URLs without a base are remembered.
    @Test func relativeURLsAreNotRemembered() {
        let relative = URL(fileURLWithPath: "a.txt", relativeTo: URL(fileURLWithPath: "/tmp/memo-tests/", isDirectory: true))
        remember(relative, as: "/tmp/memo-tests/a.txt")
        #expect(ResolvedURLMemo.shared.lookup(relative, caches: caches, packages: packages) == nil)
    }
}
