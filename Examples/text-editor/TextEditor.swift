import ExampleDocuments
import Foundation

/// The commands and their dispatch. Exit codes: 0 success, 1 failure, 2 usage error.
enum TextEditor {
    static let usage = """
        usage: text-editor <command> <file> [arguments]
               text-editor help | --help | -h

          new <file> [text]             create a new text document (fails if the file exists)
          show <file>                   print the text
          append <file> <text>          append text (use $'...' for newlines) and save
          replace <file> <old> <new>    replace every occurrence and save; prints the count
          undo <file>                   demonstrate undo and redo (ends unchanged: nothing is saved)
          info <file>                   name, type, size, lines, line endings, state, modified
          watch <file> [--changes N]    keep the document open and print every change another
                                        process makes, and moves and deletions of the file (stop
                                        with Ctrl-C, after N changes, or when it is deleted)
          conflicts <file>              list the unresolved conflict versions: number, date,
                                        computer, size, first line that differs
          resolve <file> --keep current|N
                                        resolve every conflict, keeping the file as it is or
                                        replacing it with conflict version N (as listed)
        """

    static func run(_ arguments: [String]) async -> Int32 {
        if let first = arguments.first, ["help", "--help", "-h"].contains(first) {
            print(usage)
            return 0
        }
        guard arguments.count >= 2 else { return usageError(arguments.isEmpty ? nil : "missing the file argument") }
        let command = arguments[0]
        // URL(fileURLWithPath: "") is the working folder: an empty name would act on that.
        guard !arguments[1].isEmpty else { return usageError("the file name is empty") }
        let url = URL(fileURLWithPath: arguments[1])
        let rest = Array(arguments.dropFirst(2))
        do {
            switch command {
            case "new": try await Commands.new(url, text: rest.first ?? "")
            case "show": try await Commands.show(url)
            case "append":
                guard let text = rest.first else { return usageError("append needs the text to add") }
                try await Commands.append(url, text: text)
            case "replace":
                guard rest.count == 2 else { return usageError("replace needs the old and the new text") }
                try await Commands.replace(url, old: rest[0], new: rest[1])
            case "undo": try await Commands.undoDemo(url)
            case "info": try await Commands.info(url)
            case "watch":
                var limit: Int?
                if let flag = rest.firstIndex(of: "--changes") {
                    guard flag + 1 < rest.count, let count = Int(rest[flag + 1]), count > 0 else {
                        return usageError("--changes needs a positive number")
                    }
                    limit = count
                }
                try await Commands.watch(url, changes: limit)
            case "conflicts": try ConflictCommands.list(url)
            case "resolve":
                guard rest.count == 2, rest[0] == "--keep", let keep = ConflictVersions.Keep(argument: rest[1]) else {
                    return usageError("resolve needs --keep current or --keep N (a conflict version number from 1)")
                }
                try ConflictCommands.resolve(url, keep: keep)
            default:
                return usageError("unknown command “\(command)”")
            }
            return 0
        } catch {
            FileHandle.standardError.write(Data("text-editor: error: \(Commands.describe(error))\n".utf8))
            return 1
        }
    }

    private static func usageError(_ message: String?) -> Int32 {
        var text = ""
        if let message { text += "text-editor: \(message)\n" }
        FileHandle.standardError.write(Data((text + usage + "\n").utf8))
        return 2
    }
}
