import FileCoordination
import Foundation
import SyncAgent
import Testing
import TestSupport

// The WebDAV store against a real Apache mod_dav_fs with `FileETag Digest` (strong tags): the main
// server of the sync agent's tests.

@Suite("WebDAV store: round trips against Apache mod_dav (FileETag Digest)", .timeLimit(.minutes(2 * Polling.deadlineScale)),
       .enabled(if: RequiredTool.apache2.isInstalledOrRequired, Comment(rawValue: RequiredTool.apache2.missingMessage)))
struct WebDAVRoundTripTests {
    @Test("upload, list, download, move, delete and make folders, names with spaces, UTF-8, %, #, ? included")
    func roundTrips() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let store = try WebDAVTesting.store(server.baseURL)
            let scratch = try Scratch("webdav-roundtrip")
            defer { scratch.remove() }
            let names = ["plain.txt", "with space.txt", "Größe ü é 文書.txt", "100% sure.txt", "hash#tag.txt",
                         "what?.txt", "semi;colon&amp=.txt", "+plus ~tilde'quote\".txt"]
            let folder = try WebDAVTesting.path("Docs and more/Ünter # ?")
            try await store.makeFolder(try #require(folder.parent))
            try await store.makeFolder(folder)
            try await store.makeFolder(folder)   // an existing folder is not an error
            for name in names {
                let path = try #require(folder.appending(name))
                try await WebDAVTesting.put(store, "contents of \(name)", at: path, in: scratch, condition: .mustNotExist)
                // On disk under the same name: the encoding went through as one component.
                let onDisk = server.dataURL.appendingPathComponent("Docs and more/Ünter # ?/\(name)")
                #expect(WebDAVTesting.text(onDisk) == "contents of \(name)")
            }
            let listed = try await store.list(folder)
            #expect(listed.map(\.path.name) == names.sorted { [$0].lexicographicallyPrecedes([$1]) })
            #expect(listed.allSatisfy { !$0.isFolder && $0.tag?.isWeak == false && $0.size != nil && $0.modified != nil })
            for item in listed {
                #expect(try await WebDAVTesting.get(store, item.path, in: scratch) == "contents of \(item.path.name)")
                #expect(item.size == Int64("contents of \(item.path.name)".utf8.count))
            }
            let top = try await store.list(.root)
            #expect(top.map(\.path.description) == ["Docs and more"])
            #expect(top.first?.isFolder == true && top.first?.size == nil)
            let rootItem = try await store.item(at: .root)
            #expect(rootItem?.isFolder == true && rootItem?.path == .root)

            // Move to a new name (also into another folder), then delete.
            let source = try #require(folder.appending("with space.txt"))
            let target = try WebDAVTesting.path("Docs and more/moved 100%.txt")
            let tag = try #require(try await store.item(at: source)?.tag)
            try await store.move(source, to: target, condition: .mustMatch(tag))
            #expect(try await store.item(at: source) == nil)
            #expect(try await WebDAVTesting.get(store, target, in: scratch) == "contents of with space.txt")
            let movedTag = try #require(try await store.item(at: target)?.tag)
            try await store.delete(target, condition: .mustMatch(movedTag))
            #expect(try await store.item(at: target) == nil)
            let failure1 = await WebDAVTesting.error { try await store.delete(target, condition: .unconditional) }
            #expect(failure1 == .notFound(target))

            // A folder is deleted with what it holds; listing a missing folder is notFound.
            try await store.delete(folder, condition: .unconditional)
            let failure2 = await WebDAVTesting.error { try await store.list(folder) }
            #expect(failure2 == .notFound(folder))
            #expect(try await store.item(at: folder) == nil)
            // A missing parent: notFound (409).
            let orphan = try WebDAVTesting.path("no such folder/child")
            let failure3 = await WebDAVTesting.error { try await store.makeFolder(orphan) }
            #expect(failure3 == .notFound(orphan))
            let failure4 = await WebDAVTesting.error {
                try await WebDAVTesting.put(store, "x", at: orphan, in: scratch, condition: .mustNotExist)
            }
            #expect(failure4 == .notFound(orphan))
            // An empty file.
            let empty = try WebDAVTesting.path("empty")
            try await WebDAVTesting.put(store, "", at: empty, in: scratch, condition: .mustNotExist)
            #expect(try await WebDAVTesting.get(store, empty, in: scratch) == "")
            #expect(try await store.item(at: empty)?.size == 0)
        }
    }

    @Test("writes are conditional: If-None-Match: * and If-Match with a stale tag answer 412 and change nothing")
    func conditionsHold() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let store = try WebDAVTesting.store(server.baseURL)
            let scratch = try Scratch("webdav-conditions")
            defer { scratch.remove() }
            let path = try WebDAVTesting.path("doc.txt")
            try await WebDAVTesting.put(store, "version 1", at: path, in: scratch, condition: .mustNotExist)
            let first = try #require(try await store.item(at: path)?.tag)
            #expect(!first.isWeak)
            // Create over an existing item.
            let failure5 = await WebDAVTesting.error { try await WebDAVTesting.put(store, "intruder", at: path, in: scratch, condition: .mustNotExist) }
            #expect(failure5 == .preconditionFailed(path))
            // Update with the right tag, then with the now stale one.
            try await WebDAVTesting.put(store, "version 2", at: path, in: scratch, condition: .mustMatch(first))
            let second = try #require(try await store.item(at: path)?.tag)
            #expect(second != first)
            let failure6 = await WebDAVTesting.error {
                try await WebDAVTesting.put(store, "lost update", at: path, in: scratch, condition: .mustMatch(first))
            }
            #expect(failure6 == .preconditionFailed(path))
            let failure7 = await WebDAVTesting.error { try await store.delete(path, condition: .mustMatch(first)) }
            #expect(failure7 == .preconditionFailed(path))
            let other = try WebDAVTesting.path("other.txt")
            let failure8 = await WebDAVTesting.error { try await store.move(path, to: other, condition: .mustMatch(first)) }
            #expect(failure8 == .preconditionFailed(path))
            #expect(try await WebDAVTesting.get(store, path, in: scratch) == "version 2")
            // A move onto an existing item is refused (Overwrite: F), naming the destination.
            try await WebDAVTesting.put(store, "other", at: other, in: scratch, condition: .mustNotExist)
            let failure9 = await WebDAVTesting.error { try await store.move(path, to: other, condition: .mustMatch(second)) }
            #expect(failure9 == .preconditionFailed(other))
            #expect(try await WebDAVTesting.get(store, other, in: scratch) == "other")
            // A weak tag is never sent.
            let weak = try #require(RemoteTag(parsing: "W/\"abc\""))
            guard case .refused = await WebDAVTesting.error({
                try await WebDAVTesting.put(store, "x", at: path, in: scratch, condition: .mustMatch(weak))
            }) else {
                Issue.record("a weak tag was not refused")
                return
            }
        }
    }

    @Test("a 10 MiB file streams both ways with progress, and comes back byte for byte")
    func largeFileStreams() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let store = try WebDAVTesting.store(server.baseURL)
            let scratch = try Scratch("webdav-large")
            defer { scratch.remove() }
            let size = 10 << 20
            var generator = SplitMix64(seed: 42)
            var bytes = [UInt8](repeating: 0, count: size)
            for index in stride(from: 0, to: size, by: 8) {
                withUnsafeBytes(of: generator.next()) { word in
                    for offset in 0..<8 where index + offset < size { bytes[index + offset] = word[offset] }
                }
            }
            let source = scratch.url.appendingPathComponent("large.bin")
            try Data(bytes).write(to: source)
            let path = try WebDAVTesting.path("large.bin")
            let sent = Locked<[Int64]>([])
            _ = try await store.upload(source, to: path, condition: .mustNotExist) { done, total in
                sent.withLock { $0.append(done) }
                #expect(total == Int64(size) || total <= 0)
            }
            let sentSteps = sent.withLock { $0 }
            #expect(sentSteps.last == Int64(size))
            #expect(sentSteps == sentSteps.sorted())
            #expect(try await store.item(at: path)?.size == Int64(size))

            let destination = scratch.url.appendingPathComponent("back.bin")
            let received = Locked<[(Int64, Int64?)]>([])
            let tag = try await store.download(path, to: destination) { done, total in
                received.withLock { $0.append((done, total)) }
            }
            let steps = received.withLock { $0 }
            #expect(steps.count > 1)   // it arrived in pieces, each written as it came
            #expect(steps.last?.0 == Int64(size) && steps.last?.1 == Int64(size))
            let listedTag = try await store.item(at: path)?.tag
            #expect(tag != nil && tag == listedTag)
            #expect(try Data(contentsOf: destination) == Data(bytes))
        }
    }

    @Test("a download of a missing file is notFound and creates no local file")
    func missingDownload() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let store = try WebDAVTesting.store(server.baseURL)
            let scratch = try Scratch("webdav-missing")
            defer { scratch.remove() }
            let path = try WebDAVTesting.path("nothing here.txt")
            let destination = scratch.url.appendingPathComponent("never")
            let failure10 = await WebDAVTesting.error { try await store.download(path, to: destination, progress: { _, _ in }) }
            #expect(failure10 == .notFound(path))
            #expect(!FileManager.default.fileExists(atPath: destination.path))
            let missingSource = scratch.url.appendingPathComponent("no source")
            guard case .localFile = await WebDAVTesting.error({
                try await store.upload(missingSource, to: path, condition: .mustNotExist, progress: { _, _ in })
            }) else {
                Issue.record("a missing local source was not a localFile error")
                return
            }
        }
    }
}
