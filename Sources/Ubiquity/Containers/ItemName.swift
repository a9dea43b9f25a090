import Foundation

/// Names given by apps for items in a documents folder or a data scope: a file name or a
/// relative path that stays inside the folder. Internal; any thread.
enum ItemName {
    /// `folder/name` after checking `name`.
    ///
    /// - Throws: ``UbiquityError/invalidName(name:reason:)`` when `name` is empty or absolute, has
    ///   an empty, `.` or `..` component, a NUL byte, or a component over 255 bytes.
    static func url(named name: String, in folder: URL) throws(UbiquityError) -> URL {
        let invalid = { (reason: String) in UbiquityError.invalidName(name: name, reason: reason) }
        guard !name.isEmpty else { throw invalid("the name is empty") }
        guard !name.hasPrefix("/") else { throw invalid("it is an absolute path; give a name relative to the folder") }
        guard !name.unicodeScalars.contains("\u{0}") else { throw invalid("a name cannot contain a NUL byte") }
        for component in name.split(separator: "/", omittingEmptySubsequences: false) {
            switch component {
            case "": throw invalid("it has an empty component (`//` or a trailing `/`)")
            case ".", "..": throw invalid("`.` and `..` would leave the folder or name it")
            default:
                guard component.utf8.count <= 255 else { throw invalid("a component is longer than 255 bytes") }
            }
        }
        return folder.appending(path: name, directoryHint: .notDirectory)
    }
}

extension UbiquityContainer {
    /// The URL of the document `name` in this container's `Documents` folder (the documents
    /// scope). `name` is a file name or a relative path (`Notes/todo.txt`); nothing is checked on
    /// disk. Any thread.
    ///
    /// - Throws: ``UbiquityError/invalidName(name:reason:)`` for a name that would not stay in the
    ///   folder or cannot be a file name (empty, `.`/`..`, absolute, a NUL byte, over 255 bytes).
    public func documentURL(named name: String) throws(UbiquityError) -> URL {
        try ItemName.url(named: name, in: documentsURL)
    }

    /// The URL of the item `name` in this container's data scope (the container folder outside
    /// `Documents`): for the app's own synced files. Nothing is checked on disk. Any thread.
    ///
    /// - Throws: ``UbiquityError/invalidName(name:reason:)`` as ``documentURL(named:)``, and for a
    ///   name whose first component is `Documents` (that is the documents scope).
    public func dataURL(named name: String) throws(UbiquityError) -> URL {
        if name == "Documents" || name.hasPrefix("Documents/") {
            throw .invalidName(name: name, reason: "`Documents` is the documents scope; use documentURL(named:)")
        }
        return try ItemName.url(named: name, in: url)
    }

    /// Whether something is named `name` in this container's documents scope; `false` for a name
    /// ``documentURL(named:)`` refuses. Any thread.
    public func documentExists(named name: String) -> Bool {
        (try? documentURL(named: name)).map(UbiquityAccount.itemExists) ?? false
    }

    /// Whether something is named `name` in this container's data scope; `false` for a name
    /// ``dataURL(named:)`` refuses. Any thread.
    public func dataExists(named name: String) -> Bool {
        (try? dataURL(named: name)).map(UbiquityAccount.itemExists) ?? false
    }
}

extension UbiquityAccount {
    /// The URL of the document `name` in the `Documents` folder of the container `identifier`
    /// (`nil`: the first configured), creating the container's folders on first use as
    /// ``container(identifier:)`` does. Any thread.
    ///
    /// - Throws: the errors of ``container(identifier:)`` (`.notSignedIn`, …) and
    ///   ``UbiquityError/invalidName(name:reason:)``.
    public func ubiquitousDocumentURL(named name: String, containerIdentifier identifier: String? = nil) throws(UbiquityError) -> URL {
        try container(identifier: identifier).documentURL(named: name)
    }

    /// The URL of the item `name` in the data scope of the container `identifier` (`nil`: the
    /// first configured). Errors as ``ubiquitousDocumentURL(named:containerIdentifier:)``, and
    /// `.invalidName` for a name under `Documents`. Any thread.
    public func ubiquitousDataURL(named name: String, containerIdentifier identifier: String? = nil) throws(UbiquityError) -> URL {
        try container(identifier: identifier).dataURL(named: name)
    }

    /// Whether `name` exists as a ubiquitous document (in the container's `Documents` folder);
    /// `false` when signed out, for an unknown container and for a refused name. Any thread.
    public func ubiquitousDocumentExists(named name: String, containerIdentifier identifier: String? = nil) -> Bool {
        (try? ubiquitousDocumentURL(named: name, containerIdentifier: identifier)).map(Self.itemExists) ?? false
    }

    /// Whether `name` exists as ubiquitous data (in the container's data scope); `false` when
    /// signed out, for an unknown container and for a refused name. Any thread.
    public func ubiquitousDataExists(named name: String, containerIdentifier identifier: String? = nil) -> Bool {
        (try? ubiquitousDataURL(named: name, containerIdentifier: identifier)).map(Self.itemExists) ?? false
    }
}
