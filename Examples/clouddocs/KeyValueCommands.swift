import Foundation
import Ubiquity

/// `kv get|set|remove|list|watch`: the key-value store (`KeyValueStore`, Apple's
/// `NSUbiquitousKeyValueStore`) of a container, for this device (`CLOUDDOCUMENTS_DEVICE_ID`
/// overrides the device identifier).
enum KeyValueCommands {
    static let usageEntries: [UsageEntry] = [
        UsageEntry("kv get", "kv get <key> [--container ID]", "print a key's value (exit 1 when it has none)"),
        UsageEntry("kv set", "kv set <key> <value> [--type string|int|double|bool|data-base64|json] [--container ID]",
                   "set a key (default type string) and synchronize"),
        UsageEntry("kv remove", "kv remove <key> [--container ID]", "remove a key and synchronize"),
        UsageEntry("kv list", "kv list [--container ID]", "every key: key, type and value, tab-separated"),
        UsageEntry("kv watch", "kv watch [--changes N] [--container ID]",
                   "print `watching<tab>FOLDER` once watching, then each change",
                   "made by another process or device as one line,",
                   "`REASON<tab>KEY<tab>KEY…`, until standard input ends or N",
                   "changes were printed"),
    ]

    static func run(_ command: String, _ arguments: [String]) async throws -> Int32? {
        guard command == "kv" else { return nil }
        var arguments = arguments
        guard !arguments.isEmpty else { throw CommandLineUsageError("kv needs a subcommand: get, set, remove, list or watch", command: "kv") }
        let subcommand = arguments.removeFirst()
        let command = "kv " + subcommand
        guard usageEntries.entry(for: command) != nil else {
            throw CommandLineUsageError("unknown kv subcommand “\(subcommand)”", command: "kv")
        }
        let container = try option("--container", in: &arguments, command)
        let store = KeyValueStore(containerIdentifier: container)
        switch subcommand {
        case "get":
            let key = try single(arguments, command)
            guard let value = store.value(forKey: key) else {
                FileHandle.standardError.write(Data("clouddocs: no value for “\(key)”\n".utf8))
                return 1
            }
            printLine(render(value))
            return 0
        case "set":
            let type = try option("--type", in: &arguments, command) ?? "string"
            guard arguments.count == 2 else { throw CommandLineUsageError("kv set takes a key and a value, not \(arguments.count) argument\(arguments.count == 1 ? "" : "s")", command: command) }
            try store.set(try parse(arguments[1], type: type, command: command), forKey: arguments[0])
            try store.synchronize()
            return 0
        case "remove":
            try store.removeValue(forKey: try single(arguments, command))
            try store.synchronize()
            return 0
        case "list":
            guard arguments.isEmpty else { throw CommandLineUsageError("kv list takes no arguments", command: command) }
            for (key, value) in store.dictionaryRepresentation.sorted(by: { $0.key < $1.key }) {
                printLine("\(key)\t\(value.typeName)\t\(render(value))")
            }
            return 0
        case "watch":
            let limit = try option("--changes", in: &arguments, command).map { text in
                guard let count = Int(text), count > 0 else { throw CommandLineUsageError("--changes needs a positive number", command: command) }
                return count
            }
            guard arguments.isEmpty else { throw CommandLineUsageError("kv watch takes no arguments but options", command: command) }
            return await watch(store, limit: limit)
        default:
            throw CommandLineUsageError("unknown kv subcommand “\(subcommand)”", command: "kv")
        }
    }

    /// Prints each change as one line until standard input ends or `limit` changes were printed.
    private static func watch(_ store: KeyValueStore, limit: Int?) async -> Int32 {
        let changes = store.changes
        // Reading the folder again now picks up anything written before the watch started.
        printLine("watching\t\(store.folderURL?.path ?? "(no container: signed out)")")
        Thread.detachNewThread {
            var byte: UInt8 = 0
            while read(0, &byte, 1) > 0 {}
            exit(0)
        }
        var printed = 0
        for await change in changes {
            printLine(([change.reason.description] + change.changedKeys).joined(separator: "\t"))
            printed += 1
            if let limit, printed >= limit { break }
        }
        return 0
    }

    private static func single(_ arguments: [String], _ command: String) throws -> String {
        guard arguments.count == 1 else { throw CommandLineUsageError("\(command) takes one key, not \(arguments.count)", command: command) }
        return arguments[0]
    }

    /// Removes `name VALUE` from `arguments` and returns VALUE (nil when absent).
    private static func option(_ name: String, in arguments: inout [String], _ command: String) throws -> String? {
        guard let index = arguments.firstIndex(of: name) else { return nil }
        guard index + 1 < arguments.count else { throw CommandLineUsageError("\(name) needs a value", command: command) }
        let value = arguments[index + 1]
        arguments.removeSubrange(index...(index + 1))
        return value
    }

    /// The value `text` means as `type`.
    static func parse(_ text: String, type: String, command: String) throws -> KeyValueStoreValue {
        let invalid = CommandLineUsageError("“\(text)” is not a valid \(type)", command: command)
        switch type {
        case "string": return .string(text)
        case "int":
            guard let value = Int64(text) else { throw invalid }
            return .integer(value)
        case "double":
            guard let value = Double(text) else { throw invalid }
            return .double(value)
        case "bool":
            switch text.lowercased() {
            case "true", "yes", "1": return .bool(true)
            case "false", "no", "0": return .bool(false)
            default: throw invalid
            }
        case "data-base64":
            guard let data = Data(base64Encoded: text) else { throw invalid }
            return .data(data)
        case "json":
            guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) else { throw invalid }
            return try KeyValueStoreValue(propertyList: object)
        default:
            throw CommandLineUsageError("unknown type “\(type)”: use string, int, double, bool, data-base64 or json", command: command)
        }
    }

    /// How `get` and `list` print a value: strings as they are, numbers and Booleans as literals,
    /// data in base64, dates in ISO 8601, arrays and dictionaries as JSON (data and dates inside
    /// them as those strings).
    static func render(_ value: KeyValueStoreValue) -> String {
        switch value {
        case .string(let text): return text
        case .array, .dictionary:
            let object = json(value)
            guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed]) else { return "\(value)" }
            return String(decoding: data, as: UTF8.self)
        default: return "\(json(value))"
        }
    }

    private static func json(_ value: KeyValueStoreValue) -> Any {
        switch value {
        case .string(let text): return text
        case .integer(let number): return number
        case .double(let number): return number
        case .bool(let flag): return flag
        case .data(let data): return data.base64EncodedString()
        case .date(let date): return date.formatted(.iso8601)
        case .array(let elements): return elements.map(json)
        case .dictionary(let entries): return entries.mapValues(json)
        }
    }
}
