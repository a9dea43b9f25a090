// The wrappers declared in include/CSystemShim.h, compiled with glibc's GNU declarations (see the
// header for why they are not visible to Swift directly). `_GNU_SOURCE` must come before the
// first system header, as in swift-system's CSystem and swift-nio's CNIOLinux.
#define _GNU_SOURCE 1

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>       // fstatfs
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/fs.h>      // FICLONE

#include "CSystemShim.h"

// The constants the header spells out must be glibc's: a mismatch does not build.
_Static_assert(CSHIM_F_OFD_GETLK == F_OFD_GETLK, "F_OFD_GETLK");
_Static_assert(CSHIM_F_OFD_SETLK == F_OFD_SETLK, "F_OFD_SETLK");
_Static_assert(CSHIM_F_OFD_SETLKW == F_OFD_SETLKW, "F_OFD_SETLKW");
_Static_assert(CSHIM_RENAME_NOREPLACE == RENAME_NOREPLACE, "RENAME_NOREPLACE");
_Static_assert(CSHIM_RENAME_EXCHANGE == RENAME_EXCHANGE, "RENAME_EXCHANGE");
_Static_assert(CSHIM_SEEK_DATA == SEEK_DATA, "SEEK_DATA");
_Static_assert(CSHIM_SEEK_HOLE == SEEK_HOLE, "SEEK_HOLE");
_Static_assert(CSHIM_O_NOATIME == O_NOATIME, "O_NOATIME");
_Static_assert(CSHIM_O_PATH == O_PATH, "O_PATH");
// The getdents64 record must have glibc's struct dirent64 layout (the kernel's linux_dirent64).
_Static_assert(offsetof(struct cshim_dirent64, d_ino) == offsetof(struct dirent64, d_ino), "d_ino");
_Static_assert(offsetof(struct cshim_dirent64, d_off) == offsetof(struct dirent64, d_off), "d_off");
_Static_assert(offsetof(struct cshim_dirent64, d_reclen) == offsetof(struct dirent64, d_reclen), "d_reclen");
_Static_assert(offsetof(struct cshim_dirent64, d_type) == offsetof(struct dirent64, d_type), "d_type");
_Static_assert(offsetof(struct cshim_dirent64, d_name) == offsetof(struct dirent64, d_name), "d_name");
_Static_assert(sizeof(off64_t) == sizeof(int64_t), "off64_t");

int cshim_statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *buffer) {
#if __GLIBC_PREREQ(2, 28)
    return statx(dirfd, path, flags, mask, buffer);
#elif defined(SYS_statx)
    return (int)syscall(SYS_statx, dirfd, path, flags, mask, buffer);
#else
    errno = ENOSYS;
    return -1;
#endif
}

ssize_t cshim_getdents64(int fd, void *buffer, size_t length) {
#if __GLIBC_PREREQ(2, 30)
    return getdents64(fd, buffer, length);
#elif defined(SYS_getdents64)
    return (ssize_t)syscall(SYS_getdents64, fd, buffer, length);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int cshim_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags) {
#if __GLIBC_PREREQ(2, 28)
    return renameat2(olddirfd, oldpath, newdirfd, newpath, flags);
#elif defined(SYS_renameat2)
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int cshim_accept4(int fd, struct sockaddr *address, socklen_t *length, int flags) {
    return accept4(fd, address, length, flags);
}

int cshim_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid) {
    struct ucred credentials;
    socklen_t length = sizeof(credentials);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    if (length != sizeof(credentials)) {
        errno = EINVAL;
        return -1;
    }
    *pid = credentials.pid;
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

long cshim_file_system_type(int fd) {
    struct statfs info;
    if (fstatfs(fd, &info) != 0) return -1;
    return (long)info.f_type;
}

int cshim_ficlone(int dest_fd, int src_fd) {
    return ioctl(dest_fd, FICLONE, src_fd);
}

ssize_t cshim_copy_file_range(int in_fd, int64_t *in_offset, int out_fd, int64_t *out_offset,
                              size_t length, unsigned int flags) {
#if __GLIBC_PREREQ(2, 27)
    return copy_file_range(in_fd, (off64_t *)in_offset, out_fd, (off64_t *)out_offset, length, flags);
#elif defined(SYS_copy_file_range)
    return (ssize_t)syscall(SYS_copy_file_range, in_fd, in_offset, out_fd, out_offset, length, flags);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int cshim_malloc_trim(size_t pad) {
    return malloc_trim(pad);
}

int cshim_malloc_allocated_bytes(size_t *bytes) {
#if __GLIBC_PREREQ(2, 33)
    struct mallinfo2 info = mallinfo2();
    *bytes = info.uordblks + info.hblkhd;
    return 0;
#else
    (void)bytes;
    return -1;
#endif
}

int cshim_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int lowfd) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowfd);
}

// MARK: getxattrat(2)

#ifndef SYS_getxattrat
#define SYS_getxattrat 464  // the same number on every architecture (added in Linux 6.13)
#endif

struct cshim_xattr_args {
    uint64_t value;
    uint32_t size;
    uint32_t flags;
};

ssize_t cshim_getxattrat(int dirfd, const char *path, const char *name, void *value, size_t size) {
    struct cshim_xattr_args args = { (uint64_t)(uintptr_t)value, (uint32_t)(size > UINT32_MAX ? UINT32_MAX : size), 0 };
    return (ssize_t)syscall(SYS_getxattrat, dirfd, path, AT_SYMLINK_NOFOLLOW, name, &args, sizeof(args));
}
