/// The presenters a lookup found in other processes for one item, sorted as the message rules
/// need them: of the item itself, of the directories above it (nearest first, as the lookup
/// answered), and of items inside it.
struct RemoteFound {
    var item: [PresenterAddress] = []
    var ancestors: [PresenterAddress] = []
    var inside: [PresenterAddress] = []

    init() {}

    /// Every presenter found that is of the item or inside it (a package and its contents).
    var all: [PresenterAddress] { item + inside }

    /// Sorts `addresses` against `path` (canonical paths); an address that is none of the three
    /// (a stale answer) is dropped.
    init(_ addresses: [PresenterAddress], item path: String) {
        for address in addresses {
            if address.path == path {
                item.append(address)
            } else if CanonicalPath.isInside(path, address.path) {
                ancestors.append(address)
            } else if CanonicalPath.isInside(address.path, path) {
                inside.append(address)
            }
        }
    }
}
