// clouddocsd: the CloudDocuments sync agent. Syncs every configured ubiquity container with a
// WebDAV collection, both ways, and takes part in file coordination like Apple's daemon.
// Configuration: ~/.config/clouddocuments/ubiquity.conf (see Docs/SyncAgent.md). Runs until
// SIGTERM or SIGINT; exit status 0 after a stop, 1 when it cannot start.
import Dispatch
import Foundation
import SyncAgent

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("--help") || arguments.contains("-h") {
    print("""
    usage: clouddocsd
    Syncs the containers of ubiquity.conf (provider = agent, server = …, user = …, password-file = …)
    with a WebDAV server until SIGTERM. `clouddocs agent status` shows what it does. See Docs/SyncAgent.md.
    """)
    exit(0)
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("clouddocsd: \(message)\n".utf8))
    exit(1)
}

// The agent's own coordinated writes land downloads: they never wait for one.
FilesOnDemand.disableInThisProcess()
let environment = ProcessInfo.processInfo.environment
let configuration: UbiquityConfiguration
do { configuration = try UbiquityConfiguration.load(environment: environment) } catch { fail(error.localizedDescription) }
let agent: Agent
do { agent = try Agent(configuration: configuration, environment: environment) } catch { fail(error.description) }

let work = Task {
    do {
        try await agent.run()
    } catch {
        fail("\(error)")
    }
}
// SIGTERM / SIGINT cancel the work: each engine finishes the step in hand (journalled) and stops.
let signalSources = installStopSignals { work.cancel() }
FileHandle.standardError.write(Data("clouddocsd: serving \(configuration.containerIdentifiers.joined(separator: ", ")) under \(configuration.root?.path ?? "")\n".utf8))
await work.value
withExtendedLifetime(signalSources) {}
exit(0)
