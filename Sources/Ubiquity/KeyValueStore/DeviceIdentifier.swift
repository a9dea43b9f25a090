import Foundation
import Glibc

/// The identifier of this device (this user on this machine), which names its key-value store
/// file and stamps its writes.
///
/// Where it comes from, first match wins:
/// 1. the environment variable `CLOUDDOCUMENTS_DEVICE_ID` (tests run two "devices" on one machine
///    this way);
/// 2. the file `$XDG_STATE_HOME/clouddocuments/device-id`, else
///    `~/.local/state/clouddocuments/device-id`: a random identifier made on first use and kept
///    there (not synced: the state folder is per machine). A random identifier, not
///    `/etc/machine-id`, so that cloned machines and containers that share a machine id, and
///    two users of one machine, are still different devices.
///
/// An identifier is 1 to 64 letters, digits, `-` and `_` (it is part of a file name). Copying the
/// state folder to another machine makes the two machines one device: their writes then meet in
/// one file, and the sync tool's conflict copies of it are merged (nothing is lost, but ties are
/// broken by time alone).
public enum DeviceIdentifier {
    /// The environment variable that overrides the identifier.
    public static let environmentKey = "CLOUDDOCUMENTS_DEVICE_ID"

    /// This device's identifier, making and storing one on first use.
    ///
    /// - Throws: ``KeyValueStoreError/unavailable(reason:)`` when the environment variable is not
    ///   a valid identifier, or no identifier can be read or stored (no home folder, read-only
    ///   state folder).
    public static func current(environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(KeyValueStoreError) -> String {
        if let given = environment[environmentKey], !given.isEmpty {
            guard isValid(given) else {
                throw .unavailable(reason: "$\(environmentKey) “\(given)” is not 1 to 64 letters, digits, - and _")
            }
            return given
        }
        let file = stateFileURL(environment: environment)
        if let stored = read(file) { return stored }
        let made = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        do {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            // Written beside, then linked into place: `link` fails if another process made one
            // first, and then everybody uses that one.
            let temporary = file.deletingLastPathComponent().appending(path: ".device-id.\(getpid()).\(made)")
            try Data((made + "\n").utf8).write(to: temporary)
            defer { unlink(temporary.path) }
            if link(temporary.path, file.path) != 0 && errno != EEXIST {
                throw KeyValueStoreError.unavailable(reason: "cannot store the device identifier at \(file.path): errno \(errno)")
            }
        } catch let error as KeyValueStoreError {
            throw error
        } catch {
            throw .unavailable(reason: "cannot store the device identifier at \(file.path): \(error.localizedDescription)")
        }
        guard let stored = read(file) else {
            throw .unavailable(reason: "the device identifier at \(file.path) is not 1 to 64 letters, digits, - and _")
        }
        return stored
    }

    /// Where the identifier is kept for this environment.
    public static func stateFileURL(environment: [String: String]) -> URL {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return URL(fileURLWithPath: state).appending(path: "clouddocuments/device-id")
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appending(path: ".local/state/clouddocuments/device-id")
    }

    /// Whether `identifier` can be a device identifier: 1 to 64 ASCII letters, digits, `-`, `_`.
    public static func isValid(_ identifier: String) -> Bool {
        !identifier.isEmpty && identifier.utf8.count <= 64 && identifier.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_"
        }
    }

    private static func read(_ file: URL) -> String? {
        guard let data = try? Data(contentsOf: file) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return isValid(text) ? text : nil
    }
}
