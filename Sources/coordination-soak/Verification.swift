import CloudDocuments
import Foundation

/// What is in the shared files after the run, in their unresolved conflict versions
/// (`FileVersion.unresolvedConflictVersionsOfItem`), and anywhere in the version store.
struct FinalContents {
    /// Every well-formed line of the final shared files.
    var lines = Set<Substring>()
    /// Lines found more than once in one file (each extra copy counted).
    var duplicates = 0
    /// Every well-formed line of the unresolved conflict versions of the final shared files.
    var conflictLines = Set<Substring>()
    var conflictVersions = 0
    /// Every well-formed line of any file in the version store (reached without the API).
    var storeLines = Set<Substring>()
    /// Lines that are not whole (`D<w>-<n>` / `A<w>-<n>`), or files that end inside a line.
    var tornLines = 0
    var tornExamples: [String] = []
    /// Files that are not valid UTF-8.
    var invalidFiles: [String] = []
    /// Shared files missing, or found in more than one place; both names of the moving folder.
    var structureProblems: [String] = []
    /// Other files left among the shared ones (temporary files of interrupted saves, …).
    var strays: [String] = []
    var readProblems: [String] = []

    init(_ layout: RunLayout) {
        checkStructure(layout)
        for url in Self.regularFiles(under: layout.files) {
            let name = url.lastPathComponent
            if name.hasPrefix("shared-") && name.hasSuffix(".txt") {
                let expected = (0..<RunLayout.sharedCount).flatMap(layout.sharedCandidates).map(\.standardizedFileURL.path)
                if !expected.contains(url.standardizedFileURL.path) {
                    structureProblems.append("a shared file at an unexpected place: \(url.path)")
                }
                var seen = Set<Substring>()
                for line in parse(url, where: "final file") {
                    if !seen.insert(line).inserted { duplicates += 1 }
                    lines.insert(line)
                }
            } else if !name.hasPrefix("mover-") && !name.hasPrefix("scratch-") {
                strays.append(String(url.path.dropFirst(layout.files.path.count + 1)))
            }
        }
        for index in 0..<RunLayout.sharedCount {
            guard let url = layout.currentShared(index) else { continue }
            do {
                let versions = try FileVersion.unresolvedConflictVersionsOfItem(at: url)
                conflictVersions += versions.count
                for version in versions {
                    for line in parse(version.url, where: "conflict version of \(url.lastPathComponent)") {
                        conflictLines.insert(line)
                    }
                }
            } catch {
                readProblems.append("conflict versions of \(url.path): \(error.localizedDescription)")
            }
        }
        // Not through the API: only to tell apart, among lost lines, those the store still has.
        for url in Self.regularFiles(under: layout.versions.appendingPathComponent("items")) where url.path.contains("/data/") {
            guard let data = FileManager.default.contents(atPath: url.path) else { continue }
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where SoakLine.isWellFormed(line) {
                storeLines.insert(line)
            }
        }
    }

    /// The well-formed lines of `url`; counts torn lines and invalid files.
    private mutating func parse(_ url: URL, where place: String) -> [Substring] {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            readProblems.append("cannot read \(place) \(url.path)")
            return []
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            invalidFiles.append("\(place) \(url.path) (\(data.count) bytes)")
            return []
        }
        var result: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if SoakLine.isWellFormed(line) { result.append(line) } else if !line.isEmpty { torn("\(place) \(url.lastPathComponent): “\(line.prefix(80))”") }
        }
        if !text.isEmpty && !text.hasSuffix("\n") { torn("\(place) \(url.lastPathComponent) ends inside a line") }
        // Empty lines inside a file are torn too (a line feed without its line).
        let emptyInside = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().filter(\.isEmpty).count
        if emptyInside > 0 { torn("\(place) \(url.lastPathComponent) has \(emptyInside) empty line(s)") }
        return result
    }

    private mutating func torn(_ example: String) {
        tornLines += 1
        if tornExamples.count < 5 { tornExamples.append(example) }
    }

    private mutating func checkStructure(_ layout: RunLayout) {
        let folders = layout.movingFolders.filter { FileManager.default.fileExists(atPath: $0.path) }
        if folders.count != 1 {
            structureProblems.append("\(folders.count) of the moving folder's names exist: \(folders.map(\.lastPathComponent))")
        }
        for index in 0..<RunLayout.sharedCount {
            let places = layout.sharedCandidates(index).filter { FileManager.default.fileExists(atPath: $0.path) }
            if places.count != 1 {
                structureProblems.append("\(RunLayout.sharedName(index)) found at \(places.count) places: \(places.map(\.path))")
            }
        }
    }

    /// Every regular file below `folder`, recursively (bounded).
    static func regularFiles(under folder: URL) -> [URL] {
        guard let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey]) else { return [] }
        var files: [URL] = []
        for case let url as URL in enumerator where files.count < 100_000 {
            if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true { files.append(url) }
        }
        return files
    }
}
