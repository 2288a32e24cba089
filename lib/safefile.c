/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "fileio.h"
#include "util.h"

#define SYMLINKS_MAX 40 /* as the kernel's */

static bool ours(uid_t uid) {
        return uid == 0 || uid == geteuid();
}

/* Nobody but root or us can change what a directory holds: its own, and writable by nobody else, or sticky and
 * ours (then others may add entries, but not replace ours; a sticky directory's owner may replace any). */
static bool dir_is_trusted(const struct stat *st) {
        if (!ours(st->st_uid))
                return false;
        return (st->st_mode & S_ISVTX) || (!(st->st_mode & S_IWOTH) && !((st->st_mode & S_IWGRP) && st->st_gid != 0));
}

/* A link of ours where others may add entries is ours only if it has no other name: with fs.protected_hardlinks
 * off, anybody can hard-link a link of root's from elsewhere into a sticky directory. */
static bool link_is_ours(const struct stat *link, const struct stat *dir) {
        bool others_add = (dir->st_mode & S_IWOTH) || ((dir->st_mode & S_IWGRP) && dir->st_gid != 0);
        return ours(link->st_uid) && (!others_add || link->st_nlink == 1);
}

int safe_dir_open(const char *path, int *ret_dirfd, const char **ret_name) {
        const char *slash = strrchr(path, '/');
        if (path[0] != '/' || !slash[1])
                return -EINVAL;
        /* what is still to walk: the directory part, then what links put in front of the rest */
        char todo[PATH_MAX];
        size_t len = (size_t) (slash - path);
        if (len >= sizeof(todo))
                return -ENAMETOOLONG;
        memcpy(todo, path, len);
        todo[len] = 0;
        _cleanup_(closep) int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return -errno;
        unsigned links = 0;
        for (char *s = todo; *s;) {
                while (*s == '/')
                        s++;
                if (!*s)
                        break;
                char comp[NAME_MAX + 1];
                size_t n = strcspn(s, "/");
                if (n > NAME_MAX)
                        return -ENAMETOOLONG;
                memcpy(comp, s, n);
                comp[n] = 0;
                s += n;
                int next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next >= 0) {
                        close(fd);
                        fd = next;
                        if (fstat(fd, &st) < 0)
                                return -errno;
                        continue;
                }
                if (errno != ENOTDIR && errno != ELOOP)
                        return -errno;
                struct stat link;
                if (fstatat(fd, comp, &link, AT_SYMLINK_NOFOLLOW) < 0)
                        return -errno;
                if (!S_ISLNK(link.st_mode))
                        return -ENOTDIR;
                if (++links > SYMLINKS_MAX)
                        return -ELOOP;
                if (!link_is_ours(&link, &st) || !dir_is_trusted(&st))
                        return -EXDEV;
                char target[PATH_MAX];
                ssize_t t = readlinkat(fd, comp, target, sizeof(target));
                if (t < 0)
                        return -errno;
                size_t rest = strlen(s);
                if ((size_t) t + 1 + rest >= sizeof(todo))
                        return -ENAMETOOLONG;
                memmove(todo + t + 1, s, rest + 1);
                memcpy(todo, target, (size_t) t);
                todo[t] = '/';
                s = todo;
                if (target[0] == '/') {
                        close(fd);
                        fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
                        if (fd < 0 || fstat(fd, &st) < 0)
                                return -errno;
                }
        }
        *ret_dirfd = TAKE_FD(fd);
        *ret_name = slash + 1;
        return 0;
}

int safe_file_open(const char *path, int flags, int *ret_fd) {
        char cur[PATH_MAX], cwd[PATH_MAX] = "";
        if (path[0] != '/' && !getcwd(cwd, sizeof(cwd)))
                return -errno;
        int n = snprintf(cur, sizeof(cur), "%s%s%s", cwd, cwd[0] ? "/" : "", path);
        if (n < 0 || (size_t) n >= sizeof(cur))
                return -ENAMETOOLONG;
        for (unsigned links = 0;; links++) {
                _cleanup_(closep) int dirfd = -1;
                const char *name;
                int r = safe_dir_open(cur, &dirfd, &name);
                if (r < 0)
                        return r;
                int fd = openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC);
                if (fd >= 0) {
                        *ret_fd = fd;
                        return 0;
                }
                if (errno != ELOOP)
                        return -errno;
                struct stat link, dir;
                if (fstatat(dirfd, name, &link, AT_SYMLINK_NOFOLLOW) < 0 || fstat(dirfd, &dir) < 0)
                        return -errno;
                if (!S_ISLNK(link.st_mode) || links >= SYMLINKS_MAX)
                        return -ELOOP;
                if (!link_is_ours(&link, &dir) || !dir_is_trusted(&dir))
                        return -EXDEV;
                char target[PATH_MAX];
                ssize_t t = readlinkat(dirfd, name, target, sizeof(target) - 1);
                if (t < 0)
                        return -errno;
                target[t] = 0;
                /* relative: from the link's directory, which safe_dir_open walks again from the top */
                size_t dir_len = target[0] == '/' ? 0 : (size_t) (name - cur);
                if (dir_len + (size_t) t >= sizeof(cur))
                        return -ENAMETOOLONG;
                memmove(cur + dir_len, target, (size_t) t + 1);
        }
}

long dir_other_writer(int dirfd) {
        struct stat st;
        if (fstat(dirfd, &st) < 0)
                return 0;
        if (!ours(st.st_uid))
                return (long) st.st_uid;
        return (st.st_mode & S_IWOTH) || ((st.st_mode & S_IWGRP) && st.st_gid != 0) ? -1 : 0;
}

int owned_file_open(int dirfd, const char *name, mode_t mode, int *ret_fd, struct stat *ret_st) {
        const int flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
        _cleanup_(closep) int fd = -1;
        /* there, or made now: a file planted between the two is found by the next turn */
        for (unsigned tries = 0; fd < 0 && tries < 8; tries++) {
                fd = openat(dirfd, name, flags);
                if (fd < 0 && errno == ENOENT)
                        fd = openat(dirfd, name, flags | O_CREAT | O_EXCL, 0600);
                if (fd < 0 && errno != ENOENT && errno != EEXIST)
                        break;
        }
        struct stat st;
        if (fd < 0) {
                int r = errno == ENXIO ? -EINVAL : -errno; /* ENXIO: a FIFO without a reader */
                /* what is there, for the message: whose it is */
                if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return r;
                *ret_st = st;
                /* not ours to open, perhaps because it is not ours at all */
                if ((r == -EACCES || r == -EPERM) && st.st_uid != geteuid())
                        return -EPERM;
                return r;
        }
        if (fstat(fd, &st) < 0)
                return -errno;
        *ret_st = st;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        if (st.st_uid != geteuid())
                return -EPERM;
        if (st.st_nlink > 1)
                return -EMLINK;
        if ((st.st_mode & 07777) != mode) {
                if (fchmod(fd, mode) < 0)
                        return -errno;
                ret_st->st_mode = (st.st_mode & ~07777u) | mode;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* "uid 65534 (nobody)", or "uid 1234" for a uid with no name. */
static const char *owner_name(uid_t uid, char *buf, size_t size) {
        struct passwd pw, *found = NULL;
        char names[1024];
        if (getpwuid_r(uid, &pw, names, sizeof(names), &found) == 0 && found)
                snprintf(buf, size, "uid %u (%.64s)", (unsigned) uid, found->pw_name);
        else
                snprintf(buf, size, "uid %u", (unsigned) uid);
        return buf;
}

static const char *file_kind(mode_t mode) {
        return S_ISLNK(mode) ? "a symbolic link" : S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a FIFO"
               : S_ISSOCK(mode)                                   ? "a socket"
               : S_ISCHR(mode) || S_ISBLK(mode)                   ? "a device"
                                                                  : "a file";
}

const char *file_found_describe(const struct stat *st, char *buf, size_t size) {
        char owner[128];
        snprintf(buf, size, "%s of %s", file_kind(st->st_mode), owner_name(st->st_uid, owner, sizeof(owner)));
        return buf;
}

const char *owned_file_refusal(int r, const struct stat *st, char *buf, size_t size) {
        char owner[160];
        switch (r) {
        case -ELOOP:
                snprintf(buf, size, "is a symbolic link of %s, which is refused, not followed",
                         owner_name(st->st_uid, owner, sizeof(owner)));
                return buf;
        case -EINVAL:
                snprintf(buf, size, "is %s, not a regular file", file_found_describe(st, owner, sizeof(owner)));
                return buf;
        case -EPERM:
                snprintf(buf, size, "is owned by %s, not by the daemon's uid %u: refused, never written through",
                         owner_name(st->st_uid, owner, sizeof(owner)), (unsigned) geteuid());
                return buf;
        case -EMLINK:
                snprintf(buf, size, "has %lu hard links (the file of %s): refused, as writing it would write another "
                         "name's file too", (unsigned long) st->st_nlink, owner_name(st->st_uid, owner, sizeof(owner)));
                return buf;
        case -EXDEV:
                return "is reached through a symbolic link that another user could have made: refused";
        default:
                return NULL;
        }
}

int file_replace(const char *path, const void *data, size_t len, mode_t mode, gid_t gid) {
        _cleanup_(closep) int dirfd = -1;
        const char *name;
        int r = safe_dir_open(path, &dirfd, &name);
        if (r < 0)
                return r;
        char tmp[NAME_MAX + 1];
        _cleanup_(closep) int fd = -1;
        for (unsigned tries = 0; fd < 0 && tries < 16; tries++) {
                uint64_t salt;
                if (getrandom(&salt, sizeof(salt), GRND_NONBLOCK) != sizeof(salt))
                        salt = hash_u64(now_ns() ^ ((uint64_t) getpid() << 32) ^ tries);
                snprintf(tmp, sizeof(tmp), ".%.200s.%016llx", name, (unsigned long long) salt);
                fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
                if (fd < 0 && errno != EEXIST)
                        return -errno;
        }
        if (fd < 0)
                return -EEXIST;
        size_t written;
        r = write_all(fd, data, len, &written);
        if (r >= 0 && gid != (gid_t) -1 && fchown(fd, (uid_t) -1, gid) < 0)
                r = -errno;
        if (r >= 0 && fchmod(fd, mode) < 0)
                r = -errno;
        if (r >= 0 && close(TAKE_FD(fd)) < 0)
                r = -errno;
        if (r >= 0 && renameat(dirfd, tmp, dirfd, name) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(dirfd, tmp, 0);
        return r;
}

int file_remove_owned(const char *path) {
        _cleanup_(closep) int dirfd = -1;
        const char *name;
        int r = safe_dir_open(path, &dirfd, &name);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        struct stat st;
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
                return 0;
        return unlinkat(dirfd, name, 0) < 0 ? -errno : 1;
}
