import FoundationCompatibility
import Foundation
import ManagedDocuments
import Ubiquity

/// The command line: `todo [--document PATH] [--container DIR] [--device ID] COMMAND [ARGUMENTS]`.
struct Options {
    var document: URL
    var container: URL?
    var device: String?
    var command: String
    var arguments: [String]

    static let usage = """
        usage: todo [--document PATH] [--container DIR] [--device ID] COMMAND
          add TITLE…    add a task
          done ID       mark the task whose id starts with ID as done
          list          list the tasks (after importing other devices' changes)
          watch         list, then print every change other devices make, until interrupted
        --document   the to-do document (default $XDG_DATA_HOME/clouddocuments-todo/Todos.mdoc)
        --container  the synced folder the change logs go in (a Syncthing folder, a ubiquity
                     container; default: the default ubiquity container, see `clouddocs containers`)
        --device     this device's identifier (default: Ubiquity's DeviceIdentifier)
        """

    struct UsageError: Error { let message: String }

    init(_ arguments: [String], environment: [String: String]) throws(UsageError) {
        var rest = arguments[...]
        var document: URL?
        while let first = rest.first, first.hasPrefix("--") {
            rest = rest.dropFirst()
            guard let value = rest.first else { throw UsageError(message: "\(first) needs a value") }
            rest = rest.dropFirst()
            switch first {
            case "--document": document = URL(fileURLWithPath: value)
            case "--container": container = URL(fileURLWithPath: value, isDirectory: true)
            case "--device": device = value
            default: throw UsageError(message: "unknown option \(first)")
            }
        }
        guard let command = rest.first else { throw UsageError(message: "no command") }
        self.command = command
        self.arguments = Array(rest.dropFirst())
        if let document {
            self.document = document
        } else {
            let data = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory() + "/.local/share"
            self.document = URL(fileURLWithPath: data).appending(path: "clouddocuments-todo/Todos.mdoc")
        }
    }

    /// The store's options: the content name `Todos`, the container, the device.
    var storeOptions: [String: any Sendable] {
        var options: [String: any Sendable] = [NSPersistentStoreUbiquitousContentNameKey: "Todos"]
        if let container { options[NSPersistentStoreUbiquitousContentURLKey] = container }
        if let device { options[ManagedDocumentDeviceIdentifierKey] = device }
        return options
    }
}
