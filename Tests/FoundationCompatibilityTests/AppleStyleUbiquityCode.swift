// The iCloud "handy routines" of Apple's document guides — where local and cloud documents live,
// moving a document to the cloud and back, noticing the account change — written the way Apple
// developers write them, compiled here unchanged. The only Linux-specific line is the import
// below.
import Foundation
#if canImport(FoundationCompatibility)
import FoundationCompatibility
#endif

/// Where an app keeps its documents, and moving them between local storage and iCloud.
struct DocumentsLocations: Sendable {
    /// The app's local Documents folder (tests pass a folder of their own).
    let localDocumentsURL: URL

    init(localDocumentsURL: URL? = nil) {
        self.localDocumentsURL = localDocumentsURL
            ?? FileManager.default.urls(for: .documentDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
    }

    /// Whether the user is signed in to iCloud (the cheap check Apple recommends).
    var isCloudAvailable: Bool {
        FileManager.default.ubiquityIdentityToken != nil
    }

    /// The Documents folder of the app's default ubiquity container, or nil without iCloud.
    var ubiquitousDocumentsURL: URL? {
        FileManager.default.url(forUbiquityContainerIdentifier: nil)?
            .appendingPathComponent("Documents", isDirectory: true)
    }

    /// Moves a local document to iCloud, off the main thread as Apple asks; `completion` gets the
    /// document's new URL or the error.
    func moveToCloud(_ url: URL, completion: @escaping @Sendable (Result<URL, Error>) -> Void) {
        DispatchQueue.global(qos: .userInitiated).async {
            guard let cloudFolder = ubiquitousDocumentsURL else {
                completion(.failure(CocoaError(.ubiquitousFileUbiquityServerNotAvailable)))
                return
            }
            let destination = cloudFolder.appendingPathComponent(url.lastPathComponent)
            do {
                try FileManager.default.setUbiquitous(true, itemAt: url, destinationURL: destination)
                completion(.success(destination))
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// Moves a cloud document back to the local Documents folder, picking a free name when one is
    /// taken (the usual "name (2).txt" loop, driven by the file-exists error).
    func moveToLocal(_ url: URL, completion: @escaping @Sendable (Result<URL, Error>) -> Void) {
        DispatchQueue.global(qos: .userInitiated).async {
            let base = url.deletingPathExtension().lastPathComponent
            let ext = url.pathExtension
            for attempt in 1...100 {
                let name = attempt == 1 ? base : "\(base) (\(attempt))"
                let destination = localDocumentsURL.appendingPathComponent(name).appendingPathExtension(ext)
                do {
                    try FileManager.default.setUbiquitous(false, itemAt: url, destinationURL: destination)
                    completion(.success(destination))
                    return
                } catch let error as NSError where error.domain == NSCocoaErrorDomain && error.code == NSFileWriteFileExistsError {
                    continue
                } catch {
                    completion(.failure(error))
                    return
                }
            }
            completion(.failure(CocoaError(.fileWriteFileExists)))
        }
    }

    /// Whether the document is in iCloud.
    func isInCloud(_ url: URL) -> Bool {
        FileManager.default.isUbiquitousItem(at: url)
    }

    /// Makes sure a cloud document is local before opening it: Apple apps call this and ignore
    /// "already downloaded" failures.
    func prepareToOpen(_ url: URL) -> Bool {
        do {
            try FileManager.default.startDownloadingUbiquitousItem(at: url)
        } catch let error as NSError where error.code == NSFeatureUnsupportedError {
            // No placeholders on this system: the file is already whole.
        } catch {
            return false
        }
        return FileManager.default.fileExists(atPath: url.path)
    }
}

/// Notices when the user signs in or out of iCloud, or switches accounts.
final class CloudAccountObserver {
    private let token: NSObjectProtocol
    let changes = MessageLog()

    init() {
        // Read the token at launch, then observe changes (Apple's pattern).
        _ = FileManager.default.ubiquityIdentityToken
        let changes = self.changes
        token = NotificationCenter.default.addObserver(forName: .NSUbiquityIdentityDidChange, object: nil, queue: nil) { _ in
            changes.record(FileManager.default.ubiquityIdentityToken == nil ? "signed out" : "signed in")
        }
    }

    deinit { NotificationCenter.default.removeObserver(token) }
}
