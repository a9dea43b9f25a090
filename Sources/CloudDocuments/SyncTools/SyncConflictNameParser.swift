// The per-scheme parsers behind `SyncConflictNaming.conflictCopy(named:options:)`. They work on the
// UTF-8 bytes of a lossless path string: every marker is ASCII, and the escapes of bytes that are
// not UTF-8 contain no ASCII, so cutting at a marker never splits a character or an escape and the
// pieces decode back losslessly.

private let dot = UInt8(ascii: ".")
private let dash = UInt8(ascii: "-")
private let space = UInt8(ascii: " ")
private let underscore = UInt8(ascii: "_")
private let openParen = UInt8(ascii: "(")
private let closeParen = UInt8(ascii: ")")

struct ConflictNameParser {
    let name: String
    let bytes: [UInt8]

    // MARK: Syncthing

    /// `STEM.sync-conflict-YYYYMMDD-HHMMSS-DEVICE[.EXT]`, DEVICE 7 of `[A-Z0-9]`. Syncthing splits the
    /// original at its last dot (`filepath.Ext`), so `.hidden` gives an empty stem; like Syncthing's
    /// own recogniser, any tail starting with a dot is accepted as the extension.
    func syncthing() -> SyncConflictCopy? {
        let marker = Array(".sync-conflict-".utf8)
        for start in occurrences(of: marker).reversed() {
            let at = start + marker.count
            guard at + 23 <= bytes.count,
                  let stamp = compactTimestamp(at: at),
                  bytes[at + 15] == dash,
                  bytes[(at + 16)..<(at + 23)].allSatisfy(isUpperAlphanumeric)
            else { continue }
            let rest = bytes[(at + 23)...]
            guard rest.isEmpty || rest.first == dot else { continue }
            guard let original = original(bytes[..<start], rest) else { continue }
            return SyncConflictCopy(name: name, originalName: original, scheme: .syncthing,
                                    party: text(bytes[(at + 16)..<(at + 23)]),
                                    partyRole: .madeTheCurrentVersion, timestamp: stamp)
        }
        return nil
    }

    // MARK: Nextcloud / ownCloud

    /// `NAME (conflicted copy [USER ]YYYY-MM-DD HHMMSS)[.EXT]`, EXT without dots (the client inserts
    /// the tag before the last dot, or at the end for names without one or with a leading dot only).
    /// The client replaces parentheses in USER, so the tag ends at the first `)`.
    func nextcloud() -> SyncConflictCopy? {
        let marker = Array(" (conflicted copy ".utf8)
        for start in occurrences(of: marker).reversed() where start > 0 {
            let at = start + marker.count
            guard let close = bytes[at...].firstIndex(of: closeParen) else { continue }
            let body = bytes[at..<close]
            guard !body.contains(openParen), body.count >= 17 else { continue }
            let stampAt = close - 17
            guard let stamp = dashedTimestamp(at: stampAt, withTime: true) else { continue }
            var user: String?
            if body.count > 17 {
                guard body.count > 18, bytes[stampAt - 1] == space else { continue }
                user = text(bytes[at..<(stampAt - 1)])
            }
            let rest = bytes[(close + 1)...]
            guard isSingleExtension(rest), let original = original(bytes[..<start], rest) else { continue }
            return SyncConflictCopy(name: name, originalName: original, scheme: .nextcloud, party: user,
                                    partyRole: .savedTheCopy, timestamp: stamp)
        }
        return nil
    }

    /// `NAME_conflict-YYYYMMDD-HHMMSS[.EXT]` or `NAME_conflict_USER-YYYYMMDD-HHMMSS[.EXT]` (USER from
    /// the client's `CSYNC_CONFLICT_FILE_USERNAME`); EXT without dots.
    func nextcloudLegacy() -> SyncConflictCopy? {
        let marker = Array("_conflict".utf8)
        for start in occurrences(of: marker).reversed() where start > 0 {
            let at = start + marker.count
            guard at < bytes.count, bytes[at] == dash || bytes[at] == underscore else { continue }
            for restStart in extensionStarts(after: at) {
                let middle = bytes[at..<restStart]
                guard middle.count >= 16, bytes[restStart - 16] == dash,
                      let stamp = compactTimestamp(at: restStart - 15) else { continue }
                var user: String?
                if bytes[at] == dash {
                    guard middle.count == 16 else { continue }
                } else {
                    guard middle.count > 17 else { continue }
                    user = text(bytes[(at + 1)..<(restStart - 16)])
                }
                guard let original = original(bytes[..<start], bytes[restStart...]) else { continue }
                return SyncConflictCopy(name: name, originalName: original, scheme: .nextcloudLegacy,
                                        party: user, partyRole: .savedTheCopy, timestamp: stamp)
            }
        }
        return nil
    }

    // MARK: Dropbox

    /// `NAME (USER's conflicted copy YYYY-MM-DD[ (N)])[.EXT]` with `'` or `’`. USER (a user or, from
    /// older clients, a computer name) may contain balanced parentheses.
    func dropbox() -> SyncConflictCopy? {
        for marker in [Array("'s conflicted copy ".utf8), Array("\u{2019}s conflicted copy ".utf8)] {
            for start in occurrences(of: marker).reversed() {
                var at = start + marker.count
                guard let stamp = dashedTimestamp(at: at, withTime: false) else { continue }
                at += 10
                var number: Int?
                if at + 1 < bytes.count, bytes[at] == space, bytes[at + 1] == openParen {
                    guard let close = bytes[(at + 2)...].firstIndex(of: closeParen),
                          let value = decimal(bytes[(at + 2)..<close]) else { continue }
                    number = value
                    at = close + 1
                }
                guard at < bytes.count, bytes[at] == closeParen else { continue }
                let rest = bytes[(at + 1)...]
                guard rest.isEmpty || rest.first == dot,
                      let opener = openingParenthesis(before: start), opener + 1 < start,
                      let original = original(bytes[..<(opener - 1)], rest), opener - 1 > 0
                else { continue }
                return SyncConflictCopy(name: name, originalName: original, scheme: .dropbox,
                                        party: text(bytes[(opener + 1)..<start]), partyRole: .savedTheCopy,
                                        timestamp: stamp, number: number)
            }
        }
        return nil
    }

    // MARK: Unison

    /// `NAME (conflict[ #N]_on_YYYY-MM-DD[_was_deleted])`: Unison appends the tag to the whole name.
    func unison() -> SyncConflictCopy? {
        guard bytes.last == closeParen else { return nil }
        let marker = Array(" (conflict".utf8)
        guard let start = occurrences(of: marker).last, start > 0 else { return nil }
        var at = start + marker.count
        var number: Int?
        if hasPrefix(" #", at: at) {
            var end = at + 2
            while end < bytes.count, isDigit(bytes[end]) { end += 1 }
            guard let value = decimal(bytes[(at + 2)..<end]) else { return nil }
            number = value
            at = end
        }
        guard hasPrefix("_on_", at: at), let stamp = dashedTimestamp(at: at + 4, withTime: false) else { return nil }
        at += 14
        let wasDeleted = hasPrefix("_was_deleted", at: at)
        if wasDeleted { at += 12 }
        guard at == bytes.count - 1, let original = original(bytes[..<start], []) else { return nil }
        return SyncConflictCopy(name: name, originalName: original, scheme: .unison, timestamp: stamp,
                                number: number, originalWasDeleted: wasDeleted)
    }

    // MARK: rclone bisync

    /// `NAME..path1` / `NAME..path2`, appended after the extension.
    func rclonePath() -> SyncConflictCopy? {
        let suffixLength = 7  // "..pathN"
        guard bytes.count > suffixLength, let last = bytes.last,
              last == UInt8(ascii: "1") || last == UInt8(ascii: "2"),
              bytes[(bytes.count - suffixLength)..<(bytes.count - 1)].elementsEqual("..path".utf8),
              let original = original(bytes.dropLast(suffixLength), []) else { return nil }
        return SyncConflictCopy(name: name, originalName: original, scheme: .rcloneBisyncPath,
                                number: Int(last - UInt8(ascii: "0")))
    }

    /// `NAME.conflictN`, N ≥ 1 without leading zeros.
    func rcloneNumbered() -> SyncConflictCopy? {
        let marker = Array(".conflict".utf8)
        guard let start = occurrences(of: marker).last, start > 0 else { return nil }
        let digits = bytes[(start + marker.count)...]
        guard digits.first != UInt8(ascii: "0"), let number = decimal(digits), number >= 1,
              let original = original(bytes[..<start], []) else { return nil }
        return SyncConflictCopy(name: name, originalName: original, scheme: .rcloneBisyncNumbered, number: number)
    }

    // MARK: OneDrive (abraunegg client)

    /// The parts of `STEM-HOST-safeBackup-NNNN[.EXT]`: everything before `-safeBackup-`, the
    /// extension and the counter. EXT as D's `extension`: after the last dot, none for a leading dot.
    func oneDriveSafeBackupParts() -> (stemAndHost: ArraySlice<UInt8>, rest: ArraySlice<UInt8>, number: Int)? {
        let marker = Array("-safeBackup-".utf8)
        for start in occurrences(of: marker).reversed() where start > 0 {
            let at = start + marker.count
            guard at + 4 <= bytes.count, let number = decimal(bytes[at..<(at + 4)]) else { continue }
            let rest = bytes[(at + 4)...]
            guard isSingleExtension(rest) else { continue }
            return (bytes[..<start], rest, number)
        }
        return nil
    }

    func oneDriveSafeBackup(hosts: Set<String>) -> SyncConflictCopy? {
        guard let parts = oneDriveSafeBackupParts(),
              let (stem, host) = split(parts.stemAndHost, hosts: hosts),
              let original = original(stem, parts.rest) else { return nil }
        return SyncConflictCopy(name: name, originalName: original, scheme: .oneDriveSafeBackup,
                                party: host, partyRole: .savedTheCopy, number: parts.number)
    }

    /// `STEM-HOST[-N][.EXT]` for a HOST in `hosts` (N from 2; the first copy has no counter).
    func oneDriveLegacy(hosts: Set<String>) -> SyncConflictCopy? {
        guard !hosts.isEmpty else { return nil }
        for restStart in extensionStarts(after: 1) {
            let head = bytes[..<restStart]
            var heads: [(ArraySlice<UInt8>, Int)] = []
            if let lastDash = head.lastIndex(of: dash), let counter = decimal(head[(lastDash + 1)...]),
               counter >= 2, head[lastDash + 1] != UInt8(ascii: "0") {
                heads.append((head[..<lastDash], counter))
            }
            heads.append((head, 1))
            for (candidate, counter) in heads {
                guard let (stem, host) = split(candidate, hosts: hosts),
                      let original = original(stem, bytes[restStart...]) else { continue }
                return SyncConflictCopy(name: name, originalName: original, scheme: .oneDriveLegacy,
                                        party: host, partyRole: .savedTheCopy, number: counter)
            }
        }
        return nil
    }

    /// `stemAndHost` as `STEM-HOST` for the longest matching HOST in `hosts`, STEM not empty.
    private func split(_ stemAndHost: ArraySlice<UInt8>, hosts: Set<String>) -> (ArraySlice<UInt8>, String)? {
        for host in hosts.sorted(by: { $0.utf8.count > $1.utf8.count }) {
            let suffix = [dash] + Array(host.utf8)
            guard !host.isEmpty, stemAndHost.count > suffix.count,
                  stemAndHost.suffix(suffix.count).elementsEqual(suffix) else { continue }
            return (stemAndHost.dropLast(suffix.count), host)
        }
        return nil
    }

    // MARK: Pieces

    /// The original name `prefix + rest`, or nil when it is not a usable name. Every scheme passes
    /// a prefix of the copy's name and a suffix of it: the change monitor relies on that to rule
    /// names out without parsing them (`SyncToolRules.mayBeConflictCopy(named:ofAnyOf:)`).
    func original(_ prefix: ArraySlice<UInt8>, _ rest: ArraySlice<UInt8>) -> String? {
        let combined = Array(prefix) + Array(rest)
        guard !combined.isEmpty, combined != [dot], combined != [dot, dot] else { return nil }
        return text(combined[...])
    }

    /// Decodes a slice cut at ASCII boundaries of the (valid UTF-8) lossless string.
    func text(_ slice: ArraySlice<UInt8>) -> String { String(decoding: slice, as: UTF8.self) }

    /// Whether the name contains `marker`.
    func contains(_ marker: [UInt8]) -> Bool {
        guard bytes.count >= marker.count else { return false }
        for index in 0...(bytes.count - marker.count)
        where bytes[index] == marker[0] && bytes[index..<(index + marker.count)].elementsEqual(marker) {
            return true
        }
        return false
    }

    /// Start indices of `marker` in the name, ascending.
    func occurrences(of marker: [UInt8]) -> [Int] {
        guard bytes.count >= marker.count else { return [] }
        var result: [Int] = []
        var index = 0
        while index + marker.count <= bytes.count {
            if bytes[index] == marker[0], bytes[index..<(index + marker.count)].elementsEqual(marker) {
                result.append(index)
            }
            index += 1
        }
        return result
    }

    func hasPrefix(_ text: String, at index: Int) -> Bool {
        let marker = Array(text.utf8)
        return index + marker.count <= bytes.count && bytes[index..<(index + marker.count)].elementsEqual(marker)
    }

    /// Where an extension may start: the end of the name (no extension) and the last dot after `index`.
    func extensionStarts(after index: Int) -> [Int] {
        var starts = [bytes.count]
        if let lastDot = bytes.lastIndex(of: dot), lastDot > index { starts.append(lastDot) }
        return starts
    }

    /// Empty, or a dot followed by anything without a dot.
    func isSingleExtension(_ rest: ArraySlice<UInt8>) -> Bool {
        rest.isEmpty || (rest.first == dot && !rest.dropFirst().contains(dot))
    }

    /// `YYYYMMDD-HHMMSS` at `index`.
    func compactTimestamp(at index: Int) -> SyncConflictTimestamp? {
        guard index + 15 <= bytes.count, bytes[index + 8] == dash,
              let year = decimal(bytes[index..<(index + 4)]), let month = decimal(bytes[(index + 4)..<(index + 6)]),
              let day = decimal(bytes[(index + 6)..<(index + 8)]),
              let hour = decimal(bytes[(index + 9)..<(index + 11)]),
              let minute = decimal(bytes[(index + 11)..<(index + 13)]),
              let second = decimal(bytes[(index + 13)..<(index + 15)]) else { return nil }
        return validTimestamp(year, month, day, hour, minute, second)
    }

    /// `YYYY-MM-DD`, followed by ` HHMMSS` when `withTime`, at `index`.
    func dashedTimestamp(at index: Int, withTime: Bool) -> SyncConflictTimestamp? {
        guard index + (withTime ? 17 : 10) <= bytes.count, bytes[index + 4] == dash, bytes[index + 7] == dash,
              let year = decimal(bytes[index..<(index + 4)]), let month = decimal(bytes[(index + 5)..<(index + 7)]),
              let day = decimal(bytes[(index + 8)..<(index + 10)]) else { return nil }
        guard withTime else { return validTimestamp(year, month, day, nil, nil, nil) }
        guard bytes[index + 10] == space, let hour = decimal(bytes[(index + 11)..<(index + 13)]),
              let minute = decimal(bytes[(index + 13)..<(index + 15)]),
              let second = decimal(bytes[(index + 15)..<(index + 17)]) else { return nil }
        return validTimestamp(year, month, day, hour, minute, second)
    }

    private func validTimestamp(_ year: Int, _ month: Int, _ day: Int,
                                _ hour: Int?, _ minute: Int?, _ second: Int?) -> SyncConflictTimestamp? {
        guard (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour ?? 0),
              (0...59).contains(minute ?? 0), (0...60).contains(second ?? 0) else { return nil }
        return SyncConflictTimestamp(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// The value of 1 to 9 decimal digits, else nil.
    func decimal(_ digits: ArraySlice<UInt8>) -> Int? {
        guard (1...9).contains(digits.count), digits.allSatisfy(isDigit) else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    /// The index of the `(` (preceded by a space) that opens the parenthesis closing after `end`,
    /// skipping balanced pairs inside.
    func openingParenthesis(before end: Int) -> Int? {
        var depth = 0
        var index = end - 1
        while index >= 1 {
            switch bytes[index] {
            case closeParen: depth += 1
            case openParen:
                if depth == 0 { return bytes[index - 1] == space ? index : nil }
                depth -= 1
            default: break
            }
            index -= 1
        }
        return nil
    }
}

private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

private func isUpperAlphanumeric(_ byte: UInt8) -> Bool {
    isDigit(byte) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
}
