import Foundation
import FileCoordination
import Testing
import TestSupport
@testable import SyncAgent

/// Uploads read straight from the item (no snapshot copy) on an `http` server: the plain client
/// checks the file did not change between its first read and its last byte, and cuts the request
/// when it did, so a file rewritten in place while it is sent never lands torn on the server. The
/// rewrite happens inside the upload's own progress callback (after the first piece went out,
/// before the next is read): deterministic, no timing.
@Suite("Uploads read in place never land torn (Apache mod_dav)", .serialized, .timeLimit(.minutes(3 * Polling.deadlineScale)),
       .enabled(if: RequiredTool.apache2.isInstalledOrRequired, Comment(rawValue: RequiredTool.apache2.missingMessage)))
struct UploadInPlaceTests {
    static let size = 4 << 20

    /// `size` bytes that depend on `seed`.
    static func contents(seed: UInt64) -> Data {
        var generator = SplitMix64(seed: seed)
        var data = Data(count: size)
        data.withUnsafeMutableBytes { bytes in
            for index in stride(from: 0, to: size, by: 8) {
                bytes.storeBytes(of: generator.next(), toByteOffset: index, as: UInt64.self)
            }
        }
        return data
    }

    /// Rewrites `url` in place (same size, same inode), as a program that does not save by
    /// replacing the file would.
    static func rewriteInPlace(_ url: URL, with data: Data) {
        guard let handle = try? FileHandle(forWritingTo: url) else { return }
        try? handle.write(contentsOf: data)
        try? handle.close()
    }

    @Test("the plain client cuts a PUT whose file is rewritten in place while it is sent: nothing lands; unchanged, it lands whole")
    func clientCutsChangedFile() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let store = try WebDAVTesting.store(server.baseURL)
            #expect(store.checksFileBodiesWhileSending)
            let scratch = try Scratch("upload-in-place-client")
            defer { scratch.remove() }
            let source = scratch.url.appendingPathComponent("source")
            try Self.contents(seed: 1).write(to: source)
            let replacement = Self.contents(seed: 2)
            let path = try WebDAVTesting.path("torn.bin")
            let landed = server.dataURL.appendingPathComponent("torn.bin")
            let rewritten = Locked(false)
            await #expect(throws: RemoteStoreError.self) {
                _ = try await store.upload(source, to: path, condition: .mustNotExist) { done, _ in
                    guard done > 0, !rewritten.withLock({ $0 }) else { return }
                    rewritten.withLock { $0 = true }
                    Self.rewriteInPlace(source, with: replacement)
                }
            }
            #expect(rewritten.withLock { $0 })
            #expect(!FileManager.default.fileExists(atPath: landed.path), "a torn body landed")
            _ = try await store.upload(source, to: path, condition: .mustNotExist) { _, _ in }
            #expect(try Data(contentsOf: landed) == replacement)
        }
    }

    @Test("the engine's upload read in place: a file rewritten while it is sent is deferred and nothing lands; the next pass uploads the new bytes whole")
    func engineDefersChangedFile() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let scratch = try Scratch("upload-in-place-engine")
            defer { scratch.remove() }
            let store = try WebDAVStore(configuration: WebDAVConfiguration(baseURL: server.baseURL))
            _ = try await store.probe()
            let root = scratch.url.appending(path: "A")
            try FileManager.default.createDirectory(at: root.appending(path: TwoDevices.identifier), withIntermediateDirectories: true)
            let configuration = TwoDevices.configuration(root, SyncGuards(), .seconds(3600))
            let file = configuration.containerURL.appending(path: "big.bin")
            let original = Self.contents(seed: 3)
            try original.write(to: file)
            let replacement = Self.contents(seed: 4)
            let rewritten = Locked(false)
            let engine = try SyncEngine(configuration: configuration, store: store) { status in
                guard status.transfers.contains(where: { $0.path == "big.bin" && $0.isUpload && $0.bytesDone > 0 }),
                      !rewritten.withLock({ $0 }) else { return }
                rewritten.withLock { $0 = true }
                Self.rewriteInPlace(file, with: replacement)
            }
            let landed = server.dataURL.appendingPathComponent("big.bin")
            let first = await engine.syncOnce()
            #expect(rewritten.withLock { $0 })
            let deferred = first.failed.contains { failure in
                if case .deferred = failure.error { failure.step.path == "big.bin" } else { false }
            }
            if deferred {
                #expect(!FileManager.default.fileExists(atPath: landed.path), "a torn body landed")
            } else {
                // A file system with reflinks (Btrfs, XFS): the upload read a stable clone, whole.
                #expect(first.failed.isEmpty, "\(first.failed)")
                #expect(try Data(contentsOf: landed) == original)
            }
            // Left to the next pass, which sends the file as it is now, whole.
            let second = await engine.syncOnce()
            #expect(second.failed.isEmpty, "\(second.failed)")
            #expect(try Data(contentsOf: landed) == replacement)
            #expect(await engine.syncOnce().plan.steps.isEmpty)
        }
    }
}
