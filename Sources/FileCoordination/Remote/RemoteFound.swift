/// The presenters a look-up found in other processes (`PresenterDirectory.lookUpElsewhere`), kept
/// in the order the look-up answered (process by process; in each, the presenters of the path
/// looked up, then of the folders above it nearest first, then of items inside it).
///
/// One look-up is read around any path: `presenters(at:)`, `presenters(above:)` and
/// `presenters(inside:)` keep the addresses that are, for that path, of the item itself, of a
/// folder above it, or of an item inside it — so the look-up of a package answers for the package
/// and for the item inside it that was accessed. An address that is none of the three (a stale
/// answer, or a presenter of another item of the package) is in none of them.
struct RemoteFound: Sendable {
    /// Every address the look-up answered, in its order.
    let addresses: [PresenterAddress]
    /// The path `item`, `ancestors` and `inside` are read around.
    let path: String

    /// Nothing found (no look-up was made).
    init() {
        addresses = []
        path = ""
    }

    /// What a look-up answered, read around `path` by `item`, `ancestors` and `inside`.
    init(_ addresses: [PresenterAddress], item path: String) {
        self.addresses = addresses
        self.path = path
    }

    /// Presenters of exactly `path`.
    func presenters(at path: String) -> [PresenterAddress] {
        addresses.filter { $0.path == path }
    }

    /// Presenters of the folders above `path`, nearest first in each process.
    func presenters(above path: String) -> [PresenterAddress] {
        addresses.filter { CanonicalPath.isInside(path, $0.path) }
    }

    /// Presenters of items strictly inside `path`.
    func presenters(inside path: String) -> [PresenterAddress] {
        addresses.filter { CanonicalPath.isInside($0.path, path) }
    }

    /// Presenters of the item the look-up was read around (`path`).
    var item: [PresenterAddress] { presenters(at: path) }
    /// Presenters of the folders above `path`, nearest first in each process.
    var ancestors: [PresenterAddress] { presenters(above: path) }
    /// Presenters of items inside `path`.
    var inside: [PresenterAddress] { presenters(inside: path) }
}
