import Foundation
import Ubiquity

/// `ls`: a live metadata query.
enum QueryCommands {
    static let usage = ""

    static func run(_ command: String, _ arguments: [String]) async throws -> Int32? {
        nil
    }
}
