import Foundation
import Glibc
import Testing
import TestSupport
@testable import FileCoordination

/// Packages across processes: an access to an item inside a package concerns the presenters of
/// the package and of every item inside it, in other processes as in this one
/// (Docs/Coordination.md, *Who is told what*; Docs/RemotePresenters.md).
@Suite("Remote presenters: packages across processes", .serialized)
struct RemotePackageTests {
    static let packageExtension = "cdrpkg"

    /// A package `Doc.cdrpkg` holding `index.txt` and `other.txt`; one `remote-present` child
    /// presents the package, another `other.txt` (both know the extension, as this runtime does).
    private func withPresentedPackage(_ body: (_ setup: RemoteDeliveryTests.Setup, _ index: URL, _ package: ChildProcess,
                                               _ inside: ChildProcess) throws -> Void) throws {
        let setup = try RemoteDeliveryTests.Setup()
        setup.runtime.registerPackageExtension(Self.packageExtension)
        let package = setup.scratch.url.appendingPathComponent("Doc.\(Self.packageExtension)")
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: false)
        let index = package.appendingPathComponent("index.txt"), other = package.appendingPathComponent("other.txt")
        try Data("index".utf8).write(to: index)
        try Data("other".utf8).write(to: other)
        var environment = ProcessInfo.processInfo.environment
        environment[LockDirectory.environmentVariable] = setup.lockDirectory
        environment[RemotePresence.environmentVariable] = "1"
        let packageChild = try ChildProcess(["package-ext", Self.packageExtension, "remote-present", package.path], environment: environment)
        let insideChild = try ChildProcess(["package-ext", Self.packageExtension, "remote-present", other.path], environment: environment)
        #expect(packageChild.expect("PRESENTING") == "PRESENTING")
        #expect(insideChild.expect("PRESENTING") == "PRESENTING")
        defer {
            packageChild.closeInput(); insideChild.closeInput()
            packageChild.waitForExit(); insideChild.waitForExit()
        }
        try body(setup, index, packageChild, insideChild)
    }

    /// The child's lines up to and including `last`.
    private func lines(_ child: ChildProcess, through last: String) -> [String] {
        var lines: [String] = []
        while let line = child.readLine() {
            lines.append(line)
            if line == last { break }
        }
        return lines
    }

    @Test("a write of an item inside a package: the package's presenter and those of items inside it, in other processes, relinquish; the package's is told it changed")
    func writeInsideAPackage() throws {
        try withPresentedPackage { setup, index, package, inside in
            try setup.coordinator().coordinate(writingItemAt: index) { url in
                #expect(package.readLine() == "RELINQUISH-WRITER")
                #expect(inside.readLine() == "RELINQUISH-WRITER")
                try Data("new index".utf8).write(to: url)
            }
            let packageLines = lines(package, through: "REACQUIRE")
            #expect(packageLines.first == "DIDCHANGE", "\(packageLines)")
            #expect(packageLines.last == "REACQUIRE")
            #expect(inside.readLine() == "REACQUIRE")
        }
    }

    @Test("a read of an item inside a package asks the package's presenter and those of items inside it, in other processes, to save first")
    func readInsideAPackage() throws {
        try withPresentedPackage { setup, index, package, inside in
            try setup.coordinator().coordinate(readingItemAt: index) { _ in
                // Saves are asked before the read lock is taken, relinquishments once it is held.
                #expect(package.readLine() == "SAVE")
                #expect(package.readLine() == "RELINQUISH-READER")
                #expect(inside.readLine() == "SAVE")
                #expect(inside.readLine() == "RELINQUISH-READER")
            }
            #expect(package.readLine() == "REACQUIRE")
            #expect(inside.readLine() == "REACQUIRE")
        }
    }
}
