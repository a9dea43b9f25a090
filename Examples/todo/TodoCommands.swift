import FoundationCompatibility
import Foundation
import ManagedDocuments

/// The commands, on the main actor (where the document and its context live).
@MainActor
enum TodoCommands {
    /// Runs the command line; returns the exit status (0 done, 1 failed, 2 usage).
    static func run(_ arguments: [String]) async -> Int32 {
        if arguments.contains(where: { $0 == "--help" || $0 == "-h" || $0 == "help" }) {
            print(Options.usage)
            return 0
        }
        let options: Options
        do { options = try Options(arguments, environment: ProcessInfo.processInfo.environment) } catch {
            printError("todo: \(error.message)\n\(Options.usage)")
            return 2
        }
        try? FileManager.default.createDirectory(at: options.document.deletingLastPathComponent(), withIntermediateDirectories: true)
        let document = ManagedDocument(fileURL: options.document, managedObjectModel: TodoModel.schema)
        document.persistentStoreOptions = options.storeOptions
        // watch: imports as each log arrives (inotify), with the default fallback poll;
        // the other commands import once, when opening.
        document.importInterval = options.command == "watch" ? .seconds(5) : nil
        let failures = NotificationCenter.default.addObserver(forName: .ManagedDocumentImportDidFail, object: document, queue: nil) { note in
            let error = note.userInfo?[ManagedDocumentErrorKey] as? ManagedStoreError
            printError("todo: \(error?.errorDescription ?? "an import failed")")
        }
        defer { NotificationCenter.default.removeObserver(failures) }
        do {
            try await document.openOrCreate()
            let status = try await run(options, on: document)
            try await document.closeThrowing()
            return status
        } catch {
            printError("todo: \((error as? any LocalizedError)?.errorDescription ?? "\(error)")")
            _ = await document.close()
            return 1
        }
    }

    private static func run(_ options: Options, on document: ManagedDocument) async throws -> Int32 {
        let context = document.managedObjectContext
        switch options.command {
        case "add":
            let title = options.arguments.joined(separator: " ")
            guard !title.isEmpty else {
                printError("todo: add needs a title")
                return 2
            }
            let id = try context.insert("Task", ["title": .string(title), "created": .date(Date())])
            try await document.saveThrowing(to: document.fileURL, for: .forOverwriting)
            print("added \(TodoModel.shortID(id))  \(title)")
        case "done":
            guard let prefix = options.arguments.first?.lowercased(), !prefix.isEmpty else {
                printError("todo: done needs a task id (as `todo list` shows it)")
                return 2
            }
            let matches = try context.fetch(FetchRequest(entityName: "Task")).filter { TodoModel.shortID($0.objectID).hasPrefix(prefix) }
            guard matches.count == 1, let task = matches.first else {
                printError("todo: \(matches.isEmpty ? "no task" : "\(matches.count) tasks") with an id starting with \(prefix)")
                return 1
            }
            try context.update(task.objectID, ["done": true])
            try await document.saveThrowing(to: document.fileURL, for: .forOverwriting)
            print("done \(TodoModel.shortID(task.objectID))  \(task["title"].stringValue ?? "")")
        case "list":
            try list(context)
        case "watch":
            try list(context)
            print("watching")
            flushOutput()
            let observer = NotificationCenter.default.addObserver(forName: .NSPersistentStoreDidImportUbiquitousContentChanges,
                                                                  object: document, queue: nil) { note in
                let inserted = note.userInfo?[NSInsertedObjectsKey] as? Set<ManagedObjectID> ?? []
                let updated = note.userInfo?[NSUpdatedObjectsKey] as? Set<ManagedObjectID> ?? []
                let deleted = note.userInfo?[NSDeletedObjectsKey] as? Set<ManagedObjectID> ?? []
                MainActor.assumeIsolated { report(context, inserted: inserted, updated: updated, deleted: deleted) }
            }
            defer { NotificationCenter.default.removeObserver(observer) }
            // Until interrupted (SIGINT, SIGTERM end the process).
            while true { try await Task.sleep(for: .seconds(3600)) }
        default:
            printError("todo: unknown command \(options.command)\n\(Options.usage)")
            return 2
        }
        return 0
    }

    private static func list(_ context: ManagedObjectContext) throws {
        let tasks = try context.fetch(FetchRequest(entityName: "Task", sortDescriptors: [RecordSortDescriptor(key: "created")]))
        for task in tasks { print(TodoModel.line(task)) }
    }

    private static func report(_ context: ManagedObjectContext, inserted: Set<ManagedObjectID>, updated: Set<ManagedObjectID>,
                               deleted: Set<ManagedObjectID>) {
        for (mark, ids) in [("+", inserted), ("~", updated)] {
            for id in ids.sorted() {
                if let record = try? context.existingRecord(with: id) { print("\(mark) \(TodoModel.line(record))") }
            }
        }
        for id in deleted.sorted() { print("- \(TodoModel.shortID(id))") }
        flushOutput()
    }

    /// Writes what `print` buffered (a pipe is block-buffered: `watch`'s reader needs each line now).
    static func flushOutput() { fflush(nil) }

    nonisolated static func printError(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}
