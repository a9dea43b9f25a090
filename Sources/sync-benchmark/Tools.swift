import BenchmarkSupport
import Foundation
import Glibc

/// Runs a raw tool (`rclone`, `curl`) to its end; returns its wall time in nanoseconds and its
/// standard output. Throws when it cannot start or exits with a non-zero status (a failing raw
/// transfer looks fast).
@discardableResult
func runTool(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws(BenchmarkError)
    -> (nanoseconds: Double, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let output = Pipe(), errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = FileHandle.nullDevice
    let start = Measure.now()
    do { try process.run() } catch { throw BenchmarkError("cannot run \(executable): \(error)") }
    // Read both pipes to their end before waiting, so a chatty tool never blocks on a full pipe.
    let errorData = Mutexed(Data())
    let group = DispatchGroup()
    DispatchQueue.global().async(group: group) { errorData.set(errors.fileHandleForReading.readDataToEndOfFile()) }
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    let elapsed = Double(Measure.now() - start)
    guard process.terminationStatus == 0 else {
        let message = String(decoding: errorData.get().suffix(2000), as: UTF8.self)
        throw BenchmarkError("\(executable) \(arguments.joined(separator: " ")) exited with \(process.terminationStatus):\n\(message)")
    }
    return (elapsed, String(decoding: outputData, as: UTF8.self))
}

/// A value behind a lock (for a pipe read on another thread).
final class Mutexed<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is only touched with `lock` held.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.withLock { value } }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
}

/// The `rclone` command line with a throw-away configuration: the remote `:webdav:` is made on the
/// fly from `RCLONE_WEBDAV_URL`, so nothing of the user's rclone configuration is read.
struct Rclone {
    static let executable = "/usr/bin/rclone"
    let server: URL
    let configuration: URL

    init(server: URL, work: URL) throws(BenchmarkError) {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw BenchmarkError("\(Self.executable) is missing: apt-get install rclone")
        }
        self.server = server
        configuration = work.appending(path: "rclone.conf")
        guard FileManager.default.createFile(atPath: configuration.path, contents: Data()) else {
            throw BenchmarkError("cannot write \(configuration.path)")
        }
    }

    /// `rclone copy SOURCE DESTINATION` with rclone's defaults (4 transfers, 8 checkers);
    /// `:webdav:NAME` names the server's collection NAME. Returns nanoseconds.
    func copy(_ source: String, _ destination: String) throws(BenchmarkError) -> Double {
        try runTool(Self.executable, ["copy", source, destination, "--config", configuration.path],
                    environment: ["RCLONE_WEBDAV_URL": server.absoluteString]).nanoseconds
    }
}

/// Files of a tree: relative path → size (regular files only; `skipping` names at the top are left out).
func filesBelow(_ root: URL, skipping: Set<String> = []) -> [String: Int] {
    var result: [String: Int] = [:]
    guard let enumerator = FileManager.default.enumerator(atPath: root.path) else { return result }
    while let relative = enumerator.nextObject() as? String {
        if let top = relative.split(separator: "/").first, skipping.contains(String(top)) { continue }
        var info = stat()
        guard lstat(root.path + "/" + relative, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
        result[relative] = Int(info.st_size)
    }
    return result
}

/// Throws unless the files below `root` are exactly `expected` (relative path → size).
func checkTree(_ root: URL, equals expected: [String: Int], what: String, skipping: Set<String> = []) throws(BenchmarkError) {
    let found = filesBelow(root, skipping: skipping)
    guard found != expected else { return }
    let missing = expected.filter { found[$0.key] != $0.value }
    let extra = found.keys.filter { expected[$0] == nil }
    throw BenchmarkError("\(what): \(found.count) files, \(expected.count) expected; wrong or missing: "
        + "\(missing.keys.sorted().prefix(3)), unexpected: \(extra.sorted().prefix(3))")
}

/// Writes `count` files of `size` bytes (distinct contents) below `root`: `f00000` … flat, or in
/// `folders` folders `d000/` … when `folders > 0`. Returns relative path → size.
@discardableResult
func makeFiles(in root: URL, count: Int, size: Int, folders: Int = 0) throws(BenchmarkError) -> [String: Int] {
    var expected: [String: Int] = [:]
    var bytes = [UInt8](repeating: 0, count: size)
    var generator = SystemRandomNumberGenerator()
    for index in 0..<count {
        let relative = folders > 0 ? String(format: "d%03d/f%05d.bin", index % folders, index) : String(format: "f%05d.bin", index)
        let url = root.appending(path: relative)
        for offset in stride(from: 0, to: size, by: 8) {
            let word = generator.next() as UInt64
            withUnsafeBytes(of: word) { raw in
                for byte in 0..<min(8, size - offset) { bytes[offset + byte] = raw[byte] }
            }
        }
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        } catch {
            throw BenchmarkError("cannot write \(url.path): \(error)")
        }
        expected[relative] = size
    }
    return expected
}

/// Makes a folder (and its parents); throws saying which.
func makeFolder(_ url: URL) throws(BenchmarkError) {
    do { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
    catch { throw BenchmarkError("cannot create \(url.path): \(error)") }
}

/// A human figure for nanoseconds: `1.23 s` or `45.6 ms`.
func seconds(_ nanoseconds: Double) -> String {
    nanoseconds >= 1e9 ? format(nanoseconds / 1e9, 2) + " s" : format(nanoseconds / 1e6, 1) + " ms"
}
