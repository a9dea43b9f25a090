import Foundation

/// Where a document's file has been since it was last opened or saved somewhere new, most recent
/// last: a save asked for any of these places is a save over the document's *own* file, so it is
/// checked for other programs' changes (merged, or kept as a conflict version) wherever the
/// coordinator finds the file.
///
/// Deciding "own file" from the save's requested URL, the URL when the save started and the URL
/// now is not enough while the file's folder moves back and forth: the soak found a save asked
/// for `sub.moved/shared-2.txt`, started after the notice of a move to `sub/…` and run when the
/// folder was back at `sub.moved` before that notice arrived — none of the three matched, the
/// check was skipped, and the save overwrote a line another process had just appended. Every
/// place the file had is remembered instead (a bounded list: a document moved more than
/// ``limit`` times without a save forgets the oldest places, which only means a save asked for a
/// place that old is treated as a save to another file).
struct DocumentLocations: Sendable {
    /// How many places are remembered.
    static let limit = 32

    private(set) var places: [URL]

    init(_ url: URL) { places = [url] }

    /// Whether `url` is one of the places the file has had.
    func contains(_ url: URL) -> Bool {
        places.contains { $0.isSameFilePath(as: url) }
    }

    /// The file moved to `url` (a move notice, a revert that found it elsewhere, a save over it).
    mutating func moved(to url: URL) {
        places.removeAll { $0.isSameFilePath(as: url) }
        places.append(url)
        if places.count > Self.limit { places.removeFirst(places.count - Self.limit) }
    }

    /// The document now stands for the file at `url` and no other (opened there, or saved there
    /// as a new file): earlier places are another file's.
    mutating func reset(to url: URL) { places = [url] }
}
