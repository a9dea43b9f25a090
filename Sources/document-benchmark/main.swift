// document-benchmark: CloudDocument saving and opening next to the raw syscall path, and the
// example PNG codec's speed. Run with `swift run -c release document-benchmark`.
import CloudDocuments
import ExampleDocuments
import Foundation

func now() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

// Child mode: open a document and report the memory it took (a fresh process, so the peak is ours).
if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--open-rss" {
    let url = URL(fileURLWithPath: CommandLine.arguments[2])
    let before = Memory.value("VmRSS")
    let document = BlobDocument(fileURL: url)
    try await document.openThrowing()
    let peak = Memory.value("VmHWM")
    let held = document.blob.count
    try await document.closeThrowing()
    print("\(before) \(peak) \(held)")
    exit(0)
}

let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("cd-docbench-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }

print("CloudDocuments document benchmark — \(ProcessInfo.processInfo.processorCount) cores, \(Date())")
print("")
print("| measure | raw syscalls | CloudDocument | ratio / value | goal |")
print("| --- | --- | --- | --- | --- |")

// 1. Save of 4 KiB, 1 MiB, 16 MiB.
for (label, size, rounds) in [("4 KiB", 4096, 300), ("1 MiB", 1 << 20, 40), ("16 MiB", 16 << 20, 10)] {
    var bytes = [UInt8](repeating: 0, count: size)
    for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 2654435761 >> 13) }
    let rawURL = folder.appendingPathComponent("raw-\(size).bin")
    let documentURL = folder.appendingPathComponent("doc-\(size).bin")
    RawSafeSave.save(bytes, to: rawURL.path)
    let document = BlobDocument(fileURL: documentURL)
    document.blob = Data(bytes)
    try await document.saveThrowing(to: documentURL, for: .forCreating)
    let plainURL = folder.appendingPathComponent("plain-\(size).bin")
    let data = Data(bytes)
    var raw: [Double] = [], saved: [Double] = [], plain: [Double] = []
    for _ in 0..<rounds {  // interleaved, so all three see the same disk weather
        var start = now()
        RawSafeSave.save(bytes, to: rawURL.path)
        raw.append(Double(now() - start))
        start = now()
        try await document.saveThrowing(to: documentURL, for: .forOverwriting)
        saved.append(Double(now() - start))
        start = now()
        try Coordinator().coordinate(writingItemAt: plainURL) { url in
            try SafeSave.write(data, to: url, creating: false)
        }
        plain.append(Double(now() - start))
    }
    try await document.closeThrowing()
    let rawMedian = median(raw), savedMedian = median(saved)
    func ms(_ ns: Double) -> String { String(format: "%.3f ms", ns / 1e6) }
    print("| durable save of \(label) | \(ms(rawMedian)) | \(ms(savedMedian)) | \(String(format: "%.2f", savedMedian / rawMedian)) × | ≤ 1.15 × |")
    print("|   same, `SafeSave` in a coordinated write, no document | \(ms(rawMedian)) | \(ms(median(plain))) | \(String(format: "%.2f", median(plain) / rawMedian)) × | |")
}

// 2. Open of a 16 MiB document: peak resident memory in a fresh process.
let bigURL = folder.appendingPathComponent("big.bin")
try Data(repeating: 0x5A, count: 16 << 20).write(to: bigURL)
let child = Process()
child.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
child.arguments = ["--open-rss", bigURL.path]
let pipe = Pipe()
child.standardOutput = pipe
try child.run()
let reply = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
child.waitUntilExit()
let numbers = reply.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
if numbers.count == 3 {
    let grown = Double(numbers[1] - numbers[0]) * 1024
    let fileSize = Double(16 << 20)
    print("| open of a 16 MiB document: peak RSS growth ÷ file size | | \(String(format: "%.1f MiB", grown / 1_048_576)) | \(String(format: "%.2f", grown / fileSize)) × | ≤ 2.5 × |")
}

// 3. PNG codec speed on a 1024×1024 RGBA photo-like image.
let codec = CodecBenchmark.measure(width: 1024, height: 1024)
print("| PNG encode / decode of 1024×1024 RGBA (MB/s of pixels) | | \(String(format: "%.0f / %.0f", codec.encodeMBps, codec.decodeMBps)) | \(codec.compressedBytes) bytes compressed | |")
