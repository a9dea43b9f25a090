import Foundation
import Ubiquity

/// The commands and their dispatch. Exit codes: 0 success, 1 failure, 2 usage error.
///
/// Each family of commands lives in a file of its own (`ContainerCommands`, `QueryCommands`,
/// `KeyValueCommands`); each returns `nil` for a command that is not its own.
enum CloudDocs {
    /// Every command's usage entry, in the order the full usage lists them.
    static let usageEntries = ContainerCommands.usageEntries + OnDemandCommands.usageEntries + QueryCommands.usageEntries
        + KeyValueCommands.usageEntries + AgentCommands.usageEntries

    static let usage = (["usage: clouddocs <command> [arguments]", "       clouddocs help | --help | -h", ""]
        + usageEntries.flatMap(\.lines)
        + ["", "The containers live under the root set in ~/.config/clouddocuments/ubiquity.conf",
           "(`root = /path`, `container = IDENTIFIER`) or by CLOUDDOCUMENTS_UBIQUITY_ROOT and",
           "CLOUDDOCUMENTS_UBIQUITY_CONTAINERS; see Docs/Ubiquity.md."]).joined(separator: "\n")

    static func run(_ arguments: [String]) async -> Int32 {
        guard let command = arguments.first else {
            // No command at all: the whole usage, which is what the user needs.
            FileHandle.standardError.write(Data((usage + "\n").utf8))
            return 2
        }
        if ["help", "--help", "-h"].contains(command) {
            print(usage)
            return 0
        }
        let rest = Array(arguments.dropFirst())
        do {
            if let status = try await ContainerCommands.run(command, rest) { return status }
            if let status = try await OnDemandCommands.run(command, rest) { return status }
            if let status = try await QueryCommands.run(command, rest) { return status }
            if let status = try await KeyValueCommands.run(command, rest) { return status }
            if let status = try await AgentCommands.run(command, rest) { return status }
            return usageError(CommandLineUsageError("unknown command “\(command)”", command: nil))
        } catch let error as CommandLineUsageError {
            return usageError(error)
        } catch {
            FileHandle.standardError.write(Data("clouddocs: error: \(describe(error))\n".utf8))
            return 1
        }
    }

    /// One line for an error: its localized description, which every error of this package fills.
    static func describe(_ error: any Error) -> String {
        (error as? LocalizedError)?.errorDescription ?? "\(error)"
    }

    /// The error, then the one usage line of its command (or, for a command that has none, how to
    /// see them all), on standard error; exit status 2.
    static func usageError(_ error: CommandLineUsageError) -> Int32 {
        let line: String
        if let command = error.command, let entry = usageEntries.entry(for: command) {
            line = entry.usageLine
        } else if error.command == "kv" {
            line = "usage: clouddocs kv get|set|remove|list|watch … (`clouddocs help` shows each)"
        } else if error.command == "agent" {
            line = "usage: clouddocs agent status|pause|resume|sync-now|approve-deletions … (`clouddocs help` shows each)"
        } else {
            line = "usage: clouddocs <command> [arguments] (`clouddocs help` lists the commands)"
        }
        FileHandle.standardError.write(Data("clouddocs: \(error.message)\n\(line)\n".utf8))
        return 2
    }
}

/// Thrown by a command whose arguments are wrong: printed with the command's usage line, exit
/// status 2.
struct CommandLineUsageError: Error {
    let message: String
    /// The command whose usage line to print (`status`, `kv set`, …); nil for none.
    let command: String?

    init(_ message: String, command: String?) {
        self.message = message
        self.command = command
    }
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
