// CSystemShim: the Linux calls, structures and constants that Swift's Glibc module does not
// import, with real C declarations, for SystemSupport and the modules above it. Package-internal
// (not a product). Every function may be called on any thread.
//
// Why a shim, and why `_GNU_SOURCE` is defined in CSystemShim.c and not here: glibc declares
// `statx`, `getdents64`, `renameat2`, `accept4`, `copy_file_range`, `F_OFD_*`, `RENAME_*` and
// `SEEK_DATA`/`SEEK_HOLE` only under `_GNU_SOURCE`, and the Glibc module is built without it.
// Defining it in this header would not help: Clang builds this module apart from the Glibc
// module, and under `_GNU_SOURCE` glibc defines some types the two share differently (`fd_set`'s
// field names; `accept4`'s transparent-union address argument), which Clang refuses to merge.
// So, as swift-nio's CNIOLinux does, this header declares `cshim_` wrappers with the types both
// modes agree on; CSystemShim.c defines `_GNU_SOURCE` before any system header and implements
// them with glibc's own calls; and each constant spelled out here is checked against glibc's
// definition with `_Static_assert` in CSystemShim.c, so a wrong value does not build.
//
// Where the C library is too old to have a call, the wrapper makes the system call itself; where
// the kernel lacks it, the wrapper fails with ENOSYS (callers keep their fallbacks for that).
#ifndef CSYSTEMSHIM_H
#define CSYSTEMSHIM_H

#include <linux/stat.h>    // struct statx, struct statx_timestamp, STATX_* (the kernel's, as glibc uses)
#include <stddef.h>
#include <stdint.h>
#include <sys/eventfd.h>   // eventfd, EFD_CLOEXEC, EFD_NONBLOCK (not GNU-only; just not in the Glibc module)
#include <spawn.h>         // posix_spawn_file_actions_t
#include <sys/socket.h>    // struct msghdr, struct cmsghdr, CMSG_* (not GNU-only)
#include <sys/types.h>
#include <sys/xattr.h>     // getxattr, setxattr, fgetxattr, … (not GNU-only; just not in the Glibc module)

// MARK: statx(2)

/// `statx(2)`: the status of `path` relative to `dirfd` (`AT_FDCWD`, or an open folder), for the
/// fields in `mask` (`STATX_*`; `buffer->stx_mask` says which were filled — a birth time only
/// where the file system records one). `flags`: `AT_SYMLINK_NOFOLLOW`, `AT_EMPTY_PATH`, …
/// Returns 0, or -1 with `errno` set (ENOSYS: the kernel predates Linux 4.11).
int cshim_statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *buffer);

// MARK: getdents64(2)

/// One record in the buffer `getdents64` fills: the kernel's `struct linux_dirent64` (glibc's
/// `struct dirent64`, whose `d_name` is declared with a fixed size although records are not).
/// Records follow each other at `d_reclen` bytes; `d_name` is NUL-terminated and padded.
/// Read fields with the accessors below: the memory is a byte buffer.
struct cshim_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/// `getdents64(2)`: fills `buffer` with whole `cshim_dirent64` records of the folder open as `fd`,
/// from its current position. Returns the number of bytes filled, 0 at the end of the folder, or
/// -1 with `errno` set (EINVAL: `buffer` too small for the next record; ENOSYS: no such call).
ssize_t cshim_getdents64(int fd, void *buffer, size_t length);

/// The length of the record at `record` (`d_reclen`): where the next one starts.
static inline unsigned short cshim_dirent64_record_length(const void *record) {
    return ((const struct cshim_dirent64 *)record)->d_reclen;
}

/// The NUL-terminated name of the record at `record`.
static inline const char *cshim_dirent64_name(const void *record) {
    return ((const struct cshim_dirent64 *)record)->d_name;
}

/// Where a record's name starts: a record shorter than this (plus its NUL) is malformed.
static const size_t CSHIM_DIRENT64_NAME_OFFSET = offsetof(struct cshim_dirent64, d_name);

// MARK: renameat2(2)

// `renameat2(2)` flags (glibc's `RENAME_NOREPLACE`, `RENAME_EXCHANGE`, from <stdio.h>).
/// Fail with EEXIST if the destination exists.
#define CSHIM_RENAME_NOREPLACE 1U
/// Swap source and destination atomically; both must exist.
#define CSHIM_RENAME_EXCHANGE 2U

/// `renameat2(2)`: a rename with `flags`. Returns 0, or -1 with `errno` set (EINVAL: the file
/// system does not support the flag; ENOSYS: the kernel predates Linux 3.15).
int cshim_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);

// MARK: Sockets

// `SOCK_CLOEXEC` and `SOCK_NONBLOCK` as plain `int`s, for `accept4` and `socket` (the Glibc
// module imports them as cases of an enum).
/// `SOCK_CLOEXEC`: the new descriptor is closed by `exec`.
static const int CSHIM_SOCK_CLOEXEC = SOCK_CLOEXEC;
/// `SOCK_NONBLOCK`: the new descriptor's open file description is non-blocking.
static const int CSHIM_SOCK_NONBLOCK = SOCK_NONBLOCK;

/// `accept4(2)`: accepts a connection on `fd` with `flags` (`CSHIM_SOCK_CLOEXEC`,
/// `CSHIM_SOCK_NONBLOCK`) applied atomically. `address` and `length` may be NULL. Returns the new
/// descriptor, or -1 with `errno` set.
int cshim_accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

/// `CMSG_FIRSTHDR`: the first control message of `message`, or NULL.
static inline struct cmsghdr *cshim_cmsg_firsthdr(struct msghdr *message) {
    return CMSG_FIRSTHDR(message);
}

/// `CMSG_NXTHDR`: the control message after `header` in `message`, or NULL.
static inline struct cmsghdr *cshim_cmsg_nxthdr(struct msghdr *message, struct cmsghdr *header) {
    return CMSG_NXTHDR(message, header);
}

/// `CMSG_DATA`: the payload of the control message `header`.
static inline unsigned char *cshim_cmsg_data(struct cmsghdr *header) {
    return CMSG_DATA(header);
}

/// `CMSG_SPACE`: the bytes a control message with `length` payload bytes takes in a buffer.
static inline size_t cshim_cmsg_space(size_t length) {
    return CMSG_SPACE(length);
}

/// `CMSG_LEN`: the `cmsg_len` of a control message with `length` payload bytes.
static inline size_t cshim_cmsg_len(size_t length) {
    return CMSG_LEN(length);
}

/// The credentials the kernel recorded for the peer of the connected Unix socket `fd` when the
/// connection was made (`getsockopt(SO_PEERCRED)` into glibc's `struct ucred`): they cannot be
/// forged by the peer. Returns 0 and fills the three, or -1 with `errno` set.
int cshim_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

// MARK: sched(7)

/// `SCHED_BATCH` (Linux's, from <sched.h> under `_GNU_SOURCE`): a thread that gets its fair share
/// of the CPU but does not preempt a running thread when it wakes.
#define CSHIM_SCHED_BATCH 3

// MARK: open(2), fcntl(2), lseek(2), ioctl(2)

/// `O_NOATIME` (glibc's, from <fcntl.h>; 01000000): reading does not update the access time.
/// Only the file's owner (or root) may ask for it: others get EPERM.
#define CSHIM_O_NOATIME 0x40000

/// `O_PATH` (glibc's, from <fcntl.h> under `_GNU_SOURCE`; 010000000): a descriptor that names a
/// file without opening it — no permission to read it is needed, no file system's `open` or
/// `release` runs — and keeps it from being freed while it is open.
#define CSHIM_O_PATH 0x200000

/// The type of the file system holding the file open as `fd` (`fstatfs(2)`'s `f_type`, a magic
/// number of <linux/magic.h>), or -1 with `errno` set.
long cshim_file_system_type(int fd);

// Open-file-description lock commands of `fcntl(2)` (glibc's `F_OFD_GETLK`, `F_OFD_SETLK`,
// `F_OFD_SETLKW`, from <fcntl.h>), used with a `struct flock` whose `l_pid` is 0.
/// Which lock, if any, would conflict with the one described (nothing is locked).
#define CSHIM_F_OFD_GETLK 36
/// Take or release a lock; EAGAIN (or EACCES) when a conflicting one is held.
#define CSHIM_F_OFD_SETLK 37
/// Take a lock, sleeping until it is granted; EINTR when a signal arrives meanwhile.
#define CSHIM_F_OFD_SETLKW 38

// `lseek(2)` whences (glibc's `SEEK_DATA`, `SEEK_HOLE`, from <unistd.h>).
/// The next offset at or after the given one that holds data (ENXIO: only a hole follows).
#define CSHIM_SEEK_DATA 3
/// The next hole (or the end of the file) at or after the given offset.
#define CSHIM_SEEK_HOLE 4

/// `ioctl(dest_fd, FICLONE, src_fd)` (<linux/fs.h>): makes the file open as `dest_fd` share the
/// blocks of the one open as `src_fd` (a reflink), replacing its contents. Returns 0, or -1 with
/// `errno` set — at once (EOPNOTSUPP, EXDEV, EINVAL) where the file system cannot: copy instead.
int cshim_ficlone(int dest_fd, int src_fd);

// MARK: posix_spawn(3)

/// `posix_spawn_file_actions_addclosefrom_np(actions, lowfd)` (glibc ≥ 2.34, GNU): the child
/// closes every descriptor from `lowfd` up before it runs, so it inherits none of the parent's
/// other files or pipes (which another thread may have opened without close-on-exec). Returns 0
/// or an error number.
int cshim_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int lowfd);

// MARK: copy_file_range(2)

/// `copy_file_range(2)`: copies up to `length` bytes from `in_fd` to `out_fd` inside the kernel
/// (a reflink where the file system can). A NULL offset pointer means "the descriptor's own
/// offset, advanced"; otherwise the pointed-to offset is used and advanced. Returns the bytes
/// copied (0 at the end of the input), or -1 with `errno` set (EXDEV, EOPNOTSUPP, ENOSYS: copy
/// another way).
ssize_t cshim_copy_file_range(int in_fd, int64_t *in_offset, int out_fd, int64_t *out_offset,
                              size_t length, unsigned int flags);

// MARK: getxattrat(2)

/// `getxattrat(2)` (Linux 6.13): reads the extended attribute `name` of the entry `path` of the
/// folder `dirfd` without following a final symbolic link — `lgetxattr` relative to an open
/// folder, so a walk pays no path resolution per entry. Returns the value's size (copied into
/// `value`, `size` bytes at most), or -1 with `errno` set: ENOSYS on a kernel without it (then use
/// `lgetxattr` on the full path), ERANGE when `size` is too small, ENODATA when there is none.
ssize_t cshim_getxattrat(int dirfd, const char *path, const char *name, void *value, size_t size);

// MARK: Shared mappings another process may truncate

/// Guards a `MAP_SHARED` mapping of a file that another process of the same user can truncate:
/// touching a page past the file's new end raises SIGBUS, which would kill this process. While
/// guarded, such a fault inside [`start`, `start + length`) replaces the whole mapping with
/// private zero-filled memory (the faulting access then completes on it) and marks the guard
/// lost; a fault anywhere else goes to the SIGBUS handler that was installed before, or to the
/// default action. Installs the handler on the first call. Returns the guard's number (for
/// `cshim_shared_mapping_lost`), or -1 when no guard is left (4,096 per process) or the handler
/// cannot be installed: then the caller must not use the mapping. `start` must be page-aligned
/// (as `mmap` returns it). Guards are never removed: map such files once per process.
int cshim_guard_shared_mapping(void *start, size_t length);

/// Whether the mapping of guard `number` was replaced after a SIGBUS (its memory no longer
/// shared: whatever it holds now, no other process sees or changes).
int cshim_shared_mapping_lost(int number);

// MARK: The C library's allocator (for the benchmarks)

/// `malloc_trim(3)`: returns free memory at the top of the heaps to the system. Returns 1 when
/// memory was released, 0 otherwise.
int cshim_malloc_trim(size_t pad);

/// The bytes allocated with `malloc` right now, over every arena (`mallinfo2(3)`'s `uordblks`
/// plus `hblkhd`). Returns 0 and sets `*bytes`, or -1 where the C library cannot tell (glibc
/// before 2.33).
int cshim_malloc_allocated_bytes(size_t *bytes);

#endif // CSYSTEMSHIM_H
