import CSystemShim
import Foundation
import Glibc
import Synchronization
import SystemSupport

/// What a metadata query needs of an evicted item — size, dates, package or not — read fast.
///
/// A placeholder carries them twice: in its JSON (``ItemPlaceholder``, the truth) and in the
/// extended attribute `user.clouddocs.ph` (`"1 SIZE MODIFIED_NS CREATED_NS PACKAGE"`,
/// ASCII), which one `lgetxattr` reads — a query gathering ten thousand evicted items must not
/// open and decode ten thousand JSON files. Where the file system keeps no user attributes, or
/// the attribute is missing or malformed, the JSON is read instead. Any thread.
struct PlaceholderFacts: Sendable, Hashable {
    /// Short on purpose: ext4 keeps an attribute inside the inode (no block read by the query's
    /// `getxattrat`) only while name and value fit in its 96 spare bytes of a 256-byte inode —
    /// with this name, values up to 60 bytes, which every size below 10 TB with any dates fits
    /// (`user.clouddocuments.placeholder` left 44, and pushed most values out to a block of their
    /// own: gathering evicted items then cost twice as much as gathering whole files).
    static let attributeName = "user.clouddocs.ph"

    var size: Int64
    var modifiedNanoseconds: Int64
    /// `Int64.min` when unknown.
    var createdNanoseconds: Int64
    var isPackage: Bool

    init(size: Int64, modifiedNanoseconds: Int64, createdNanoseconds: Int64, isPackage: Bool) {
        self.size = size
        self.modifiedNanoseconds = modifiedNanoseconds
        self.createdNanoseconds = createdNanoseconds
        self.isPackage = isPackage
    }

    init(_ placeholder: ItemPlaceholder) {
        self.init(size: placeholder.size, modifiedNanoseconds: Self.nanoseconds(placeholder.modificationDate),
                  createdNanoseconds: placeholder.creationDate.map(Self.nanoseconds) ?? .min, isPackage: placeholder.isPackage)
    }

    /// The attribute's value.
    var attributeValue: String {
        "1 \(size) \(modifiedNanoseconds) \(createdNanoseconds) \(isPackage ? 1 : 0)"
    }

    /// Parses an attribute value; `nil` when it is not one this release writes.
    init?(attributeValue text: Substring) {
        let fields = text.split(separator: " ")
        guard fields.count == 5, fields[0] == "1", let size = Int64(fields[1]), size >= 0,
              let modified = Int64(fields[2]), let created = Int64(fields[3]), fields[4] == "0" || fields[4] == "1"
        else { return nil }
        self.init(size: size, modifiedNanoseconds: modified, createdNanoseconds: created, isPackage: fields[4] == "1")
    }

    /// The facts of the placeholder file at `path` (a lossless path string): from its attribute,
    /// else from its JSON; `nil` when it is not a valid placeholder.
    static func read(placeholderAt path: String) -> PlaceholderFacts? {
        PathBytes.withCString(path) { read(placeholderAtCPath: $0) }
    }

    /// Whether the kernel has `getxattrat(2)` (Linux 6.13); cleared at the first ENOSYS.
    private static let hasGetxattrat = Atomic<Bool>(true)

    /// The facts of the placeholder named `entry` in the open folder `folder`, from its
    /// attribute read relative to the folder (`getxattrat`: no path resolution per entry — the
    /// query's walk reads ten thousand of them). `nil` when that cannot tell (an older kernel,
    /// no attribute, a malformed one): then use ``read(placeholderAtCPath:)``.
    static func readAttribute(in folder: Int32, entry: UnsafePointer<CChar>) -> PlaceholderFacts? {
        guard hasGetxattrat.load(ordering: .relaxed) else { return nil }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 96) { buffer -> PlaceholderFacts? in
            let count = cshim_getxattrat(folder, entry, attributeName, buffer.baseAddress, buffer.count)
            if count < 0, errno == ENOSYS { hasGetxattrat.store(false, ordering: .relaxed) }
            guard count > 0, count <= buffer.count else { return nil }
            return PlaceholderFacts(attributeBytes: UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// As ``read(placeholderAt:)``, for a C path (the query's walk builds them without Strings).
    static func read(placeholderAtCPath cPath: UnsafePointer<CChar>) -> PlaceholderFacts? {
        let fromAttribute = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 96) { buffer -> PlaceholderFacts? in
            let count = lgetxattr(cPath, attributeName, buffer.baseAddress, buffer.count)
            guard count > 0, count <= buffer.count else { return nil }
            return PlaceholderFacts(attributeBytes: UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
        if let fromAttribute { return fromAttribute }
        let path = String(cString: cPath)
        return (try? ItemPlaceholder.read(at: PathBytes.fileURL(path, isDirectory: false))).map(PlaceholderFacts.init)
    }

    /// Parses an attribute value from its bytes without making Strings or arrays (the walk's
    /// fast path: it runs once per evicted item a query gathers).
    init?(attributeBytes bytes: UnsafeBufferPointer<UInt8>) {
        var numbers: (Int64, Int64, Int64, Int64, Int64) = (0, 0, 0, 0, 0)
        var count = 0
        var index = 0
        while index < bytes.count {
            guard count < 5 else { return nil }
            var negative = false
            if bytes[index] == UInt8(ascii: "-") { negative = true; index += 1 }
            var value: Int64 = 0, digits = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                // Accumulated with its sign, so that Int64.min (an unknown birth time) fits.
                let digit = Int64(bytes[index] - UInt8(ascii: "0"))
                let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (next, overflow2) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
                guard !overflow1, !overflow2 else { return nil }
                value = next
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            switch count {
            case 0: numbers.0 = value
            case 1: numbers.1 = value
            case 2: numbers.2 = value
            case 3: numbers.3 = value
            default: numbers.4 = value
            }
            count += 1
            if index < bytes.count {
                guard bytes[index] == UInt8(ascii: " "), index + 1 < bytes.count else { return nil }
                index += 1
            }
        }
        guard count == 5, numbers.0 == 1, numbers.1 >= 0, numbers.4 == 0 || numbers.4 == 1 else { return nil }
        self.init(size: numbers.1, modifiedNanoseconds: numbers.2, createdNanoseconds: numbers.3, isPackage: numbers.4 == 1)
    }

    /// Stores the attribute on the placeholder file at `path`; `false` when the file system
    /// refuses user attributes (readers then read the JSON).
    @discardableResult
    func write(toPlaceholderAt path: String) -> Bool {
        let bytes = Array(attributeValue.utf8)
        let result = PathBytes.withCString(path) { cPath in
            bytes.withUnsafeBytes { raw in lsetxattr(cPath, Self.attributeName, raw.baseAddress, raw.count, 0) }
        }
        return result == 0
    }

    private static func nanoseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1_000_000_000).rounded()
        return value.isFinite && abs(value) < 9.2e18 ? Int64(value) : 0
    }
}
