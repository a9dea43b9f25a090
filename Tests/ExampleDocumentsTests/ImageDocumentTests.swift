import Foundation
import Testing
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

@Suite("ImageDocument: PNG, PPM and PGM documents", .timeLimit(.minutes(1)))
struct ImageDocumentTests {
    @Test("opens a PNG written by another encoder (libpng) with the reference pixels")
    func opensForeignPNG() async throws {
        try await withExampleFolder { folder in
            let url = try ImageFixtures.copy("rgba8", "png", to: folder)
            let document = ImageDocument(fileURL: url)
            try await document.open()
            #expect(document.image.width == 37)
            #expect(document.image.height == 29)
            #expect(document.image.pixels == (try ImageFixtures.pixels("rgba8")))
            #expect(document.format == .png)
            #expect(document.fileType == "public.png")
            try await document.close()
        }
    }

    @Test("PNG round trip: a new image saved for creating reopens identical")
    func pngRoundTrip() async throws {
        try await withExampleFolder { folder in
            let url = folder.appendingPathComponent("new.png")
            let image = try ImageFixtures.gradient(width: 19, height: 7)
            let document = ImageDocument(fileURL: url, image: image)
            try await document.save(to: url, for: .forCreating)
            #expect(ImageFormat(magicBytes: try Data(contentsOf: url)) == .png)
            try await document.close()
            let reopened = ImageDocument(fileURL: url)
            try await reopened.open()
            #expect(reopened.image == image)
            try await reopened.close()
        }
    }

    @Test("saving to a .ppm or .pgm URL converts; the document then lives there")
    func convertsByExtension() async throws {
        try await withExampleFolder { folder in
            let url = try ImageFixtures.copy("rgb8", "png", to: folder)
            let document = ImageDocument(fileURL: url)
            try await document.open()
            let original = document.image
            let ppm = folder.appendingPathComponent("rgb8.ppm")
            try await document.save(to: ppm, for: .forCreating)
            #expect(document.fileURL == ppm)
            #expect(document.format == .ppm)
            #expect(try Data(contentsOf: ppm).prefix(2) == Data("P6".utf8))
            let pgm = folder.appendingPathComponent("rgb8.pgm")
            try await document.save(to: pgm, for: .forCreating)
            #expect(try Data(contentsOf: pgm).prefix(2) == Data("P5".utf8))
            try await document.close()

            let fromPPM = ImageDocument(fileURL: ppm)
            try await fromPPM.open()
            #expect(fromPPM.image == original, "an opaque image survives PPM exactly")
            try await fromPPM.close()
            let fromPGM = ImageDocument(fileURL: pgm)
            try await fromPGM.open()
            #expect(fromPGM.image.width == original.width)
            let first = fromPGM.image.pixels.prefix(4)
            #expect(first[0] == first[1] && first[1] == first[2], "gray")
            try await fromPGM.close()
        }
    }

    @Test("corrupt or truncated PNG data is rejected with the codec's message; closed; file untouched")
    func corruptRejected() async throws {
        try await withExampleFolder { folder in
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
                do {
                    try await document.open()
                    Issue.record("\(name) opened")
                } catch let error as DocumentError {
                    guard case .couldNotLoad(_, let underlying) = error,
                          case .contentsInvalid(let why)? = underlying as? DocumentError else {
                        Issue.record("\(name): got \(error)")
                        continue
                    }
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
        try await withExampleFolder { folder in
            let url = try ImageFixtures.copy("gray8", "png", to: folder)
            let document = ImageDocument(fileURL: url)
            try await document.open()
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
            try await document.close()
            let reopened = ImageDocument(fileURL: url)
            try await reopened.open()
            #expect(reopened.image == inverted)
            try await reopened.close()
        }
    }

    @Test("saving to an extension no codec writes fails with unsupportedFileType and savingError")
    func unsupportedExtension() async throws {
        try await withExampleFolder { folder in
            let url = try ImageFixtures.copy("rgb8", "png", to: folder)
            let document = ImageDocument(fileURL: url)
            try await document.open()
            let target = folder.appendingPathComponent("rgb8.gif")
            do {
                try await document.save(to: target, for: .forCreating)
                Issue.record("saved as GIF")
            } catch let error as DocumentError {
                guard case .unsupportedFileType(let type) = error else { Issue.record("got \(error)"); return }
                #expect(type == "com.compuserve.gif")
            }
            #expect(document.documentState == .savingError)
            #expect(!FileManager.default.fileExists(atPath: target.path))
            #expect(document.fileURL == url)
        }
    }
}
