import Glibc
import SystemSupport

// The change monitor's first look at one read of the kernel's queue, on the loop's thread: which
// reports are about presented items, other entries of their folders, or entries inside presented
// folders — and which are about nothing anyone is told of. Most of a busy folder's reports are
// the last kind: every save of a document is four or five reports (`.NAME.cdsave-…` made, written,
// closed, renamed to `NAME`), and only the rename's second half concerns a presenter. So:
//
// - **Gathered.** The loop waits ``ChangeMonitor/gatherInterval`` once reports are queued
//   before it reads (`InotifyLoop`'s gathering): a save's reports, and those of the saves that
//   follow within it, come in one read and one turn, not one wake-up of the thread each.
// - **One visit of the state per read.** Every report of the read is sorted out with the
//   monitor's lock taken once; the watch descriptor's folder (and subtree folder) is looked up
//   once per run of reports of the same descriptor, and each folder's report count (its
//   `generation`, which tells when it has settled) is advanced once per run.
// - **Save temporaries set aside on their bytes.** A report about a file named like this
//   package's save temporaries (`.NAME.cdsave-XXXXXXXXXXXX`, `.NAME.cdold-XXXXXXXXXXXX`: 12
//   lower-case hex digits) is counted (the folder is not quiet) and otherwise dropped before its
//   name is decoded: such a file is never a presented item's new place, a conflict copy or a
//   subitem anyone is told of (ChangeMonitor+Subtrees.swift), and what the save does to the
//   presented item is seen in the report of the rename to its name. While a presented item
//   itself has such a name (`State.presentedSaveTemporaries`), every report is read as before.
//   Folder reports (`IN_ISDIR`: a package's save) are read as before: the subtree code
//   watches and forgets folders by them.
// - **No names decoded for nothing.** A name is decoded into a string only for a report that
//   concerns a folder of presented items or a subtree folder, and only reports that do are kept.

extension ChangeMonitor {
    /// How long the monitor's thread waits, once the kernel has queued reports, for more before
    /// it reads them: reports reach presenters up to this much later, and a burst costs one
    /// wake-up of the thread instead of one a report. A save's four or five reports come in two
    /// groups, around the `fsync` of its temporary file (0.5 ms on an idle disk, 5 ms and more on
    /// a busy one): 8 ms takes in both, or several saves (measured: 1 ms left most saves at two
    /// wake-ups on a loaded machine; 4 ms at 0.8–0.9; 8 ms at 0.5–0.65). Far below what anyone
    /// notices of a change made by another program, and than the 200 ms a deletion waits.
    static let gatherInterval: Duration = .milliseconds(8)

    /// One read of the kernel's queue, on the loop's thread (``InotifyLoop``), as the kernel wrote
    /// it: sorted out (see the file's comment), then passed on together (``handle(_:_:mayFinishMoves:loop:)``),
    /// then the watches the kernel dropped are forgotten, then a full queue is told. The loop
    /// never ends (a failed `poll` or `read` would end it: then changes are no longer reported, as
    /// before such a failure ended the monitor's thread).
    func inotifyLoop(_ loop: InotifyLoop, didReadBatch events: InotifyReadBatch) {
        loop.assertInLoop()
        handleRead(events, loop: loop)
    }

    /// The same for reports already decoded (the loop calls ``inotifyLoop(_:didReadBatch:)``).
    func inotifyLoop(_ loop: InotifyLoop, didRead events: [InotifyEvent]) {
        loop.assertInLoop()
        handleRead(events, loop: loop)
    }

    /// What one read's reports come to, once sorted out.
    struct SortedRead {
        var reports: [Report] = []
        var treeReports: [TreeReport] = []
        var overflowed = false
        var dropped: [Int32] = []
        /// Whether a rename's first half of a presented item was waiting for its second half
        /// when the read was sorted out (`State.unmatchedMoves` is added to only on this thread).
        var hadUnmatchedMoves = false
    }

    private func handleRead<Events: Sequence>(_ events: Events, loop: InotifyLoop) where Events.Element: MonitoredEvent {
        var read = SortedRead()
        state.withLock { state in Self.sort(events, into: &read, in: &state) }
        if !read.reports.isEmpty || !read.treeReports.isEmpty {
            handle(read.reports, read.treeReports, mayFinishMoves: read.hadUnmatchedMoves, loop: loop)
        }
        if !read.dropped.isEmpty { forgetDroppedWatches(read.dropped) }
        if read.overflowed { handleOverflow() }
    }

    /// The folders one watch descriptor serves, looked up once for a run of its reports.
    private struct DescriptorRun {
        let descriptor: Int32
        /// The folder of presented items it watches, and their names there.
        let directory: String?
        let names: [String: Int]?
        /// The subtree folder it watches.
        let tree: String?
        /// How many reports of the run were read.
        var count: UInt64 = 0
    }

    /// Sorts out one read's reports (call with the lock held): what each is about, as
    /// `Report`s and `TreeReport`s, in the kernel's order; and each watched folder's report count.
    private static func sort<Events: Sequence>(_ events: Events, into read: inout SortedRead, in state: inout State)
        where Events.Element: MonitoredEvent {
        read.hadUnmatchedMoves = !state.unmatchedMoves.isEmpty
        let setAsideSaveTemporaries = state.presentedSaveTemporaries == 0
        var run: DescriptorRun?
        for event in events {
            let mask = event.mask
            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                read.overflowed = true  // the kernel's queue was full: reports were lost
                continue
            }
            if mask & UInt32(IN_IGNORED) != 0 {
                read.dropped.append(event.descriptor)  // the watch is gone (its folder was deleted)
                continue
            }
            if run?.descriptor != event.descriptor {
                if let run { count(run, in: &state) }
                let directory = state.directoryByDescriptor[event.descriptor]
                run = DescriptorRun(descriptor: event.descriptor, directory: directory,
                                    names: directory.flatMap { state.directories[$0]?.names },
                                    tree: state.treeFolderByDescriptor[event.descriptor])
            }
            run?.count += 1
            guard let current = run, current.directory != nil || current.tree != nil, !event.isAboutWatchedFolder else { continue }
            if setAsideSaveTemporaries && mask & UInt32(IN_ISDIR) == 0 && event.hasSaveTemporaryName { continue }
            let name = event.name
            if let directory = current.directory {
                let subject: Subject = current.names?[name] != nil ? .watched(CanonicalPath.join(directory, name))
                                                                  : .other(directory: directory)
                read.reports.append(Report(subject: subject, name: name, mask: mask, cookie: event.cookie))
            }
            if let tree = current.tree {
                read.treeReports.append(TreeReport(folder: tree, name: name, mask: mask))
            }
        }
        if let run { count(run, in: &state) }
    }

    /// Advances the report counts of the folders of `run` (call with the lock held).
    private static func count(_ run: DescriptorRun, in state: inout State) {
        if let tree = run.tree { state.treeFolders[tree]?.generation &+= run.count }
        if let directory = run.directory { state.directories[directory]?.generation &+= run.count }
    }

    /// `.NAME.cdsave-XXXXXXXXXXXX` / `.NAME.cdold-XXXXXXXXXXXX` (12 lower-case hex digits): the
    /// temporary items of CloudDocuments' safe saves (a name's bytes; no allocation).
    static func isSaveTemporary<Bytes: BidirectionalCollection<UInt8>>(bytes: Bytes) -> Bool {
        guard bytes.count > 20, bytes.first == UInt8(ascii: ".") else { return false }
        var index = bytes.endIndex
        for _ in 0..<12 {
            bytes.formIndex(before: &index)
            let byte = bytes[index]
            guard (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66) else { return false }
        }
        // Before the digits: `.cdsave-` or `.cdold-`, matched backwards.
        func endsWith(_ marker: StaticString) -> Bool {
            var position = index
            let count = marker.utf8CodeUnitCount
            return marker.withUTF8Buffer { marker in
                for offset in stride(from: count - 1, through: 0, by: -1) {
                    guard position != bytes.startIndex else { return false }
                    bytes.formIndex(before: &position)
                    if bytes[position] != marker[offset] { return false }
                }
                return true
            }
        }
        return endsWith(".cdsave-") || endsWith(".cdold-")
    }

    /// The same for a name (a lossless path string).
    static func isSaveTemporary(_ name: String) -> Bool {
        isSaveTemporary(bytes: name.utf8)  // the suffix is ASCII: as in the name's bytes
    }
}

/// A report of the kernel as the monitor sorts it out: as the kernel wrote it
/// (`InotifyRawEvent`) or decoded (`InotifyEvent`).
protocol MonitoredEvent {
    var descriptor: Int32 { get }
    var mask: UInt32 { get }
    var cookie: UInt32 { get }
    /// The entry's name (a lossless path string).
    var name: String { get }
    /// The report is about the watched folder itself (it names no entry).
    var isAboutWatchedFolder: Bool { get }
    /// The entry's name is a save temporary's (`ChangeMonitor.isSaveTemporary`).
    var hasSaveTemporaryName: Bool { get }
}

extension InotifyRawEvent: MonitoredEvent {
    var isAboutWatchedFolder: Bool { nameBytes.isEmpty }
    var hasSaveTemporaryName: Bool { ChangeMonitor.isSaveTemporary(bytes: nameBytes) }
}

extension InotifyEvent: MonitoredEvent {
    var isAboutWatchedFolder: Bool { name.isEmpty }
    var hasSaveTemporaryName: Bool { ChangeMonitor.isSaveTemporary(name) }
}
