import CloudDocuments
import ExampleDocuments
import Foundation

/// The sub-commands of image-tool. Every file is read and written coordinated and safe-saved:
/// through an ``ImageDocument``, or — for the edits, which change one file and exit — read,
/// changed and written inside one coordinated write with ImageDocument's codecs
/// (``CoordinatedFileEdit``), so concurrent runs on one file never lose an edit.
enum Command: String, CaseIterable {
    case new, info, grayscale, invert, rotate, crop, convert, show, conflicts, resolve

    /// The options (without `--`) the command accepts; each takes a value.
    var valueOptions: Set<String> {
        switch self {
        case .new: return ["width", "height", "pattern"]
        case .grayscale, .invert, .rotate, .crop: return ["output"]
        case .show: return ["width", "background"]
        case .info, .convert, .conflicts: return []
        case .resolve: return ["keep"]
        }
    }

    /// Short spellings of options.
    var aliases: [String: String] {
        switch self {
        case .grayscale, .invert, .rotate, .crop: return ["-o": "output"]
        case .show, .new: return ["-w": "width"]
        case .info, .convert, .conflicts, .resolve: return [:]
        }
    }

    /// Runs the command with its (already split) arguments, printing results on standard output.
    ///
    /// - Throws: ``UsageError`` for bad arguments; ``DocumentError``, ``ImageCodecError``,
    ///   ``ToolFailure`` or a coordination error when the work fails.
    /// `progress` is told each step; the command finishes it before printing its result.
    @MainActor
    func run(_ arguments: Arguments, progress: ProgressReporter) async throws {
        switch self {
        case .new: try await Self.new(arguments, progress)
        case .info: try await Self.info(arguments, progress)
        case .grayscale, .invert, .rotate, .crop: try await Self.edit(self, arguments, progress)
        case .convert: try await Self.convert(arguments, progress)
        case .show: try await Self.show(arguments, progress)
        case .conflicts: try ConflictCommands.list(arguments)
        case .resolve: try ConflictCommands.resolve(arguments)
        }
    }

    // MARK: new

    /// `new <file> [--width W] [--height H] [--pattern gradient|checkerboard]`: creates the file
    /// (it must not exist yet) from a generated image, in the format its extension names.
    @MainActor
    private static func new(_ arguments: Arguments, _ progress: ProgressReporter) async throws {
        let path = try arguments.positionals("file")[0]
        let url = fileURL(path)
        let format = try writableFormat(of: url)
        let maxSide = RGBAImage.maxDimension
        let width = try arguments.integerOption("width", in: 1...maxSide, default: 64)
        let height = try arguments.integerOption("height", in: 1...maxSide, default: 48)
        guard width * height <= RGBAImage.maxPixelCount else {
            throw UsageError("\(width) × \(height) is too large (at most \(RGBAImage.maxPixelCount) pixels)")
        }
        let image: RGBAImage
        progress.step("generating a \(width) × \(height) image")
        switch arguments.option("pattern") ?? "gradient" {
        case "gradient": image = .gradient(width: width, height: height)
        case "checkerboard": image = .checkerboard(width: width, height: height)
        case let other: throw UsageError("unknown pattern “\(other)” (use gradient or checkerboard)")
        }
        let document = ImageDocument(fileURL: url, image: image)
        progress.step("encoding and saving \(url.lastPathComponent)")
        try await document.saveThrowing(to: url, for: .forCreating)
        try await document.closeThrowing()
        progress.finish()
        print("Created \(path): \(width) × \(height) \(format.rawValue.uppercased())")
    }

    // MARK: info

    /// `info <file>`: opens the document and describes the file and the image.
    @MainActor
    private static func info(_ arguments: Arguments, _ progress: ProgressReporter) async throws {
        let path = try arguments.positionals("file")[0]
        let url = fileURL(path)
        let document = ImageDocument(fileURL: url)
        try await open(document, progress)
        let image = document.image
        let state = document.documentState
        let stats: SourceHeader
        do {
            stats = try SourceHeader.read(url)
        } catch {
            try? await document.closeThrowing()
            throw error
        }
        try await document.closeThrowing()
        progress.finish()

        let content = ImageFormat(magicBytes: stats.bytes)
        var formatText = content.map { "\($0.rawValue.uppercased()) (\($0.mimeType))" } ?? "unknown"
        if let named = ImageFormat(url: url), let content, named != content {
            formatText += " — but the extension says \(named.rawValue.uppercased())"
        }
        let rows: [(String, String)] = [
            ("File", url.path),
            ("Name", document.localizedName),
            ("Format", formatText),
            ("Dimensions", "\(image.width) × \(image.height) pixels"),
            ("Bit depth", stats.depth.map { "\($0)" } ?? "unknown"),
            ("Alpha", image.isOpaque ? "opaque" : "has transparent pixels"),
            ("File size", stats.size.map(byteCount) ?? "unknown"),
            ("Modified", document.fileModificationDate.map { $0.formatted(.iso8601) } ?? "unknown"),
            ("State", "\(state) (while open)"),
            ("Type", document.fileType ?? "unknown"),
        ]
        for (label, value) in rows {
            print((label + ":").padding(toLength: 12, withPad: " ", startingAt: 0) + value)
        }
    }

    /// "1234 bytes", or "123456 bytes (123.5 kB)" for larger files (decimal units).
    private static func byteCount(_ bytes: Int) -> String {
        guard bytes >= 1_000 else { return "\(bytes) bytes" }
        let units = ["kB", "MB", "GB", "TB"]
        var value = Double(bytes) / 1_000
        var unit = 0
        while value >= 1_000, unit < units.count - 1 {
            value /= 1_000
            unit += 1
        }
        return "\(bytes) bytes (\(String(format: "%.1f", value)) \(units[unit]))"
    }

    // MARK: Edits

    /// `grayscale|invert <file>`, `rotate <file> <angle>`, `crop <file> <x> <y> <w> <h>`, each with
    /// `[--output out]`: validates the arguments, then hands the transform to ``edit(input:output:transform:)``.
    @MainActor
    private static func edit(_ command: Command, _ arguments: Arguments, _ progress: ProgressReporter) async throws {
        let path: String
        let transform: @Sendable (RGBAImage) throws -> RGBAImage
        switch command {
        case .grayscale:
            path = try arguments.positionals("file")[0]
            transform = { $0.grayscaled() }
        case .invert:
            path = try arguments.positionals("file")[0]
            transform = { $0.inverted() }
        case .rotate:
            let values = try arguments.positionals("file", "degrees")
            path = values[0]
            guard let degrees = Int(values[1]), degrees % 90 == 0, (-270...270).contains(degrees), degrees != 0 else {
                throw UsageError("the rotation must be 90, 180, 270 or -90 degrees, not “\(values[1])”")
            }
            transform = { $0.rotated(quarterTurns: degrees / 90) }
        case .crop:
            let values = try arguments.positionals("file", "x", "y", "w", "h")
            path = values[0]
            let limit = RGBAImage.maxDimension
            let x = try Arguments.integer(values[1], named: "<x>", in: -limit...limit)
            let y = try Arguments.integer(values[2], named: "<y>", in: -limit...limit)
            // An empty rectangle is a mistake in the command line, not a rectangle out of bounds.
            let width = try Arguments.integer(values[3], named: "<w>", in: 1...limit)
            let height = try Arguments.integer(values[4], named: "<h>", in: 1...limit)
            transform = { try $0.cropped(x: x, y: y, width: width, height: height) }
        case .new, .info, .convert, .show, .conflicts, .resolve:
            throw UsageError("“\(command.rawValue)” is not an edit")
        }
        let input = fileURL(path)
        let output = arguments.option("output").map(fileURL)
        let result = try await edit(input: input, output: output, name: command.rawValue, progress: progress,
                                    transform: transform)
        let target = output ?? input
        print("Saved \(target.path): \(result.width) × \(result.height) \((ImageFormat(url: target)?.rawValue ?? "?").uppercased())\(result.note)")
    }

    /// Reads `input`, applies `transform` and writes the result to `output` (or back to `input`),
    /// all inside one coordinated write (``CoordinatedFileEdit``): runs of the tool on one file at
    /// once apply their edits one after another, none lost and no conflict version made. The
    /// bytes are decoded and encoded as ``ImageDocument`` does (the format of the target's
    /// extension). Returns the new image size and a note when the result keeps fewer bits per
    /// channel than `input` had (else "").
    ///
    /// Nothing is written when anything fails: a failed `--output` edit never touches the input.
    ///
    /// - Throws: ``UsageError`` when the target's extension names no writable format;
    ///   ``ToolFailure`` for a plain folder; ``DocumentError/couldNotLoad(_:underlying:)`` for
    ///   data that is not an image (as opening a document does); what `transform` throws; what
    ///   ``CoordinatedFileEdit/edit(_:savingTo:coordinator:_:)`` throws.
    @MainActor
    private static func edit(input: URL, output: URL?, name: String, progress: ProgressReporter,
                             transform: @escaping @Sendable (RGBAImage) throws -> RGBAImage) async throws -> EditResult {
        let target = output ?? input
        let format = try writableFormat(of: target)
        try announceReading(input, progress)
        let result = try await CoordinatedFileEdit.edit(input, savingTo: output) { contents in
            let note = SourceHeader(bytes: [UInt8](contents.prefix(4096)), size: contents.count).reductionNote
            let image: RGBAImage
            do {
                image = try ImageDocument.decodeFile(contents, name: input.lastPathComponent)
            } catch {
                throw DocumentError.couldNotLoad(input, underlying: error)
            }
            progress.step("applying \(name)")
            let edited = try transform(image)
            progress.step("encoding and saving \(target.lastPathComponent)")
            let encoded = try ImageDocument.encodeFile(edited, as: format)
            return .init(newContents: encoded, result: EditResult(width: edited.width, height: edited.height, note: note))
        }
        progress.finish()
        return result
    }

    /// What an edit made: the new image size, and a note about lost precision (or "").
    private struct EditResult: Sendable {
        let width: Int, height: Int, note: String
    }

    // MARK: convert

    /// `convert <in> <out>`: opens `in` and saves it as `out` (replacing it), in the format
    /// `out`'s extension names.
    @MainActor
    private static func convert(_ arguments: Arguments, _ progress: ProgressReporter) async throws {
        let paths = try arguments.positionals("in", "out")
        let input = fileURL(paths[0]), output = fileURL(paths[1])
        let format = try writableFormat(of: output)
        let document = ImageDocument(fileURL: input)
        try await open(document, progress)
        let image = document.image
        var note = ""
        do {
            // Every encoder writes 8 bits per channel: say so when the input had more.
            note = (try? SourceHeader.read(input))?.reductionNote ?? ""
            progress.step("encoding and saving \(output.lastPathComponent)")
            // Saving over the file the document has open (`convert a.png a.png`) keeps another
            // program's change made since the open as a conflict version: say so.
            if try await ConflictVersions.savingKeptConflict(at: output, {
                try await document.saveThrowing(to: output, for: .forOverwriting)
            }) {
                ImageTool.writeError(ConflictVersions.keptConflictNote(of: output, tool: "image-tool"))
            }
            try await document.closeThrowing()
            progress.finish()
        } catch {
            await discardAndClose(document)
            throw error
        }
        if format != .png, !image.isOpaque { note += " (transparency dropped)" }
        if format == .pgm { note += " (converted to gray)" }
        print("Converted \(paths[0]) → \(paths[1]): \(image.width) × \(image.height) \(format.rawValue.uppercased())\(note)")
    }

    // MARK: show

    /// `show <file> [--width COLS] [--background checkerboard|black]`: draws the image in the
    /// terminal (see ``TerminalRenderer``).
    @MainActor
    private static func show(_ arguments: Arguments, _ progress: ProgressReporter) async throws {
        let path = try arguments.positionals("file")[0]
        let columns = try arguments.integerOption("width", in: 1...10_000, default: TerminalRenderer.defaultColumns())
        var renderer = TerminalRenderer(maxColumns: columns)
        if let name = arguments.option("background") {
            guard let background = TerminalRenderer.Background(rawValue: name) else {
                throw UsageError("unknown background “\(name)” (use checkerboard or black)")
            }
            renderer.background = background
        }
        let document = ImageDocument(fileURL: fileURL(path))
        try await open(document, progress)
        let image = document.image
        try await document.closeThrowing()
        progress.step("drawing")
        var text = renderer.lines(for: image).joined(separator: "\n")
        text += "\n"
        progress.finish()
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    // MARK: Helpers

    /// Opens `document`, telling `progress` (reading and decoding is most of the time a large
    /// image takes). A plain folder is refused before anything is read.
    ///
    /// - Throws: ``ToolFailure`` for a folder; the document's open errors.
    @MainActor
    private static func open(_ document: ImageDocument, _ progress: ProgressReporter) async throws {
        try announceReading(document.fileURL, progress)
        try await document.openThrowing()
    }

    /// Tells `progress` that `url` is about to be read and decoded (with its size). A plain
    /// folder (not a registered package type) is refused: nothing in it is read.
    ///
    /// - Throws: ``ToolFailure`` for a folder.
    private static func announceReading(_ url: URL, _ progress: ProgressReporter) throws {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return }
        if info.st_mode & S_IFMT == S_IFDIR, !Coordinator.packageExtensions.contains(url.pathExtension.lowercased()) {
            throw ToolFailure("“\(url.path)” is a folder, not an image file")
        }
        let size = info.st_mode & S_IFMT == S_IFREG ? " (\(shortByteCount(Int(info.st_size))))" : ""
        progress.step("reading and decoding \(url.lastPathComponent)\(size)")
    }

    /// "812 bytes", "12.3 MB".
    private static func shortByteCount(_ bytes: Int) -> String {
        let full = byteCount(bytes)
        guard let open = full.firstIndex(of: "(") else { return full }
        return String(full[full.index(after: open)..<(full.firstIndex(of: ")") ?? full.endIndex)])
    }

    /// A file URL for a path typed by the user (relative to the current directory).
    private static func fileURL(_ path: String) -> URL {
        URL(fileURLWithPath: path).standardizedFileURL
    }

    /// The format a save to `url` will use.
    ///
    /// - Throws: ``UsageError`` when the extension is not png, ppm/pnm or pgm.
    private static func writableFormat(of url: URL) throws(UsageError) -> ImageFormat {
        guard let format = ImageFormat(url: url) else {
            let problem = url.pathExtension.isEmpty
                ? "the name has no extension" : "“.\(url.pathExtension)” is not a supported format"
            throw UsageError("cannot write “\(url.lastPathComponent)”: \(problem) (use .png, .ppm or .pgm)")
        }
        return format
    }

    /// Forgets unsaved changes and closes `document`, ignoring errors: used after a failure,
    /// so closing does not try to save (to the wrong file) and the first error is the one reported.
    private static func discardAndClose(_ document: ImageDocument) async {
        document.updateChangeCount(.cleared)
        try? await document.closeThrowing()
    }
}
