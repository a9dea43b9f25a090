// Version-store commands of the test helper (see main.swift for the conventions).
//
//   add-version-and-wait <step> <item> <contents>   add <contents> as a version of <item> (in the
//                                                  store named by $CLOUDDOCUMENTS_VERSION_STORE);
//                                                  at <step> (contents-written, before-rename,
//                                                  after-rename) print "PAUSED <step>" and wait for
//                                                  a line on stdin (the parent may SIGKILL it
//                                                  instead); then finish and print "ADDED <id>"
//   add-version-and-wait remove <item>             (same, removing) remove the oldest other version
//                                                  of <item>, pausing at "moved-to-trash"; then
//                                                  print "REMOVED <id>"
@_spi(VersionStoreTesting) import CloudDocuments
import Foundation

/// Runs `add-version-and-wait`; `arguments` are the words after the command.
func runAddVersionAndWait(_ arguments: [String]) throws {
    if arguments.first == "remove", arguments.count == 2 {
        try removeOldestVersionAndWait(of: URL(fileURLWithPath: arguments[1]))
        return
    }
    guard arguments.count == 3, let step = VersionStoreTesting.Step(rawValue: arguments[0]) else {
        versionLine("usage: add-version-and-wait <step> <item> <contents>")
        exit(2)
    }
    VersionStoreTesting.setPauseHook { reached in
        guard reached == step else { return }
        versionLine("PAUSED \(reached.rawValue)")
        _ = readLine()
    }
    let version = try FileVersion.addOfItem(at: URL(fileURLWithPath: arguments[1]),
                                            withContentsOf: URL(fileURLWithPath: arguments[2]))
    versionLine("ADDED \(version.persistentIdentifier.rawValue)")
}

private func removeOldestVersionAndWait(of item: URL) throws {
    VersionStoreTesting.setPauseHook { reached in
        guard reached == .movedToTrash else { return }
        versionLine("PAUSED \(reached.rawValue)")
        _ = readLine()
    }
    guard let oldest = try FileVersion.otherVersionsOfItem(at: item).first else {
        versionLine("ERROR no version")
        exit(1)
    }
    try oldest.remove()
    versionLine("REMOVED \(oldest.persistentIdentifier.rawValue)")
}

private func versionLine(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBytes { _ = write(1, $0.baseAddress, $0.count) }
}
