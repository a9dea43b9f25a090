import Foundation
import Ubiquity

/// `kv get|set|remove|list|watch`: the key-value store.
enum KeyValueCommands {
    static let usage = ""

    static func run(_ command: String, _ arguments: [String]) async throws -> Int32? {
        nil
    }
}
