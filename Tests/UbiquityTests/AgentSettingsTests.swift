import Foundation
import Testing
import TestSupport
@testable import Ubiquity

/// The sync agent's keys in `ubiquity.conf` and its password rules.
@Suite("Agent settings in ubiquity.conf")
struct AgentSettingsTests {
    @Test("the agent's keys are read and the others still work")
    func keysAreRead() throws {
        let text = """
        provider = agent
        root = /srv/cloud
        container = com.example.notes
        server = https://cloud.example.com/dav/Apps
        user = ada
        password-file = /home/ada/.config/clouddocuments/password
        poll-interval = 2.5
        insecure-http = allow
        hold-deletions-over-share = 0.25
        hold-deletions-over-count = 7
        """
        let configuration = try UbiquityConfiguration.parse(text, path: "t.conf")
        #expect(configuration.provider == .agent)
        #expect(configuration.agent.server == URL(string: "https://cloud.example.com/dav/Apps"))
        #expect(configuration.agent.user == "ada")
        #expect(configuration.agent.passwordFile?.path == "/home/ada/.config/clouddocuments/password")
        #expect(configuration.agent.pollInterval == 2.5)
        #expect(configuration.agent.allowsInsecureHTTP)
        #expect(configuration.agent.holdDeletionsOverShare == 0.25)
        #expect(configuration.agent.holdDeletionsOverCount == 7)
    }

    @Test("bad agent values name the line and never echo a password",
          arguments: [("server = ftp://x/y", "http or https"), ("server = https://ada:secret@x/y", "password file"),
                      ("poll-interval = 0", "between"), ("insecure-http = maybe", "allow"),
                      ("hold-deletions-over-share = 2", "between 0 and 1"), ("password-file = relative", "absolute")])
    func badValues(_ line: String, _ expected: String) {
        #expect {
            _ = try UbiquityConfiguration.parse("provider = agent\n" + line, path: "t.conf")
        } throws: { error in
            guard case .configurationInvalid(let path, let number, let reason) = error as? UbiquityError else { return false }
            return path == "t.conf" && number == 2 && reason.contains(expected) && !reason.contains("secret")
        }
    }

    @Test("the password comes from the environment first, else from a file only its owner can read")
    func passwordSources() throws {
        try Scratch.with("agent-password") { folder in
            let file = folder.appending(path: "password")
            try Data("s3cret\nignored\n".utf8).write(to: file)
            let settings = AgentSettings(passwordFile: file)
            chmod(file.path, 0o644)
            #expect(throws: UbiquityError.self) { _ = try settings.password(environment: [:]) }
            do {
                _ = try settings.password(environment: [:])
            } catch {
                #expect(!"\(error)".contains("s3cret"))
            }
            chmod(file.path, 0o600)
            #expect(try settings.password(environment: [:]) == "s3cret")
            #expect(try settings.password(environment: [AgentSettings.passwordEnvironmentKey: "fromenv"]) == "fromenv")
            #expect(try AgentSettings().password(environment: [:]) == nil)
        }
    }

    @Test("the server can be set by the environment")
    func serverFromEnvironment() throws {
        try Scratch.with("agent-env") { folder in
            let config = folder.appending(path: "ubiquity.conf")
            try Data("provider = agent\nroot = \(folder.path)\n".utf8).write(to: config)
            let configuration = try UbiquityConfiguration.load(environment: [
                UbiquityConfiguration.EnvironmentKey.configFile: config.path,
                AgentSettings.serverEnvironmentKey: "http://127.0.0.1:18080/dav",
            ])
            #expect(configuration.agent.server?.absoluteString == "http://127.0.0.1:18080/dav")
        }
    }
}
