import Foundation

/// The fenced `swift` blocks of one Markdown document, sorted into what the snippet test
/// compiles: see ``DocumentationSnippetTests`` for the markers.
///
/// An HTML comment just before a block (invisible when the Markdown is rendered) says how to
/// compile it:
/// - no marker, or `<!-- swift-snippet: fragment -->`: statements, compiled as the body of an
///   `async throws` function on the main actor (so `try await` and `return` work as in an app);
/// - `<!-- swift-snippet: declarations -->`: types, extensions and functions;
/// - `<!-- swift-snippet: program -->`: a whole `main.swift`, compiled on its own;
/// - `<!-- swift-snippet: members of CloudDocument -->`: methods and properties for a class,
///   compiled inside a subclass of the named class;
/// - `<!-- swift-snippet: manifest -->`: arguments of `Package(…)` in a `Package.swift`,
///   compiled against the toolchain's PackageDescription.
///
/// A comment `<!-- swift-snippet-context` … `-->` anywhere in the document holds declarations
/// the document's fragments assume (`let url = …`) without showing them; it is compiled with the
/// document's fragments and declarations, which all form one module.
struct DocumentationSnippets {
    enum Kind: Equatable {
        case fragment, declarations, program, manifest
        case members(of: String)

        init?(marker: String) {
            switch marker {
            case "fragment": self = .fragment
            case "declarations": self = .declarations
            case "program": self = .program
            case "manifest": self = .manifest
            default:
                guard marker.hasPrefix("members of "), let name = marker.split(separator: " ").last, name != "of" else { return nil }
                self = .members(of: String(name))
            }
        }
    }

    struct Block {
        let kind: Kind
        /// 1-based line of the opening fence, for messages.
        let line: Int
        let code: String
    }

    let blocks: [Block]
    let context: [String]

    /// Reads the blocks of `markdown`. Throws ``Malformed`` for an unknown marker or an
    /// unclosed fence or comment.
    init(markdown: String) throws {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var blocks: [Block] = [], context: [String] = []
        var pendingKind: Kind?
        var index = 0
        while index < lines.count {
            let line = lines[index].trimmingCharacters(in: .whitespaces)
            if line == "<!-- swift-snippet-context" {
                guard let end = lines[(index + 1)...].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "-->" }) else {
                    throw Malformed(line: index + 1, reason: "unclosed swift-snippet-context comment")
                }
                context.append(lines[(index + 1)..<end].joined(separator: "\n"))
                index = end + 1
                continue
            }
            if line.hasPrefix("<!-- swift-snippet:") {
                let name = line.dropFirst("<!-- swift-snippet:".count).replacingOccurrences(of: "-->", with: "")
                    .trimmingCharacters(in: .whitespaces)
                guard let kind = Kind(marker: name) else {
                    throw Malformed(line: index + 1, reason: "unknown snippet kind “\(name)”")
                }
                pendingKind = kind
            } else if line == "```swift" {
                guard let end = lines[(index + 1)...].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "```" }) else {
                    throw Malformed(line: index + 1, reason: "unclosed swift block")
                }
                blocks.append(Block(kind: pendingKind ?? .fragment, line: index + 1,
                                    code: lines[(index + 1)..<end].joined(separator: "\n")))
                pendingKind = nil
                index = end
            } else if !line.isEmpty {
                pendingKind = nil
            }
            index += 1
        }
        self.blocks = blocks
        self.context = context
    }

    struct Malformed: Error, CustomStringConvertible {
        let line: Int
        let reason: String
        var description: String { "line \(line): \(reason)" }
    }

    /// The files of the document's module: the context, the declarations, and each fragment
    /// wrapped in its own function. The `import`s of a fragment move to the top of its file.
    ///
    /// A fragment or declarations block without an `import` of its own gets the context's
    /// imports (the app around it imports them); one with imports must name all it needs.
    func moduleSources() -> [(name: String, code: String)] {
        let contextImports = context.flatMap { $0.split(separator: "\n") }.filter { $0.hasPrefix("import ") }
        var sources: [(name: String, code: String)] = []
        for (number, code) in context.enumerated() {
            sources.append(("context\(number).swift", code))
        }
        for block in blocks {
            switch block.kind {
            case .program, .manifest:
                continue
            case .members(let superclass):
                let code = contextImports.joined(separator: "\n") + "\n\nclass MembersAtLine\(block.line): \(superclass) {\n"
                    + block.code.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(separator: "\n") + "\n}\n"
                sources.append(("line\(block.line).swift", code))
            case .declarations:
                // `@testable import MyApp` names the app's own module: the document's module here.
                let lines = block.code.split(separator: "\n", omittingEmptySubsequences: false)
                    .filter { !$0.hasPrefix("@testable import MyApp") }
                let ownImports = lines.contains { $0.hasPrefix("import ") }
                sources.append(("line\(block.line).swift", ((ownImports ? [] : contextImports) + lines).joined(separator: "\n")))
            case .fragment:
                let lines = block.code.split(separator: "\n", omittingEmptySubsequences: false)
                let ownImports = lines.filter { $0.hasPrefix("import ") }
                let imports = ownImports.isEmpty ? contextImports : ownImports
                let body = lines.filter { !$0.hasPrefix("import ") }
                let code = imports.joined(separator: "\n") + "\n\n@MainActor func fragmentAtLine\(block.line)() async throws {\n"
                    + body.map { "    " + $0 }.joined(separator: "\n") + "\n}\n"
                sources.append(("line\(block.line).swift", code))
            }
        }
        return sources
    }
}

extension DocumentationSnippets.Block {
    /// A `manifest` block as a whole `Package.swift`.
    var manifestSource: String {
        "// swift-tools-version: 6.0\nimport PackageDescription\n\nlet package = Package(\n    name: \"MyApp\",\n" + code + "\n)\n"
    }
}
