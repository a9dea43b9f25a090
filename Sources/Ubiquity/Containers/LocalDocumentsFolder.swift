import Foundation

extension UbiquityConfiguration {
    /// The user's documents folder as the XDG user directories name it: `XDG_DOCUMENTS_DIR` from
    /// `$XDG_CONFIG_HOME/user-dirs.dirs` (else `~/.config/user-dirs.dirs`), the file
    /// `xdg-user-dirs-update` writes and desktops read; `~/Documents` when the file is missing,
    /// does not set it, or sets it to the home folder itself (the spec's "disabled"). `~` is
    /// `HOME` from `environment` (else the process's home). Reads one small file; any thread.
    public static func xdgDocumentsURL(environment: [String: String]) -> URL {
        let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()
        let homeURL = URL(fileURLWithPath: home, isDirectory: true).standardizedFileURL
        let fallback = homeURL.appending(path: "Documents", directoryHint: .isDirectory)
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.config"
        guard let text = try? String(contentsOfFile: config + "/user-dirs.dirs", encoding: .utf8),
              let value = documentsValue(in: text) else { return fallback }
        let path: String
        if value == "$HOME" || value == "$HOME/" {
            return fallback
        } else if value.hasPrefix("$HOME/") {
            path = home + value.dropFirst("$HOME".count)
        } else if value.hasPrefix("/"), !value.unicodeScalars.contains("\u{0}") {
            path = value
        } else {
            return fallback  // neither form the spec allows
        }
        let url = URL(fileURLWithPath: path, isDirectory: true).standardizedFileURL
        return url.path == homeURL.path ? fallback : url
    }

    /// The value of the last `XDG_DOCUMENTS_DIR="…"` line (shell syntax: double quotes,
    /// backslash escapes), or nil.
    static func documentsValue(in text: String) -> String? {
        var found: String?
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("XDG_DOCUMENTS_DIR=") else { continue }
            var rest = trimmed.dropFirst("XDG_DOCUMENTS_DIR=".count)
            guard rest.first == "\"" else { continue }
            rest = rest.dropFirst()
            var value = "", escaped = false, closed = false
            for character in rest {
                if escaped { value.append(character); escaped = false; continue }
                if character == "\\" { escaped = true; continue }
                if character == "\"" { closed = true; break }
                value.append(character)
            }
            if closed { found = value }
        }
        return found
    }
}

extension UbiquityAccount {
    /// The local documents folder — where an app keeps the documents that are not in the cloud,
    /// as Apple apps use their `Documents` folder: the configured one (`documents = /path` in the
    /// configuration, or `CLOUDDOCUMENTS_LOCAL_DOCUMENTS`), else the user's XDG documents folder
    /// (``UbiquityConfiguration/xdgDocumentsURL(environment:)``, from this account's environment —
    /// the process's for an account with a fixed configuration), else `~/Documents`. A
    /// configuration that cannot be read counts as not configuring it. The folder is not created.
    /// Any thread.
    public var localDocumentsURL: URL {
        if let configured = (try? configuration())?.localDocuments { return configured }
        return UbiquityConfiguration.xdgDocumentsURL(environment: configurationEnvironment ?? ProcessInfo.processInfo.environment)
    }

    /// The URL of the document `name` in ``localDocumentsURL``. `name` is a file name or a
    /// relative path (`Notes/todo.txt`); nothing is checked on disk. Any thread.
    ///
    /// - Throws: ``UbiquityError/invalidName(name:reason:)`` for a name that would not stay in the
    ///   folder or cannot be a file name (empty, `.`/`..`, absolute, a NUL byte, over 255 bytes).
    public func localDocumentURL(named name: String) throws(UbiquityError) -> URL {
        try ItemName.url(named: name, in: localDocumentsURL)
    }

    /// Whether something (a file, a folder, even a dangling link) is named `name` in
    /// ``localDocumentsURL``; `false` for a name ``localDocumentURL(named:)`` refuses. Any thread.
    public func localDocumentExists(named name: String) -> Bool {
        (try? localDocumentURL(named: name)).map(Self.itemExists) ?? false
    }
}
