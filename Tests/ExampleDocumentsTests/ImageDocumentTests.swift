import Foundation
import Testing
import TestSupport
@testable import ExampleDocuments

private enum ImageFixtures {
    static func url(_ name: String, _ ext: String) throws -> URL {
        try #require(Bundle.module.url(forResource: name, withExtension: ext, subdirectory: "Fixtures"),
                     "missing fixture \(name).\(ext)")
    }

    /// Copies a fixture into `folder` (documents write next to their file).
    static func copy(_ name: String, _ ext: String, to folder: URL) throws -> URL {
        let destination = folder.appendingPathComponent("\(name).\(ext)")
        try FileManager.default.copyItem(at: try url(name, ext), to: destination)
        return destination
    }

    /// Copies the PNG fixture `name` into `folder` and opens an ImageDocument on the copy.
    static func openCopy(of name: String, in folder: URL) async throws -> ImageDocument {
        let document = ImageDocument(fileURL: try copy(name, "png", to: folder))
        try await document.openThrowing()
        return document
    }

    /// The reference pixels ImageMagick decoded from a fixture (`.rgba`, RGBA8).
    static func pixels(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: try url(name, "rgba")))
    }

    static func gradient(width: Int, height: Int, opaque: Bool = false) throws -> RGBAImage {
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                pixels += [UInt8(x * 255 / max(width - 1, 1)), UInt8(y * 255 / max(height - 1, 1)),
                           UInt8((x + y) % 256), opaque ? 255 : UInt8(128 + (x % 128))]
            }
        }
        return try RGBAImage(width: width, height: height, pixels: pixels)
    }
}

/// Closes `document`, then checks that a fresh document on its file shows `expected`.
@MainActor
private func closeAndExpectReopened(_ document: ImageDocument, toShow expected: RGBAImage,
                                    sourceLocation: SourceLocation = #_sourceLocation) async throws {
    try await document.closeThrowing()
    try await withReopened(ImageDocument.init(fileURL:), at: document.fileURL) { reopened in
        #expect(reopened.image == expected, sourceLocation: sourceLocation)
    }
}

@Suite("ImageDocument: PNG, PPM and PGM documents", .timeLimit(.minutes(1 * Polling.deadlineScale)))
@MainActor
struct ImageDocumentTests {
    @Test("opens a PNG written by another encoder (libpng) with the reference pixels")
    func opensForeignPNG() async throws {
        try await Scratch.with { folder in
            let document = try await ImageFixtures.openCopy(of: "rgba8", in: folder)
            #expect(document.image.width == 37)
            #expect(document.image.height == 29)
            #expect(document.image.pixels == (try ImageFixtures.pixels("rgba8")))
            #expect(document.format == .png)
            #expect(document.fileType == "public.png")
            try await document.closeThrowing()
        }
    }

    @Test("PNG round trip: a new image saved for creating reopens identical")
    func pngRoundTrip() async throws {
        try await Scratch.with { folder in
            let url = folder.appendingPathComponent("new.png")
            let image = try ImageFixtures.gradient(width: 19, height: 7)
            let document = ImageDocument(fileURL: url, image: image)
            try await document.saveThrowing(to: url, for: .forCreating)
            #expect(ImageFormat(magicBytes: try Data(contentsOf: url)) == .png)
            try await closeAndExpectReopened(document, toShow: image)
        }
    }

    @Test("saving to a .ppm or .pgm URL converts; the document then lives there")
    func convertsByExtension() async throws {
        try await Scratch.with { folder in
            let document = try await ImageFixtures.openCopy(of: "rgb8", in: folder)
            let original = document.image
            let ppm = folder.appendingPathComponent("rgb8.ppm")
            try await document.saveThrowing(to: ppm, for: .forCreating)
            #expect(document.fileURL == ppm)
            #expect(document.format == .ppm)
            #expect(try Data(contentsOf: ppm).prefix(2) == Data("P6".utf8))
            let pgm = folder.appendingPathComponent("rgb8.pgm")
            try await document.saveThrowing(to: pgm, for: .forCreating)
            #expect(try Data(contentsOf: pgm).prefix(2) == Data("P5".utf8))
            try await document.closeThrowing()

            try await withReopened(ImageDocument.init(fileURL:), at: ppm) { fromPPM in
                #expect(fromPPM.image == original, "an opaque image survives PPM exactly")
            }
            try await withReopened(ImageDocument.init(fileURL:), at: pgm) { fromPGM in
                #expect(fromPGM.image.width == original.width)
                let first = fromPGM.image.pixels.prefix(4)
                #expect(first[0] == first[1] && first[1] == first[2], "gray")
            }
        }
    }

    @Test("corrupt or truncated PNG data is rejected with the codec's message; closed; file untouched")
    func corruptRejected() async throws {
        try await Scratch.with { folder in
            let source = try Data(contentsOf: try ImageFixtures.url("rgba8", "png"))
            var corrupt = source
            corrupt[40] ^= 0xFF  // inside the first IDAT: its CRC no longer matches
            let cases: [(String, Data)] = [
                ("corrupt.png", corrupt),
                ("truncated.png", source.prefix(source.count / 2)),
                ("empty.png", Data()),
                ("text.png", Data("not an image at all".utf8)),
            ]
            for (name, bytes) in cases {
                let url = folder.appendingPathComponent(name)
                try bytes.write(to: url)
                let document = ImageDocument(fileURL: url)
                if let why = await expectContentsInvalid(opening: document, "\(name)")?.why {
                    #expect(why.contains("is not a readable image"), "\(name): \(why)")
                    #expect(why.count > "is not a readable image".count + 20, "\(name): carries the codec's message")
                }
                #expect(document.documentState == .closed)
                #expect(try Data(contentsOf: url) == bytes, "\(name) untouched")
            }
        }
    }

    @Test("setting the image is undoable and drives the change count")
    func undoableImage() async throws {
        try await Scratch.with { folder in
            let document = try await ImageFixtures.openCopy(of: "gray8", in: folder)
            let original = document.image
            var inverted = original
            for index in inverted.pixels.indices where index % 4 != 3 { inverted.pixels[index] = 255 - inverted.pixels[index] }
            document.setImage(inverted, actionName: "Invert")
            #expect(document.undoManager.undoActionName == "Invert")
            #expect(document.hasUnsavedChanges)
            document.undoManager.undo()
            #expect(document.image == original)
            #expect(!document.hasUnsavedChanges)
            document.undoManager.redo()
            #expect(document.image == inverted)
            try await closeAndExpectReopened(document, toShow: inverted)
        }
    }

    @Test("saving to an extension no codec writes fails with unsupportedFileType and savingError")
    func unsupportedExtension() async throws {
        try await Scratch.with { folder in
            let document = try await ImageFixtures.openCopy(of: "rgb8", in: folder)
            let url = document.fileURL
            let target = folder.appendingPathComponent("rgb8.gif")
            let error = await #expect(throws: DocumentError.self, "saved as GIF") {
                try await document.saveThrowing(to: target, for: .forCreating)
            }
            if case .unsupportedFileType(let type)? = error {
                #expect(type == "com.compuserve.gif")
            } else if let error {
                Issue.record("got \(error)")
            }
            #expect(document.documentState == .savingError)
            #expect(!FileManager.default.fileExists(atPath: target.path))
            #expect(document.fileURL == url)
        }
    }
}
