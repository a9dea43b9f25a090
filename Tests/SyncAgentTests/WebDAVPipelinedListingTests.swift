import Foundation
import Testing
import TestSupport
@testable import SyncAgent

// A poll asks for every folder in one go (`RemoteStore.listFolders`): over plain http the
// requests go pipelined on one connection from one thread. Apache answers 100 requests on a
// connection and then closes it: the requests it did not answer go again on a fresh one, and
// every folder's answer is the one a request of its own gets.

@Suite("WebDAV: folders listed in one go, pipelined", .timeLimit(.minutes(2 * Polling.deadlineScale)))
struct WebDAVPipelinedListingTests {
    @Test("130 folders (more than Apache answers on one connection) and a missing one: the same answers as one request each",
          .enabled(if: RequiredTool.apache2.isInstalledOrRequired, Comment(rawValue: RequiredTool.apache2.missingMessage)))
    func manyFolders() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let store = try WebDAVTesting.store(server.baseURL)
            // Made on the server's disk directly (set-up only); files a minute old, so their tags
            // are strong and settled.
            let folders = try Self.makeFolders(130, on: server, modified: Date(timeIntervalSinceNow: -60))
            let missing = try WebDAVTesting.path("no such folder")
            let requests = (folders + [missing]).map { RemoteFolderRequest(path: $0, token: nil) }

            let answers = try await store.listFolders(requests)
            #expect(answers.count == folders.count + 1)
            guard case .failure(.notFound(missing))? = answers[missing] else {
                Issue.record("the missing folder: \(String(describing: answers[missing]))")
                return
            }
            var tokens: [RemotePath: RemoteListingToken] = [:]
            for folder in folders {
                let alone = try await store.listWithFolder(folder)
                guard case .success(.listed(let entry, let items, let token))? = answers[folder] else {
                    Issue.record("/\(folder): \(String(describing: answers[folder]))")
                    continue
                }
                #expect(entry?.path == folder)
                #expect(items.map(\.path) == alone.items.map(\.path), "/\(folder)")
                #expect(items.map(\.tag) == alone.items.map(\.tag), "/\(folder)")
                #expect(items.map(\.size) == alone.items.map(\.size), "/\(folder)")
                tokens[folder] = token
            }
            #expect(tokens.count == folders.count)
            #expect(folders.dropFirst().allSatisfy { folder in
                if case .success(.listed(_, let items, _))? = answers[folder] { return items.count == Self.fileCount(folder) }
                return false
            })
            // Asked again with the tokens: the files' folders answer as before. (The root's own
            // entry may still be settling, as it was made less than a second ago.)
            let again = try await store.listFolders(folders.dropFirst().map { RemoteFolderRequest(path: $0, token: tokens[$0]) })
            for folder in folders.dropFirst() {
                guard case .success(.unchanged)? = again[folder] else {
                    Issue.record("/\(folder) was read again: \(String(describing: again[folder]))")
                    continue
                }
            }
        }
    }

    @Test("WsgiDAV answers pipelined listings as it answers one request each",
          .enabled(if: RequiredTool.wsgidav.isInstalledOrRequired, Comment(rawValue: RequiredTool.wsgidav.missingMessage)))
    func wsgidav() async throws {
        try await Self.listingsMatch(on: .wsgidav)
    }

    @Test("rclone serve webdav answers pipelined listings as it answers one request each",
          .enabled(if: RequiredTool.rclone.isInstalledOrRequired, Comment(rawValue: RequiredTool.rclone.missingMessage)))
    func rclone() async throws {
        try await Self.listingsMatch(on: .rclone)
    }

    /// 40 folders and a missing one, listed in one go on a server of `kind`, against one request each.
    static func listingsMatch(on kind: WebDAVServer.Kind) async throws {
        try await WebDAVServer.with(kind) { server in
            let store = try WebDAVTesting.store(server.baseURL)
            let folders = try Self.makeFolders(40, on: server)
            let missing = try WebDAVTesting.path("no such folder")
            let answers = try await store.listFolders((folders + [missing]).map { RemoteFolderRequest(path: $0, token: nil) })
            #expect(answers.count == folders.count + 1)
            if case .failure(.notFound(missing))? = answers[missing] {} else {
                Issue.record("\(kind), the missing folder: \(String(describing: answers[missing]))")
            }
            for folder in folders {
                let alone = try await store.listWithFolder(folder)
                guard case .success(.listed(_, let items, _))? = answers[folder] else {
                    Issue.record("\(kind) /\(folder): \(String(describing: answers[folder]))")
                    continue
                }
                #expect(items.map(\.path) == alone.items.map(\.path), "\(kind) /\(folder)")
                #expect(items.map(\.size) == alone.items.map(\.size), "\(kind) /\(folder)")
                if folder != .root { #expect(items.count == Self.fileCount(folder), "\(kind) /\(folder)") }
            }
        }
    }

    /// Makes `count` folders `folder NNN` on the server's disk directly (set-up only), each with
    /// NNN mod 4 files, dated `modified` when given; returns the root and their paths.
    static func makeFolders(_ count: Int, on server: WebDAVServer, modified: Date? = nil) throws -> [RemotePath] {
        var folders: [RemotePath] = [.root]
        for index in 0..<count {
            let name = String(format: "folder %03d", index)
            let folder = server.dataURL.appending(path: name, directoryHint: .isDirectory)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for file in 0..<(index % 4) {
                let url = folder.appending(path: "file \(file).txt")
                try Data("content \(index).\(file)".utf8).write(to: url)
                if let modified { try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: url.path) }
            }
            if let modified { try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: folder.path) }
            folders.append(try WebDAVTesting.path(name))
        }
        return folders
    }

    /// How many files the test put in `folder` (`folder NNN` holds NNN mod 4).
    static func fileCount(_ folder: RemotePath) -> Int {
        Int(folder.name.dropFirst("folder ".count)).map { $0 % 4 } ?? -1
    }

    @Test("nothing to list: no request")
    func empty() async throws {
        let store = try WebDAVTesting.store(try #require(URL(string: "http://127.0.0.1:9/")))
        let answers = try await store.listFolders([])
        #expect(answers.isEmpty)
    }
}
