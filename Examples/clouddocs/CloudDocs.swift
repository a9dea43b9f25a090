import Foundation
import Ubiquity

/// The commands and their dispatch. Exit codes: 0 success, 1 failure, 2 usage error.
///
/// Each family of commands lives in a file of its own (`ContainerCommands`, `QueryCommands`,
/// `KeyValueCommands`); each returns `nil` for a command that is not its own.
enum CloudDocs {
    static let usage = """
        usage: clouddocs <command> [arguments]
               clouddocs help | --help | -h

        \(ContainerCommands.usage)
        \(QueryCommands.usage)
        \(KeyValueCommands.usage)

        The containers live under the root set in ~/.config/clouddocuments/ubiquity.conf
        (`root = /path`, `container = IDENTIFIER`) or by CLOUDDOCUMENTS_UBIQUITY_ROOT and
        CLOUDDOCUMENTS_UBIQUITY_CONTAINERS; see Docs/Ubiquity.md.
        """

    static func run(_ arguments: [String]) async -> Int32 {
        guard let command = arguments.first else { return usageError(nil) }
        if ["help", "--help", "-h"].contains(command) {
            print(usage)
            return 0
        }
        let rest = Array(arguments.dropFirst())
        do {
            if let status = try await ContainerCommands.run(command, rest) { return status }
            if let status = try await QueryCommands.run(command, rest) { return status }
            if let status = try await KeyValueCommands.run(command, rest) { return status }
            return usageError("unknown command “\(command)”")
        } catch let error as CommandLineUsageError {
            return usageError(error.message)
        } catch {
            FileHandle.standardError.write(Data("clouddocs: error: \(describe(error))\n".utf8))
            return 1
        }
    }

    /// One line for an error: its localized description, which every error of this package fills.
    static func describe(_ error: any Error) -> String {
        (error as? LocalizedError)?.errorDescription ?? "\(error)"
    }

    static func usageError(_ message: String?) -> Int32 {
        var text = ""
        if let message { text += "clouddocs: \(message)\n" }
        FileHandle.standardError.write(Data((text + usage + "\n").utf8))
        return 2
    }
}

/// Thrown by a command whose arguments are wrong: printed with the usage, exit status 2.
struct CommandLineUsageError: Error {
    let message: String
}

/// Writes one line to standard output at once (unbuffered), for output that other programs read
/// as it comes (`ls`, `kv watch`).
func printLine(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(1, buffer.baseAddress! + offset, buffer.count - offset)
            if written <= 0 { if errno == EINTR { continue }; return }
            offset += written
        }
    }
}
