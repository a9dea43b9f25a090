import Foundation
import TestSupport
import Testing
@testable import ExampleDocuments

/// `image-tool` run as a process, as a new user runs it.
@Suite("image-tool command line")
struct ImageToolCommandLineTests {
    private func fixture(_ name: String) throws -> URL {
        try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures"))
    }

    private func copyFixture(_ name: String, to folder: URL) throws {
        try FileManager.default.copyItem(at: try fixture(name), to: folder.appendingPathComponent(name))
    }

    @Test("info shows the bit depth the file stores",
          arguments: [("rgb16.png", "16 bits per channel, RGB"), ("rgba8.png", "8 bits per channel, RGBA"),
                      ("gray1.png", "1 bit per channel, gray"), ("palette4.png", "4 bits per pixel, palette")])
    func infoBitDepth(_ name: String, _ depth: String) async throws {
        try Scratch.with { folder in
            try copyFixture(name, to: folder)
            let run = try runExampleTool("image-tool", ["info", name], in: folder)
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.output.contains("Bit depth:  \(depth)\n"), "\(run.output)")
        }
    }

    @Test("info shows a Netpbm file's depth from its maxval")
    func infoNetpbmDepth() async throws {
        try Scratch.with { folder in
            var pgm = Array("P5\n# ten bits\n2 1\n1023\n".utf8)
            pgm += [0x03, 0xFF, 0x00, 0x00]
            try Data(pgm).write(to: folder.appendingPathComponent("ten.pgm"))
            let run = try runExampleTool("image-tool", ["info", "ten.pgm"], in: folder)
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.output.contains("Bit depth:  10 bits per channel (maxval 1023), gray\n"), "\(run.output)")
        }
    }

    @Test("converting or editing a 16-bit image says it is reduced to 8 bits; an 8-bit one says nothing")
    func reductionNote() async throws {
        try Scratch.with { folder in
            try copyFixture("rgb16.png", to: folder)
            try copyFixture("rgb8.png", to: folder)
            let convert16 = try runExampleTool("image-tool", ["convert", "rgb16.png", "out16.ppm"], in: folder)
            #expect(convert16.status == 0, "\(convert16.errors)")
            #expect(convert16.output.contains("(16 bits per channel reduced to 8)"), "\(convert16.output)")
            let edit16 = try runExampleTool("image-tool", ["invert", "rgb16.png", "-o", "inverted.png"], in: folder)
            #expect(edit16.status == 0, "\(edit16.errors)")
            #expect(edit16.output.contains("(16 bits per channel reduced to 8)"), "\(edit16.output)")
            let convert8 = try runExampleTool("image-tool", ["convert", "rgb8.png", "out8.ppm"], in: folder)
            #expect(convert8.status == 0, "\(convert8.errors)")
            #expect(!convert8.output.contains("reduced"), "\(convert8.output)")
            // What was written is 8-bit, as the note says.
            let info = try runExampleTool("image-tool", ["info", "out16.ppm"], in: folder)
            #expect(info.output.contains("Bit depth:  8 bits per channel, RGB\n"), "\(info.output)")
        }
    }

    @Test("crop with an empty size is a usage error about the size, not “out of bounds”",
          arguments: [["0", "5"], ["5", "0"], ["-3", "5"]])
    func cropEmpty(_ size: [String]) async throws {
        try Scratch.with { folder in
            try copyFixture("rgb8.png", to: folder)
            let run = try runExampleTool("image-tool", ["crop", "rgb8.png", "0", "0"] + size, in: folder)
            #expect(run.status == 2, "\(run.errors)")
            #expect(run.errors.contains("must be between 1 and"), "\(run.errors)")
            #expect(!run.errors.lowercased().contains("out of bounds"), "\(run.errors)")
        }
    }

    @Test("cropping an empty rectangle is refused as an invalid size")
    func croppedEmptyRectangle() {
        let image = RGBAImage.gradient(width: 4, height: 4)
        #expect(throws: ImageCodecError.invalidDimensions(width: 0, height: 2)) {
            try image.cropped(x: 0, y: 0, width: 0, height: 2)
        }
    }

    @Test("an empty file argument is a usage error, not the working folder")
    func emptyFileArgument() async throws {
        try Scratch.with { folder in
            let run = try runExampleTool("image-tool", ["info", ""], in: folder)
            #expect(run.status == 2, "\(run.errors)")
            #expect(run.errors.contains("argument <file> is empty"), "\(run.errors)")
        }
    }

    @Test("a plain folder is refused before anything in it is read")
    func folderRefused() async throws {
        try Scratch.with { folder in
            let inside = folder.appendingPathComponent("pictures", isDirectory: true)
            try FileManager.default.createDirectory(at: inside, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: inside.appendingPathComponent("link").path,
                                                       withDestinationPath: "/nonexistent/target")
            let run = try runExampleTool("image-tool", ["info", "pictures"], in: folder)
            #expect(run.status == 1)
            #expect(run.errors.contains("is a folder, not an image file"), "\(run.errors)")
            #expect(!run.errors.contains("symbolic link"), "\(run.errors)")
        }
    }

    @Test("long work reports its steps on standard error; quick work into a pipe prints nothing there")
    func progress() async throws {
        try Scratch.with { folder in
            try copyFixture("rgb8.png", to: folder)
            // Quick, and standard error is a file (not a terminal): silent.
            let quiet = try runExampleTool("image-tool", ["convert", "rgb8.png", "a.png"], in: folder)
            #expect(quiet.status == 0, "\(quiet.errors)")
            #expect(quiet.errors.isEmpty, "\(quiet.errors)")
            // The delay set to 0 makes any work "long": every step is reported, in order, on
            // standard error only.
            let loud = try runExampleTool("image-tool", ["convert", "rgb8.png", "b.png"], in: folder,
                                          environment: ["IMAGE_TOOL_PROGRESS_DELAY_MS": "0"])
            #expect(loud.status == 0, "\(loud.errors)")
            let lines = loud.errors.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("image-tool: reading and decoding rgb8.png (") == true, "\(loud.errors)")
            #expect(lines.contains("image-tool: encoding and saving b.png…"), "\(loud.errors)")
            #expect(lines.last?.hasPrefix("image-tool: done in ") == true, "\(loud.errors)")
            #expect(loud.output == quiet.output.replacingOccurrences(of: "a.png", with: "b.png"))
        }
    }
}
