import Glibc
import Synchronization

/// Who presents what, across the processes of one lock directory: the memory-mapped file
/// `<lockdir>/@presence` (Docs/RemotePresenters.md, *The table*). A coordinator learns from it,
/// with a few memory loads and no system call, which other processes may present an item or a
/// directory above it (`candidates(forItemAt:)`) or something inside it
/// (`candidates(inside:)`). Answers may be false positives (hash collisions, a dead process not
/// yet swept), never false negatives.
///
/// Layout (all integers native-endian, the file is only shared on one machine):
/// - offset 0: magic (UInt64); offset 8: the mask of slots in use (UInt64);
/// - offset 64 + 64·s: slot s's record — its process id (UInt64, 0 when free), its
///   publication counter (UInt64, bumped by every path it adds), the slots its main queue
///   waits for (UInt64, see `mainQueueWaits(ofSlot:)`) and its clean mark (UInt64, see
///   `isKnownClean(slot:process:)`);
/// - offset `itemFilterOffset`: `wordCount` words, bit s of a word set when slot s presents a
///   path selecting that word; then as many words for the paths strictly *inside* which slot s
///   presents something.
/// A path selects two words per filter (the two halves of its mixed 64-bit hash).
///
/// Slot s is owned by whoever holds an exclusive OFD lock on byte s of the file: the kernel
/// drops it when the process dies, so a slot whose lock is free is dead or free.
final class PresenceTable: @unchecked Sendable {
    // @unchecked: `base` points into a shared mapping that stays mapped for the life of the
    // process (never unmapped: its SIGBUS guard keeps owning the addresses); every access to the
    // words and records is atomic.
    static let fileName = "@presence"
    static let slotCount = 64
    static let wordCount = 1 << 18
    static let magic: UInt64 = 0x3130_5345_5250_4443  // "CDPRES01"
    static let itemFilterOffset = 4096
    static var insideFilterOffset: Int { itemFilterOffset + wordCount * 8 }
    static var fileSize: Int { insideFilterOffset + wordCount * 8 }

    /// The slots claimed through this mapping — by this process, since `of(directoryPath:)`
    /// maps each table once per process. Coordinators leave them out: presenters of this
    /// process are messaged by its own runtimes.
    let ownSlots = Atomic<UInt64>(0)

    private let base: UnsafeMutableRawPointer
    /// The descriptor the mapping was made from (kept for `F_OFD_GETLK` on slot bytes).
    private let fd: Int32
    let path: String

    private init(base: UnsafeMutableRawPointer, fd: Int32, path: String) {
        self.base = base
        self.fd = fd
        self.path = path
    }

    @inline(__always)
    private func word(_ offset: Int) -> UnsafeMutablePointer<Atomic<UInt64>> {
        (base + offset).assumingMemoryBound(to: Atomic<UInt64>.self)
    }
    private var inUse: UnsafeMutablePointer<Atomic<UInt64>> { word(8) }
    private func recordPID(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt64>> { word(64 + 64 * slot) }
    private func recordCounter(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt64>> { word(64 + 64 * slot + 8) }
    private func recordMainWaits(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt64>> { word(64 + 64 * slot + 16) }
    private func recordCleanMark(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt64>> { word(64 + 64 * slot + 24) }

    /// The clean mark's tag ("CLN" in the high bytes); the low 32 bits are the owner's pid.
    private static let cleanTag: UInt64 = 0x434C_4E00_0000_0000
    @inline(__always)
    private func itemWord(_ index: Int) -> UnsafeMutablePointer<Atomic<UInt64>> { word(Self.itemFilterOffset + 8 * index) }
    @inline(__always)
    private func insideWord(_ index: Int) -> UnsafeMutablePointer<Atomic<UInt64>> { word(Self.insideFilterOffset + 8 * index) }

    // MARK: Opening

    /// Per lock directory, the mapped table, or nil when it could not be made (not tried again).
    private static let mapped = Locked<[String: PresenceTable?]>([:])

    /// The table of the lock directory at `directoryPath`, mapped once per process; nil when the
    /// file cannot be made or mapped (then nothing is published or asked: presenters in other
    /// processes are not reached, as before this transport existed).
    static func of(directoryPath: String) -> PresenceTable? {
        mapped.withLock { mapped in
            if let known = mapped[directoryPath] { return known }
            let table = open(directoryPath + "/" + fileName)
            mapped[directoryPath] = .some(table)
            return table
        }
    }

    /// Opens (making it if needed) and maps a table file; for tests, any path.
    static func open(_ path: String) -> PresenceTable? {
        // Guarded against truncation (SharedWordFile): a same-user process that truncates the
        // file then costs this process its view of the table (private zeros: no presenter
        // elsewhere is reached, none of ours is published), never its life.
        guard let (file, fd) = SharedWordFile.mapKeepingDescriptor(path, words: fileSize / 8) else { return nil }
        let table = PresenceTable(base: file.address, fd: fd, path: path)
        // A zero file becomes a table; a file with another magic is not ours to use.
        var expected: UInt64 = 0
        let magic = table.word(0)
        while true {
            let (exchanged, original) = magic.pointee.compareExchange(expected: expected, desired: Self.magic, ordering: .sequentiallyConsistent)
            if exchanged || original == Self.magic { return table }
            if original != 0 { return nil }  // leaks one mapping of a foreign file: never used again
            expected = original
        }
    }

    // MARK: Asking (any process)

    /// The slots (bit s for slot s) that may present the item at `path` or a directory above it,
    /// leaving out `excluding`. Zero, with one load, when no slot is in use but `excluding`.
    @inline(__always)
    func candidates(forItemAt path: String, excluding: UInt64 = 0) -> UInt64 {
        let active = inUse.pointee.load(ordering: .acquiring) & ~excluding
        guard active != 0 else { return 0 }
        var found: UInt64 = 0
        var hash = StableHash.offsetBasis
        var first = true
        for byte in path.utf8 {
            if byte == UInt8(ascii: "/"), !first { found |= itemBits(hash) }
            hash = StableHash.step(hash, byte)
            if first {
                first = false
                found |= itemBits(hash)  // "/"
            }
        }
        found |= itemBits(hash)
        return found & active
    }

    /// The slots that may present something strictly inside the directory `path`.
    func candidates(inside path: String, excluding: UInt64 = 0) -> UInt64 {
        let active = inUse.pointee.load(ordering: .acquiring) & ~excluding
        guard active != 0 else { return 0 }
        let (a, b) = Self.words(StableHash.fnv1a64(path.utf8))
        return insideWord(a).pointee.load(ordering: .acquiring) & insideWord(b).pointee.load(ordering: .acquiring) & active
    }

    @inline(__always)
    private func itemBits(_ hash: UInt64) -> UInt64 {
        let (a, b) = Self.words(hash)
        return itemWord(a).pointee.load(ordering: .acquiring) & itemWord(b).pointee.load(ordering: .acquiring)
    }

    /// The two words a path's hash selects in a filter.
    @inline(__always)
    static func words(_ hash: UInt64) -> (Int, Int) {
        // fmix64 (MurmurHash3's finalizer), so both halves depend on every byte.
        var h = hash
        h ^= h >> 33; h &*= 0xff51_afd7_ed55_8ccd
        h ^= h >> 33; h &*= 0xc4ce_b9fe_1a85_ec53
        h ^= h >> 33
        return (Int(truncatingIfNeeded: h) & (wordCount - 1), Int(truncatingIfNeeded: h >> 32) & (wordCount - 1))
    }

    /// The slots claimed (by live processes, or by dead ones not reaped yet).
    var slotsInUse: UInt64 { inUse.pointee.load(ordering: .acquiring) }

    /// The process id recorded for `slot` (0 when free).
    func pid(ofSlot slot: Int) -> Int32 {
        Int32(truncatingIfNeeded: recordPID(slot).pointee.load(ordering: .acquiring))
    }

    /// The slot's publication counter: bumped by every path its owner adds, so it is unchanged
    /// exactly while the slot published nothing new.
    func publications(ofSlot slot: Int) -> UInt64 {
        recordCounter(slot).pointee.load(ordering: .acquiring)
    }

    /// The slot whose owner is the process `pid`, if it has one.
    func slot(ofProcess pid: Int32) -> Int? {
        let used = slotsInUse
        return (0..<Self.slotCount).first { used & (1 << UInt64($0)) != 0 && self.pid(ofSlot: $0) == pid }
    }

    /// True when the owner of `slot`, the process `pid`, says none of its presenters has unsaved
    /// changes: its clean mark is the tag with its own pid (a slot never marked, marked by
    /// another owner before, or by a version of this package without marks reads as "ask").
    /// A hint that saves save requests, never a lock: see `RemotePresence.report`.
    func isKnownClean(slot: Int, process pid: Int32) -> Bool {
        let owner = UInt64(UInt32(bitPattern: pid))
        return recordCleanMark(slot).pointee.load(ordering: .sequentiallyConsistent) == Self.cleanTag | owner
            && recordPID(slot).pointee.load(ordering: .acquiring) == owner
    }

    // MARK: Waits of main queues (Docs/RemotePresenters.md, *Save requests and wait cycles*)

    /// The slots whose processes the main queue of `slot`'s owner is waiting for, in a
    /// coordination (lookups and presenters' answers); 0 when it waits for nobody.
    func mainQueueWaits(ofSlot slot: Int) -> UInt64 {
        recordMainWaits(slot).pointee.load(ordering: .sequentiallyConsistent)
    }

    /// True when the main queue of `slot`'s owner waits for `target`, directly or through the main
    /// queues of other processes waiting in turn (at most 64 steps: one per slot).
    func mainQueueWaits(ofSlot slot: Int, reach target: Int) -> Bool {
        let targetBit: UInt64 = 1 << UInt64(target)
        var seen: UInt64 = 0
        var frontier = mainQueueWaits(ofSlot: slot)
        while frontier & ~seen != 0 {
            if frontier & targetBit != 0 { return true }
            let next = frontier & ~seen
            seen |= next
            frontier = 0
            for waited in 0..<Self.slotCount where next & (1 << UInt64(waited)) != 0 {
                frontier |= mainQueueWaits(ofSlot: waited)
            }
        }
        return false
    }

    /// When `slot`'s owner is dead (nobody holds its lock), sweeps its bits and frees it. True
    /// when the slot is free now; false when a live process holds it.
    @discardableResult
    func reapIfDead(_ slot: Int) -> Bool {
        guard let claim = SlotClaim(table: self, slot: slot) else { return false }
        claim.release()
        return true
    }

    // MARK: Publishing (the owner of a slot)

    /// A slot claimed by this process: the only way to set bits. Holds the slot's lock (its own
    /// open file description) until `release()` or the process ends.
    final class SlotClaim: Sendable {
        let table: PresenceTable
        let slot: Int
        private let lockFD: Int32
        /// How many published paths select each word, per filter (0 → 1 sets the bit, 1 → 0 clears it).
        private let counts = Locked<(item: [Int: Int], inside: [Int: Int], released: Bool)>(([:], [:], false))

        var bit: UInt64 { 1 << UInt64(slot) }

        /// Takes `slot` if nobody holds it (without waiting), sweeping what a dead owner left.
        fileprivate init?(table: PresenceTable, slot: Int) {
            let fd = Glibc.open(table.path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { return nil }
            guard OFDLock.apply(.exclusive, fd: fd, start: slot, length: 1, wait: false) == .done else {
                close(fd)
                return nil
            }
            self.table = table
            self.slot = slot
            self.lockFD = fd
            if table.recordPID(slot).pointee.load(ordering: .acquiring) != 0 { sweep() }
        }

        /// Claims the first free slot for this process and marks it in use; nil when all 64 are held.
        static func claim(in table: PresenceTable) -> SlotClaim? {
            for slot in 0..<PresenceTable.slotCount {
                guard let claim = SlotClaim(table: table, slot: slot) else { continue }
                table.recordPID(slot).pointee.store(UInt64(UInt32(bitPattern: getpid())), ordering: .sequentiallyConsistent)
                table.recordMainWaits(slot).pointee.store(0, ordering: .sequentiallyConsistent)
                table.recordCleanMark(slot).pointee.store(0, ordering: .sequentiallyConsistent)
                table.ownSlots.bitwiseOr(claim.bit, ordering: .sequentiallyConsistent)
                table.inUse.pointee.bitwiseOr(claim.bit, ordering: .sequentiallyConsistent)
                return claim
            }
            return nil
        }

        /// Adds `slots` to those this process's main queue waits for; returns the previous value,
        /// for `restoreMainQueueWaits` (waits nest: a presenter answering on the main queue may
        /// coordinate in turn).
        func addMainQueueWaits(_ slots: UInt64) -> UInt64 {
            table.recordMainWaits(slot).pointee.bitwiseOr(slots, ordering: .sequentiallyConsistent).oldValue
        }

        /// Puts back what `addMainQueueWaits` returned, when that wait is over.
        func restoreMainQueueWaits(_ previous: UInt64) {
            table.recordMainWaits(slot).pointee.store(previous, ordering: .sequentiallyConsistent)
        }

        /// True when this process's main queue waits, directly or through other processes' main
        /// queues, for the process `pid` (false when `pid` has no slot: nobody can wait for it).
        func mainQueueWaitsReach(process pid: Int32) -> Bool {
            guard table.mainQueueWaits(ofSlot: slot) != 0, let target = table.slot(ofProcess: pid) else { return false }
            return table.mainQueueWaits(ofSlot: slot, reach: target)
        }

        /// Marks this process's presenters as all free of unsaved changes (`clean`), or not.
        /// Visible to every process when it returns.
        func markClean(_ clean: Bool) {
            let mark = clean ? PresenceTable.cleanTag | UInt64(UInt32(bitPattern: getpid())) : 0
            table.recordCleanMark(slot).pointee.store(mark, ordering: .sequentiallyConsistent)
        }

        /// Publishes that this process presents `path`. Visible to every process when it returns.
        func add(_ path: String) { change(path, by: 1) }

        /// Withdraws one `add(path)`.
        func remove(_ path: String) { change(path, by: -1) }

        private func change(_ path: String, by delta: Int) {
            var itemWords: [Int] = []
            var insideWords: [Int] = []
            var hash = StableHash.offsetBasis
            var first = true
            for byte in path.utf8 {
                if byte == UInt8(ascii: "/"), !first { Self.append(hash, to: &insideWords) }
                hash = StableHash.step(hash, byte)
                if first {
                    first = false
                    if path.utf8.count > 1 { Self.append(hash, to: &insideWords) }  // "/"
                }
            }
            Self.append(hash, to: &itemWords)
            counts.withLock { counts in
                guard !counts.released else { return }
                var published = false
                for index in itemWords {
                    published = update(&counts.item, index, delta, table.itemWord(index)) || published
                }
                for index in insideWords {
                    published = update(&counts.inside, index, delta, table.insideWord(index)) || published
                }
                // Every addition counts, even one whose bits were already set by other paths: an
                // asker's cached "this slot does not present P" must not survive P's arrival.
                _ = published
                if delta > 0 { table.recordCounter(slot).pointee.wrappingAdd(1, ordering: .sequentiallyConsistent) }
            }
        }

        private static func append(_ hash: UInt64, to words: inout [Int]) {
            let (a, b) = PresenceTable.words(hash)
            words.append(a)
            words.append(b)
        }

        /// Returns true when a bit was set.
        private func update(_ counts: inout [Int: Int], _ index: Int, _ delta: Int, _ word: UnsafeMutablePointer<Atomic<UInt64>>) -> Bool {
            let old = counts[index, default: 0]
            let new = max(0, old + delta)
            counts[index] = new == 0 ? nil : new
            if old == 0, new > 0 {
                word.pointee.bitwiseOr(bit, ordering: .sequentiallyConsistent)
                return true
            }
            if old > 0, new == 0 { word.pointee.bitwiseAnd(~bit, ordering: .sequentiallyConsistent) }
            return false
        }

        /// Clears this slot's bit from every word (after a dead owner, or when releasing).
        private func sweep() {
            let mask = ~bit
            for index in 0..<PresenceTable.wordCount {
                let item = table.itemWord(index), inside = table.insideWord(index)
                if item.pointee.load(ordering: .relaxed) & bit != 0 { item.pointee.bitwiseAnd(mask, ordering: .sequentiallyConsistent) }
                if inside.pointee.load(ordering: .relaxed) & bit != 0 { inside.pointee.bitwiseAnd(mask, ordering: .sequentiallyConsistent) }
            }
        }

        /// Withdraws everything, frees the slot and lets its lock go.
        func release() {
            // Bits are cleared as their counts reach zero: with nothing published, no sweep.
            let (first, published) = counts.withLock { counts in
                defer { counts.released = true }
                return (!counts.released, !counts.item.isEmpty || !counts.inside.isEmpty)
            }
            guard first else { return }
            if published { sweep() }
            table.ownSlots.bitwiseAnd(~bit, ordering: .sequentiallyConsistent)
            table.inUse.pointee.bitwiseAnd(~bit, ordering: .sequentiallyConsistent)
            table.recordMainWaits(slot).pointee.store(0, ordering: .sequentiallyConsistent)
            table.recordCleanMark(slot).pointee.store(0, ordering: .sequentiallyConsistent)
            table.recordPID(slot).pointee.store(0, ordering: .sequentiallyConsistent)
            close(lockFD)
        }

        deinit { release() }
    }
}
