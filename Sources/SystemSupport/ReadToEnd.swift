import Foundation
import Glibc

/// Reads from `descriptor`'s current offset to the end of the file, retrying on EINTR.
///
/// Reads straight into the buffer that becomes the `Data` (no second copy), sized for `sizeHint`
/// bytes plus one spare byte (so reaching the end of a file of the expected size needs no
/// growth), and grows it when the file is longer than the hint said (files in /proc, or a racing
/// writer). `progress` is called with the running total after each successful `read`.
///
/// - Throws: the `Errno` of the first failed `read`; the bytes read so far are lost.
package func readToEnd(_ descriptor: Int32, sizeHint: Int, chunkSize: Int = 1 << 20,
                       progress: ((Int) -> Void)? = nil) throws(Errno) -> Data {
    let expected = max(sizeHint, 0)
    var buffer = Data(count: expected + 1)
    var total = 0
    while true {
        if total == buffer.count {
            buffer.count += max(chunkSize / 16, expected / 8, 1)
        }
        let wanted = min(chunkSize, buffer.count - total)
        let result = buffer.withUnsafeMutableBytes { bytes in
            valueOrErrno { Glibc.read(descriptor, bytes.baseAddress.map { $0 + total }, wanted) }
        }
        let count: Int
        switch result {
        case .success(let value): count = value
        case .failure(let error): throw error
        }
        if count == 0 { break }
        total += count
        progress?(total)
    }
    if buffer.count != total { buffer.count = total }
    return buffer
}
