import Foundation
import TestSupport
import Glibc
import Testing

/// `text-editor` run as a process, as a new user runs it.
@Suite("text-editor command line")
struct TextEditorCommandLineTests {
    @Test("help, --help and -h print the usage and succeed", arguments: ["help", "--help", "-h"])
    func help(_ flag: String) async throws {
        try Scratch.with { folder in
            let run = try runExampleTool("text-editor", [flag], in: folder)
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.output.hasPrefix("usage: text-editor"), "\(run.output)")
            #expect(run.errors.isEmpty, "\(run.errors)")
        }
    }

    @Test("an empty file name is a usage error, not the working folder")
    func emptyFileName() async throws {
        try Scratch.with { folder in
            let run = try runExampleTool("text-editor", ["new", ""], in: folder)
            #expect(run.status == 2)
            #expect(run.errors.contains("the file name is empty"), "\(run.errors)")
            #expect(!run.errors.contains("already exists"), "\(run.errors)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        }
    }

    @Test("show refuses a plain folder before reading what is inside it")
    func folderRefused() async throws {
        try Scratch.with { folder in
            let inside = folder.appendingPathComponent("library", isDirectory: true)
            try FileManager.default.createDirectory(at: inside, withIntermediateDirectories: true)
            // Items a package read stops at (with a message about them): a dangling symbolic link
            // and a FIFO. The refusal must come first, and be about the folder.
            try FileManager.default.createSymbolicLink(atPath: inside.appendingPathComponent("link").path,
                                                       withDestinationPath: "/nonexistent/target")
            #expect(mkfifo(inside.appendingPathComponent("fifo").path, 0o600) == 0)
            for command in ["show", "info", "append"] {
                let arguments = command == "append" ? [command, "library", "x"] : [command, "library"]
                let run = try runExampleTool("text-editor", arguments, in: folder)
                #expect(run.status == 1, "\(command)")
                #expect(run.errors.contains("is a folder, not a text file"), "\(command): \(run.errors)")
                #expect(!run.errors.contains("symbolic link"), "\(command): \(run.errors)")
                #expect(!run.errors.contains("FIFO"), "\(command): \(run.errors)")
            }
        }
    }

    @Test("info counts lines on bytes: CRLF endings are not counted twice",
          arguments: [("one\r\ntwo\r\n", 2, "CRLF"), ("one\ntwo", 2, "LF"), ("a\r\nb\nc", 3, "mixed LF/CRLF"),
                      ("", 0, "none"), ("solo", 1, "none"), ("\r\n", 1, "CRLF")])
    func lineCount(_ text: String, _ lines: Int, _ endings: String) async throws {
        try Scratch.with { folder in
            try Data(text.utf8).write(to: folder.appendingPathComponent("t.txt"))
            let run = try runExampleTool("text-editor", ["info", "t.txt"], in: folder)
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.output.contains("Lines:         \(lines)\n"), "\(text.debugDescription): \(run.output)")
            #expect(run.output.contains("Line endings:  \(endings)\n"), "\(text.debugDescription): \(run.output)")
        }
    }
}
