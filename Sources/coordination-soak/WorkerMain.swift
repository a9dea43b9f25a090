import Foundation

/// A worker process: sets up its context, does its role's work until the parent says stop, and
/// records the end.
enum WorkerMain {
    @MainActor
    static func run(_ arguments: [String]) async -> Int32 {
        let context: WorkerContext
        do {
            context = try WorkerContext(arguments: arguments)
        } catch {
            FileHandle.standardError.write(Data("coordination-soak worker: \(error)\n".utf8))
            return 2
        }
        context.startControlThreads()
        switch context.role {
        case .document:
            await DocumentWorker.run(context)
        case .appender:
            await context.readyAndWaitForGo()
            AppenderWorker.run(context)
        case .mover:
            await context.readyAndWaitForGo()
            MoverWorker.run(context)
        }
        context.finish()
        return 0
    }
}
