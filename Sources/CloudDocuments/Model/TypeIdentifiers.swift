import Foundation

/// Maps file-name extensions to uniform type identifiers and back, the way Apple's `UTType` does
/// for common types. Linux has no type database, so the table is fixed.
///
/// - Known extensions map to Apple's identifiers (`txt` → `public.plain-text`, `md` →
///   `net.daringfireball.markdown`, `png` → `public.png`, …), case-insensitively.
/// - The Netpbm formats: `pbm` → `public.pbm` (Apple's), and, as Apple declares no identifier for
///   them, `pgm` → `org.netpbm.pgm`, `ppm` → `org.netpbm.ppm`, `pnm` → `org.netpbm.pnm`
///   (reverse-DNS under the format's home, as Apple's rules ask for non-`public` types).
/// - No extension → `public.data` for a file, `public.folder` for a folder.
/// - An unknown extension → `dyn.ext-<extension, lowercased>`. Apple's dynamic identifiers are
///   opaque (`dyn.ah62d4rv4ge8…`); ours are readable but just as dynamic: compare them, do not
///   parse them. ``preferredExtension(forType:)`` maps them back.
///
/// A namespace of pure functions: any thread; nothing can fail.
public enum TypeIdentifiers {
    /// `public.data`: any bytes (a file whose type is unknown and has no extension).
    public static let data = "public.data"
    /// `public.folder`: a plain folder.
    public static let folder = "public.folder"
    /// `public.plain-text`.
    public static let plainText = "public.plain-text"
    /// The prefix of the dynamic identifiers made for unknown extensions.
    public static let dynamicPrefix = "dyn.ext-"

    /// Extension → identifier. The first extension listed for an identifier in
    /// `preferredExtensions` is the one used to map back.
    private static let identifiersByExtension: [String: String] = [
        "txt": "public.plain-text", "text": "public.plain-text",
        "md": "net.daringfireball.markdown", "markdown": "net.daringfireball.markdown",
        "rtf": "public.rtf",
        "html": "public.html", "htm": "public.html",
        "xml": "public.xml",
        "json": "public.json",
        "yaml": "public.yaml", "yml": "public.yaml",
        "csv": "public.comma-separated-values-text",
        "tsv": "public.tab-separated-values-text",
        "swift": "public.swift-source",
        "c": "public.c-source", "h": "public.c-header",
        "py": "public.python-script",
        "sh": "public.shell-script",
        "png": "public.png",
        "jpg": "public.jpeg", "jpeg": "public.jpeg",
        "gif": "com.compuserve.gif",
        "tif": "public.tiff", "tiff": "public.tiff",
        "bmp": "com.microsoft.bmp",
        "heic": "public.heic",
        "webp": "org.webmproject.webp",
        "svg": "public.svg-image",
        "pbm": "public.pbm",
        "pgm": "org.netpbm.pgm",
        "ppm": "org.netpbm.ppm",
        "pnm": "org.netpbm.pnm",
        "pdf": "com.adobe.pdf",
        "zip": "public.zip-archive",
        "gz": "org.gnu.gnu-zip-archive",
        "tar": "public.tar-archive",
        "mp3": "public.mp3",
        "wav": "com.microsoft.waveform-audio",
        "mp4": "public.mpeg-4",
        "mov": "com.apple.quicktime-movie",
    ]

    /// Identifier → its preferred extension (Apple's choice where it has one: `jpeg`, `txt`, `md`).
    private static let preferredExtensions: [String: String] = {
        var table: [String: String] = [:]
        for (ext, type) in identifiersByExtension where table[type] == nil { table[type] = ext }
        // Where several extensions share a type, pin the one Apple prefers.
        table["public.plain-text"] = "txt"
        table["net.daringfireball.markdown"] = "md"
        table["public.html"] = "html"
        table["public.yaml"] = "yaml"
        table["public.jpeg"] = "jpeg"
        table["public.tiff"] = "tiff"
        return table
    }()

    /// The type identifier for a file-name extension (without the dot, any case). An empty
    /// extension gives ``data``; an unknown one `dyn.ext-<extension>`.
    public static func typeIdentifier(forExtension pathExtension: String) -> String {
        let ext = pathExtension.lowercased()
        if ext.isEmpty { return data }
        return identifiersByExtension[ext] ?? dynamicPrefix + ext
    }

    /// The type identifier for the item at `url`, from its extension. Without an extension, a URL
    /// with a directory path (ending in `/`) or `isDirectory == true` gives ``folder``, anything
    /// else ``data``. Does not touch the disk.
    public static func typeIdentifier(for url: URL, isDirectory: Bool? = nil) -> String {
        let ext = url.pathExtension
        if ext.isEmpty && (isDirectory ?? url.hasDirectoryPath) { return folder }
        return typeIdentifier(forExtension: ext)
    }

    /// The extension to give a file of type `typeIdentifier` (without the dot), or `nil` for a type
    /// without one (``data``, ``folder``, unknown identifiers).
    public static func preferredExtension(forType typeIdentifier: String) -> String? {
        if typeIdentifier.hasPrefix(dynamicPrefix) {
            let ext = String(typeIdentifier.dropFirst(dynamicPrefix.count))
            return ext.isEmpty ? nil : ext
        }
        return preferredExtensions[typeIdentifier]
    }
}
