import CloudDocuments
import ExampleDocuments
import Foundation

/// The image-tool program: dispatches to a ``Command`` and turns errors into messages and exit
/// statuses (0 success, 1 failure, 2 usage error).
enum ImageTool {
    static let usage = """
        usage: image-tool <command> [arguments]

          new <file> [--width W] [--height H] [--pattern gradient|checkerboard]
                  create a new image (default 64 × 48 gradient); the format comes from the
                  extension: .png, .ppm or .pgm
          info <file>
                  show format, size, file size, document state and type identifier
          grayscale <file> [--output OUT]
          invert <file> [--output OUT]
          rotate <file> <90|180|270|-90> [--output OUT]
          crop <file> <x> <y> <w> <h> [--output OUT]
                  edit the image in place, or save the result to OUT
          convert <in> <out>
                  save a copy in the format of <out>'s extension (replacing <out>)
          show <file> [--width COLS] [--background checkerboard|black]
                  draw the image in the terminal (24-bit colour), at most COLS columns wide
                  (default: $COLUMNS, the terminal width, or 80)
          conflicts <file>
                  list the unresolved conflict versions: number, date, saving computer, format
          resolve <file> --keep current|N
                  resolve every conflict, keeping the file as it is or replacing it with
                  conflict version N (as listed)
          help    show this text

        Large images: build with `swift run -c release image-tool …` (a debug build is many times
        slower). Work that takes a while reports its steps on standard error.

        Exit status: 0 success, 1 failure, 2 usage error.
        """

    /// Runs the command line `arguments` (without the program name) and returns the exit status.
    /// Never throws: every error becomes one line on standard error.
    static func run(_ arguments: [String]) async -> Int32 {
        guard let name = arguments.first else {
            writeError(usage)
            return 2
        }
        if ["help", "-h", "--help"].contains(name) {
            print(usage)
            return 0
        }
        do {
            guard let command = Command(rawValue: name) else {
                throw UsageError("unknown command “\(name)”")
            }
            let parsed = try Arguments(arguments.dropFirst(), valueOptions: command.valueOptions, aliases: command.aliases)
            if parsed.wantsHelp {
                print(usage)
                return 0
            }
            let progress = ProgressReporter()
            defer { progress.finish() }
            try await command.run(parsed, progress: progress)
            return 0
        } catch let error as UsageError {
            writeError("image-tool: \(error.message)\n\n\(usage)")
            return 2
        } catch {
            writeError("image-tool: error: \(message(for: error))")
            return 1
        }
    }

    /// One line describing `error` for a person.
    ///
    /// Document errors are reported by what happened (their `failureReason`), without the
    /// application-oriented recovery suggestion; a load failure caused by invalid contents is
    /// reported by the codec's own message. Newlines are flattened and a final period dropped.
    static func message(for error: any Error) -> String {
        var text: String
        switch error {
        case let error as ToolFailure:
            text = error.message
        case let error as FileVersionError:
            text = error.description
        case DocumentError.couldNotLoad(_, underlying: DocumentError.contentsInvalid(let reason)):
            text = reason
        case DocumentError.couldNotLoad(let url, let underlying):
            text = "cannot open “\(url.path)”: \(message(for: underlying))"
        case DocumentError.alreadyExists(let url):
            text = "“\(url.path)” already exists; choose another name or remove it first"
        case let error as DocumentError:
            text = error.failureReason ?? error.localizedDescription
        case let error as ImageCodecError:
            text = error.errorDescription ?? String(describing: error)
        case let error as any LocalizedError:
            text = error.errorDescription ?? String(describing: error)
        default:
            text = error.localizedDescription
        }
        text = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        while text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// Writes `text` and a newline to standard error.
    static func writeError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
