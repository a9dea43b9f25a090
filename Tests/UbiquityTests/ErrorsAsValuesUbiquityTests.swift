import Foundation
import Glibc
import Testing
import TestSupport
@testable import FoundationCompatibility
@testable import Ubiquity

/// Errors as values (issue 17) through the cloud's layers: a move to the cloud and a key-value
/// write onto a full file system answer `underlyingErrno == .noSpace`, as themselves and as the
/// `NSError`s FoundationCompatibility makes of them.
@Suite("Errors as values: the cloud's layers", .enabled(if: SmallTmpfs.isAvailable, Comment(rawValue: SmallTmpfs.unavailableMessage)))
struct ErrorsAsValuesUbiquityTests {
    @Test("a move to the cloud onto a full file system: underlyingErrno is .noSpace, and through its NSError")
    func moveOntoFullDisk() async throws {
        let cloud = try ScratchCloud(tmpfsSize: "64k")
        defer { cloud.remove() }
        let local = try cloud.localFile("big.bin", String(repeating: "x", count: 256 * 1024))
        let inCloud = try cloud.documents().appending(path: "big.bin")
        var caught: (any Error)?
        do { try await cloud.account.setUbiquitous(true, itemAt: local, destinationURL: inCloud) } catch { caught = error }
        let error = try #require(caught as? UbiquityError, "\(String(describing: caught))")
        #expect(error.errno == .noSpace)
        #expect(error.underlyingErrno == .noSpace)
        #expect(!error.isCoordinationTimeout)
        let mapped = UbiquityErrorMapping.nsError(for: error, item: local)
        #expect(mapped.code == NSFileWriteOutOfSpaceError)
        #expect(mapped.underlyingErrno == .noSpace)
    }

    @Test("a key-value write onto a full file system: writeFailed keeps the save's error; underlyingErrno is .noSpace")
    func keyValueWriteOntoFullDisk() throws {
        try SmallTmpfs.withMount(size: "64k") { mount in
            let store = KeyValueStore(folder: mount, deviceIdentifier: "device-1")
            try store.set(.data(Data(count: 100_000)), forKey: "big")
            var caught: (any Error)?
            do { try store.synchronize() } catch { caught = error }
            let error = try #require(caught as? KeyValueStoreError, "\(String(describing: caught))")
            guard case .writeFailed(_, let underlying) = error else {
                Issue.record("not writeFailed: \(error)")
                return
            }
            #expect(underlying is DocumentError)
            #expect(error.underlyingErrno == .noSpace)
            #expect(error.errorDescription?.contains("not enough space") == true, "\(error.errorDescription ?? "")")
            #expect(error == error)
            #expect(KeyValueStoreError.writeFailed(path: "/p", underlying: Errno.noSpace)
                    == .writeFailed(path: "/p", underlying: Errno.noSpace))
            #expect(KeyValueStoreError.writeFailed(path: "/p", underlying: Errno.noSpace)
                    != .writeFailed(path: "/p", underlying: Errno.readOnlyFileSystem))
        }
    }
}
