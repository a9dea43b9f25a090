import Foundation
import Testing
@testable import FileCoordination

/// `PresenterDirectory` answers who presents at, above or inside a path: this process's
/// presenters first, then those a look-up found in other processes; `RemoteFound` reads one
/// look-up around any path.
@Suite("Presenter directory")
struct PresenterDirectoryTests {
    private static func elsewhere(_ number: UInt, _ path: String) -> PresenterAddress {
        PresenterAddress(id: PresenterID(process: PresenterID.thisProcess &+ 1, number: number), path: path)
    }

    @Test("one look-up is read around any path, in the order it answered; stale answers are in nothing")
    func aLookUpIsReadAroundAnyPath() {
        let package = Self.elsewhere(1, "/a/doc.pkg")
        let item = Self.elsewhere(2, "/a/doc.pkg/page")
        let folder = Self.elsewhere(3, "/a")
        let inside = Self.elsewhere(4, "/a/doc.pkg/page/part")
        let other = Self.elsewhere(5, "/a/doc.pkg/other")
        let stale = Self.elsewhere(6, "/b")
        let found = RemoteFound([package, item, folder, inside, other, stale], item: "/a/doc.pkg/page")
        #expect(found.presenters(at: "/a/doc.pkg/page") == [item])
        #expect(found.presenters(above: "/a/doc.pkg/page") == [package, folder], "nearest first, as answered")
        #expect(found.presenters(inside: "/a/doc.pkg/page") == [inside])
        // The same look-up, read around the package that contains the item.
        #expect(found.presenters(at: "/a/doc.pkg") == [package])
        #expect(found.presenters(inside: "/a/doc.pkg") == [item, inside, other])
        // Around the path it was made for.
        #expect(found.item == [item] && found.ancestors == [package, folder] && found.inside == [inside])
        #expect(RemoteFound().presenters(above: "/a/doc.pkg/page").isEmpty)
    }

    @Test("this process's presenters come first, then those found elsewhere")
    func thisProcessFirst() throws {
        let scratch = try Scratch()
        let runtime = CoordinationRuntime(lockDirectoryPath: scratch.url.path + "/locks")
        let folderURL = try scratch.directory("folder")
        let fileURL = scratch.file("folder/doc.txt", contents: "x")
        let folder = CanonicalPath.of(folderURL, in: runtime.paths)
        let file = CanonicalPath.of(fileURL, in: runtime.paths)
        let part = file + "/part"  // a path only the other process's answer names
        let presenters = [RecordingPresenter(fileURL), RecordingPresenter(folderURL), RecordingPresenter(scratch.url)]
        presenters.forEach(runtime.addFilePresenter)
        defer { presenters.forEach(runtime.removeFilePresenter) }
        let here = presenters.map(PresenterID.init)
        let directory = PresenterDirectory(runtime: runtime)
        let found = RemoteFound([Self.elsewhere(1, folder), Self.elsewhere(2, file), Self.elsewhere(3, part)], item: file)

        #expect(directory.presenters(at: file, elsewhere: found).map(\.id) == [here[0], found.item[0].id])
        #expect(directory.presenters(above: file, elsewhere: found).map(\.id) == [here[1], here[2], found.ancestors[0].id],
                "this process's nearest first, then the other process's")
        #expect(directory.presenters(inside: folder, elsewhere: found).map(\.id) == [here[0], found.item[0].id, found.inside[0].id])
        #expect(directory.presenters(at: file).map(\.id) == [here[0]], "without a look-up, this process's alone")
    }

    @Test("the cheap checks: nobody here, nobody elsewhere (remote presenters off), and nothing looked up")
    func cheapChecks() throws {
        let scratch = try Scratch()
        let runtime = CoordinationRuntime(lockDirectoryPath: scratch.url.path + "/locks")
        let fileURL = scratch.file("doc.txt", contents: "x")
        let file = CanonicalPath.of(fileURL, in: runtime.paths)
        let directory = PresenterDirectory(runtime: runtime)
        #expect(directory.nobodyHere && !directory.mayConcern(file))
        #expect(!directory.mayPresentElsewhere(at: file) && !directory.mayPresentElsewhere(inside: scratch.url.path))
        #expect(directory.processesThatMayPresent(at: file, inside: true) == 0)
        let context = WaitContext(timeout: Polling.hangGuard, token: CancellationToken())
        #expect(try directory.lookUpElsewhere(at: file, inside: true, context: context).addresses.isEmpty)
        #expect(directory.foundElsewhereBefore(at: file).addresses.isEmpty)
        let presenter = RecordingPresenter(fileURL)
        runtime.addFilePresenter(presenter)
        defer { runtime.removeFilePresenter(presenter) }
        #expect(!directory.nobodyHere && directory.mayConcern(file))
    }
}
