// Worker commands for the move tests (Tests/UbiquityTests/InterruptedMoveTests.swift):
//
//   move-and-pause <true|false> <source> <destination>
//        moves <source> into (`true`) or out of (`false`) the cloud of the shared account
//        (configured by this process's environment) and, if the move copies across file
//        systems, stops it in the middle of the first file of more than one chunk: prints
//        "COPYING <temporary item><TAB><file><TAB><bytes written>" and waits there until standard
//        input ends (the parent kills it with SIGKILL before that). Prints "MOVED" when the move
//        completed without stopping (same file system, or only small files).
import Foundation
import Ubiquity

let moveWorkerCommands: [String: WorkerCommand] = [
    "move-and-pause": moveAndPause,
]

@MainActor
private func moveAndPause(_ arguments: [String]) async throws {
    guard arguments.count == 3, let flag = Bool(arguments[0]) else {
        throw WorkerUsage("move-and-pause <true|false> <source> <destination>")
    }
    CrossFileSystemMoveHooks.afterFirstChunk.withLock {
        $0 = { progress in
            guard progress.bytesWritten < progress.fileSize else { return }
            say("COPYING \(progress.temporaryItem)\t\(progress.file)\t\(progress.bytesWritten)")
            while readLine() != nil {}
            // Never finish the move: the parent meant to kill it here.
            exit(3)
        }
    }
    try await UbiquityAccount.shared.setUbiquitous(flag, itemAt: URL(fileURLWithPath: arguments[1]),
                                                  destinationURL: URL(fileURLWithPath: arguments[2]))
    say("MOVED")
}
