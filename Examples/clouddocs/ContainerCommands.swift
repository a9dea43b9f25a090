import Foundation
import Ubiquity

/// `containers`, `move-to-cloud`, `move-to-local`, `evict`, `download`, `status`, `conflicts`.
enum ContainerCommands {
    static let usage = """
          containers                    list the configured containers and their folders
        """

    static func run(_ command: String, _ arguments: [String]) async throws -> Int32? {
        switch command {
        case "containers":
            let account = UbiquityAccount.shared
            let configuration = try account.configuration()
            guard configuration.root != nil else { throw UbiquityError.notSignedIn }
            for container in account.configuredContainers() {
                printLine("\(container.identifier)\t\(container.url.path)")
            }
            return 0
        default:
            return nil
        }
    }
}
