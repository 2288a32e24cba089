/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util.h"

ssize_t read_small_file(const char *path, char *buf, size_t size) {
        if (size == 0)
                return -EINVAL;
        _cleanup_(closep) int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        size_t len = 0;
        while (len < size - 1) {
                ssize_t n = read(fd, buf + len, size - 1 - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        buf[len] = 0;
        return (ssize_t) len;
}

int write_all(int fd, const void *data, size_t len, size_t *written) {
        size_t off = 0;
        int r = 0;
        while (off < len) {
                ssize_t n = write(fd, (const char *) data + off, len - off);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        r = n < 0 ? -errno : -ENOSPC;
                        break;
                }
                off += (size_t) n;
        }
        *written = off;
        return r;
}

int lock_for_writing(int fd, pid_t *ret_holder) {
        struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
        if (fcntl(fd, F_SETLK, &fl) == 0)
                return 0;
        if (errno != EAGAIN && errno != EACCES)
                return -errno;
        struct flock who = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
        *ret_holder = fcntl(fd, F_GETLK, &who) == 0 && who.l_type != F_UNLCK ? who.l_pid : 0;
        return -EBUSY;
}

void describe_holder(pid_t holder, char *buf, size_t size) {
        char path[64], comm[32] = "";
        snprintf(path, sizeof(path), "/proc/%d/comm", holder);
        if (holder <= 0 || read_small_file(path, comm, sizeof(comm)) <= 0) {
                snprintf(buf, size, "another process");
                return;
        }
        comm[strcspn(comm, "\n")] = 0;
        if (strcmp(comm, "aiotraced") == 0)
                snprintf(buf, size, "another aiotraced (pid %d)", holder);
        else
                snprintf(buf, size, "pid %d (%s)", holder, comm);
}

int fd_limit_raise(size_t want, size_t *ret_limit) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return -errno;
        if (rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        return -errno;
        }
        if (rl.rlim_cur < want) {
                struct rlimit more = { .rlim_cur = want, .rlim_max = want };
                if (setrlimit(RLIMIT_NOFILE, &more) == 0) /* with CAP_SYS_RESOURCE, up to fs.nr_open */
                        rl = more;
        }
        *ret_limit = rl.rlim_cur == RLIM_INFINITY ? SIZE_MAX : (size_t) rl.rlim_cur;
        return 0;
}

int count_open_files(size_t *ret_count) {
        DIR *dir = opendir("/proc/self/fd");
        if (!dir)
                return -errno;
        size_t n = 0;
        for (struct dirent *de; (de = readdir(dir));)
                n += de->d_name[0] != '.';
        closedir(dir);
        *ret_count = n - 1; /* the directory's own */
        return 0;
}

int resident_kib(size_t *ret_kib) {
        char status[4096];
        ssize_t r = read_small_file("/proc/self/status", status, sizeof(status));
        if (r < 0)
                return (int) r;
        const char *rss = strstr(status, "\nVmRSS:");
        unsigned long kib;
        if (!rss || sscanf(rss, "\nVmRSS: %lu kB", &kib) != 1)
                return -EBADMSG;
        *ret_kib = kib;
        return 0;
}

static bool openat2_missing;

bool cached_lookup_available(void) {
        uint64_t ino;
        dev_t dev;
        (void) file_identity_cached(AT_FDCWD, "/", &ino, &dev);
        return !__atomic_load_n(&openat2_missing, __ATOMIC_RELAXED);
}

/* An O_PATH fd of path, from the kernel's cache alone; -ENOSYS where openat2 or RESOLVE_CACHED is not had. */
static int cached_open(int dirfd, const char *path) {
        struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC, .resolve = RESOLVE_CACHED };
        int fd = (int) syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
        if (fd >= 0)
                return fd;
        if (errno != ENOSYS && errno != EINVAL)
                return -errno;
        __atomic_store_n(&openat2_missing, true, __ATOMIC_RELAXED);
        return -ENOSYS;
}

int file_identity_cached(int dirfd, const char *path, uint64_t *ret_ino, dev_t *ret_dev) {
        _cleanup_(closep) int fd = -ENOSYS;
        if (!__atomic_load_n(&openat2_missing, __ATOMIC_RELAXED)) {
                fd = cached_open(dirfd, path);
                if (fd < 0 && fd != -ENOSYS)
                        return fd;
        }
        /* Without openat2 the answer matters more than the wait (an executable not matched, a path not checked,
         * would go unrecorded or unnamed): an ordinary lookup.  The daemon says so at start. */
        struct statx st;
        int r = fd >= 0 ? statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_INO, &st)
                        : statx(dirfd, path, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_INO, &st);
        if (r < 0)
                return -errno;
        *ret_ino = st.stx_ino;
        *ret_dev = makedev(st.stx_dev_major, st.stx_dev_minor);
        return 0;
}
