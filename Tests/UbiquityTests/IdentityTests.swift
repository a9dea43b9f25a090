import Foundation
import Testing
import TestSupport
@testable import Ubiquity

/// `ubiquityIdentityToken` and the identity-did-change notification.
@Suite("Identity token and identity-did-change notification")
struct IdentityTests {
    @Test("the token is equal for the same root, differs for another, and is nil when signed out")
    func tokens() {
        let a = UbiquityAccount(configuration: UbiquityConfiguration(root: URL(fileURLWithPath: "/srv/cloud"), containerIdentifiers: ["x"]))
        let a2 = UbiquityAccount(configuration: UbiquityConfiguration(root: URL(fileURLWithPath: "/srv/cloud/"), containerIdentifiers: ["y"], provider: .none))
        let b = UbiquityAccount(configuration: UbiquityConfiguration(root: URL(fileURLWithPath: "/srv/other"), containerIdentifiers: ["x"]))
        let out = UbiquityAccount(configuration: UbiquityConfiguration(root: nil, containerIdentifiers: ["x"]))
        #expect(a.identityToken != nil)
        #expect(a.identityToken == a2.identityToken)
        #expect(a.identityToken != b.identityToken)
        #expect(out.identityToken == nil)
        #expect(!(a.identityToken?.rawValue.contains("srv") ?? true), "opaque: the path is not in it")
        let encoded = try? JSONEncoder().encode(a.identityToken)
        #expect(encoded.flatMap { try? JSONDecoder().decode(UbiquityIdentityToken.self, from: $0) } == a.identityToken)
    }

    /// Counts the account's notifications and signals each.
    /// Counts `account`'s identity-did-change notifications while it watches its configuration.
    final class Counter: Sendable {
        let count = Locked(0)
        let arrived = DispatchSemaphore(value: 0)
        private let observation: UbiquityIdentityObservation
        private nonisolated(unsafe) let observer: any NSObjectProtocol  // written once, in init

        init(observing account: UbiquityAccount) {
            let count = self.count, arrived = self.arrived
            observer = NotificationCenter.default.addObserver(forName: UbiquityAccount.identityDidChangeNotification, object: account, queue: nil) { _ in
                count.withLock { $0 += 1 }
                arrived.signal()
            }
            observation = account.beginObservingIdentityChanges()
        }

        func wait() -> Bool { arrived.wait(timeout: .now() + 30) == .success }

        func stop() {
            observation.cancel()
            NotificationCenter.default.removeObserver(observer)
        }
    }

    @Test("a configuration file that is a symbolic link (dotfiles): editing the file it points to posts the notification")
    func symbolicLinkConfiguration() async throws {
        let scratch = try Scratch("ubiquity-identity-link")
        defer { scratch.remove() }
        let dotfiles = try scratch.directory("dotfiles"), config = try scratch.directory("config")
        let target = dotfiles.appending(path: "ubiquity.conf"), file = config.appending(path: "ubiquity.conf")
        try "root = /srv/one\ncontainer = a\n".write(to: target, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(at: file, withDestinationURL: target)
        let account = UbiquityAccount(environment: ["CLOUDDOCUMENTS_UBIQUITY_CONFIG": file.path])
        let first = account.identityToken
        #expect(first != nil)
        let counter = Counter(observing: account)
        defer { counter.stop() }
        try await onOwnThread {
            try "root = /srv/two\ncontainer = a\n".write(to: target, atomically: true, encoding: .utf8)
            #expect(counter.wait())
            #expect(account.identityToken != first && account.identityToken != nil)
        }
    }

    @Test("creating, editing and removing the configuration file post the notification (an edit that changes nothing does not); the folder may not exist at first")
    func notification() async throws {
        let scratch = try Scratch("ubiquity-identity")
        defer { scratch.remove() }
        let base = scratch.url
        let file = base.appending(path: "config/clouddocuments/ubiquity.conf")  // its folders do not exist yet
        let account = UbiquityAccount(environment: ["CLOUDDOCUMENTS_UBIQUITY_CONFIG": file.path])
        #expect(account.identityToken == nil)
        let counter = Counter(observing: account)
        defer { counter.stop() }

        try await onOwnThread {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try "root = /srv/one\ncontainer = a\n".write(to: file, atomically: true, encoding: .utf8)
            #expect(counter.wait())
            let first = account.identityToken
            #expect(first != nil)

            // A comment changes nothing: no notification; the root change after it posts one.
            try "root = /srv/one   # same\ncontainer = a\n".write(to: file, atomically: true, encoding: .utf8)
            try "root = /srv/two\ncontainer = a\n".write(to: file, atomically: true, encoding: .utf8)
            #expect(counter.wait())
            #expect(counter.count.withLock { $0 } == 2)
            #expect(account.identityToken != first && account.identityToken != nil)

            try FileManager.default.removeItem(at: file)
            #expect(counter.wait())
            #expect(account.identityToken == nil)
        }
    }

    @Test("another process watching the same configuration hears the change and computes the same token")
    func otherProcess() async throws {
        let scratch = try Scratch("ubiquity-identity")
        defer { scratch.remove() }
        let base = scratch.url
        let file = base.appending(path: "ubiquity.conf")
        var environment = ProcessInfo.processInfo.environment
        for key in ["CLOUDDOCUMENTS_UBIQUITY_ROOT", "CLOUDDOCUMENTS_UBIQUITY_CONTAINERS", "CLOUDDOCUMENTS_UBIQUITY_PROVIDER"] {
            environment[key] = nil
        }
        environment["CLOUDDOCUMENTS_UBIQUITY_CONFIG"] = file.path
        let child = try ChildProcess(["identity-watch"], environment: environment, helper: "UbiquityTestHelper")
        defer { child.closeInput(); child.waitForExit() }
        #expect(child.expect("WATCHING") == "WATCHING nil")
        try "root = \(base.path)/cloud\n".write(to: file, atomically: true, encoding: .utf8)
        let line = try await onOwnThread { child.expect("CHANGED") }
        let mine = UbiquityAccount(environment: ["CLOUDDOCUMENTS_UBIQUITY_CONFIG": file.path]).identityToken
        #expect(line == "CHANGED \(mine?.rawValue ?? "-")")
    }
}
