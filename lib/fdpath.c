/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fdpath.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "util.h"

struct path_str *path_str_ref(struct path_str *p) {
        if (p)
                p->refs++;
        return p;
}

void path_str_unref(struct path_str *p) {
        if (p && --p->refs == 0)
                free(p);
}

static struct path_str *path_str_new(const char *s, size_t len) {
        struct path_str *p = malloc(sizeof(*p) + len + 1);
        if (!p)
                return NULL;
        p->refs = 1;
        p->len = (uint32_t) len;
        memcpy(p->s, s, len);
        p->s[len] = 0;
        return p;
}

const char *path_state_name(enum path_state s) {
        static const char *const names[_PATH_STATE_MAX] = {
                [PATH_NONE] = "not looked up", [PATH_OK] = "ok", [PATH_UNVERIFIED] = "unverified",
                [PATH_REUSED] = "fd reused", [PATH_GONE] = "fd closed", [PATH_DENIED] = "permission denied",
                [PATH_NOT_FD] = "not an fd", [PATH_TOO_LONG] = "name too long",
                [PATH_NOT_KNOWN] = "file not seen under a path", [PATH_MOVED] = "fd moved during the call",
        };
        return s < _PATH_STATE_MAX ? names[s] : "?";
}

int fdpath_cache_init(struct fdpath_cache *c, size_t cap, const char *proc_root) {
        size_t n = 64;
        while (n < cap)
                n *= 2;
        *c = (struct fdpath_cache) { .cap = n };
        snprintf(c->proc_root, sizeof(c->proc_root), "%s", proc_root ? proc_root : "/proc");
        c->slots = calloc(n, sizeof(*c->slots));
        c->files = calloc(n, sizeof(*c->files));
        if (!c->slots || !c->files) {
                fdpath_cache_done(c);
                return -ENOMEM;
        }
        return 0;
}

void fdpath_cache_done(struct fdpath_cache *c) {
        for (size_t i = 0; c->slots && i < c->cap; i++)
                path_str_unref(c->slots[i].path);
        for (size_t i = 0; c->files && i < c->cap; i++)
                path_str_unref(c->files[i].path);
        free(c->slots);
        free(c->files);
        *c = (struct fdpath_cache) {};
}

/* mnt_id and ino of an open file, from /proc/PID/fdinfo/FD: the same fields the capture reads. */
static int fd_identity(const char *proc_root, uint32_t pid, uint32_t fd, uint32_t *ret_mnt_id, uint64_t *ret_ino) {
        char path[128], buf[512];
        snprintf(path, sizeof(path), "%s/%u/fdinfo/%u", proc_root, pid, fd);
        ssize_t n = read_small_file(path, buf, sizeof(buf));
        if (n <= 0)
                return n < 0 ? (int) n : -EIO;
        const char *m = strstr(buf, "mnt_id:"), *i = strstr(buf, "\nino:");
        if (!m || !i)
                return -EPROTO; /* a kernel before 5.14 does not show ino */
        *ret_mnt_id = (uint32_t) strtoul(m + 7, NULL, 10);
        *ret_ino = strtoull(i + 5, NULL, 10);
        return 0;
}

int fdpath_resolve(const char *proc_root, uint32_t pid, uint32_t fd, struct path_str **ret_path,
                   uint32_t *ret_mnt_id, uint64_t *ret_ino) {
        /* Neither opened nor looked up: /proc says the name (readlink) and the identity (fdinfo) of the open file
         * as the kernel holds them, so a file system that does not answer (a stalled FUSE server, a hung NFS
         * mount) is never asked.  The identity read on both sides of the name: the fd named one file throughout,
         * or the look fails (-EAGAIN), rather than give one file's name with another's identity. */
        uint32_t mnt_id, mnt_id_after;
        uint64_t ino, ino_after;
        int r = fd_identity(proc_root, pid, fd, &mnt_id_after, &ino_after);
        char link[128], target[PATH_MAX];
        snprintf(link, sizeof(link), "%s/%u/fd/%u", proc_root, pid, fd);
        ssize_t n = 0;
        for (unsigned tries = 0;; tries++) {
                if (r < 0)
                        return r;
                mnt_id = mnt_id_after;
                ino = ino_after;
                n = readlink(link, target, sizeof(target));
                if (n < 0)
                        return -errno;
                if ((size_t) n >= sizeof(target))
                        return -ENAMETOOLONG;
                r = fd_identity(proc_root, pid, fd, &mnt_id_after, &ino_after);
                if (r >= 0 && mnt_id_after == mnt_id && ino_after == ino)
                        break;
                if (r >= 0 && tries == 3)
                        return -EAGAIN; /* another thread keeps pointing it elsewhere */
        }
        struct path_str *p = path_str_new(target, (size_t) n);
        if (!p)
                return -ENOMEM;
        *ret_path = p;
        *ret_mnt_id = mnt_id;
        *ret_ino = ino;
        return 0;
}

static struct fdpath_entry *slot_of(struct fdpath_cache *c, uint32_t pid, uint32_t fd) {
        return &c->slots[hash_u64(((uint64_t) pid << 32) | fd) & (c->cap - 1)];
}

static struct fdpath_file *file_slot(struct fdpath_cache *c, uint32_t mnt_id, uint64_t ino) {
        return &c->files[hash_u64(ino ^ ((uint64_t) mnt_id << 44)) & (c->cap - 1)];
}

static void file_remember(struct fdpath_cache *c, uint32_t mnt_id, uint64_t ino, struct path_str *p) {
        struct fdpath_file *f = file_slot(c, mnt_id, ino);
        path_str_unref(f->path);
        *f = (struct fdpath_file) { .mnt_id = mnt_id, .ino = ino, .path = path_str_ref(p) };
}

/* Whether the path names the file of inode ino still: 1, 0, or -EAGAIN when that cannot be told without asking
 * a file system (its lookup not all in the kernel's cache: a FUSE server or an NFS mount that does not answer
 * would hold the drain up).  An inode number is unique only among the files that exist: one deleted (a log file
 * replaced at start) may come back as another file's, and a path remembered for it would then name the wrong
 * file.  Looked at as the process sees it (its root), or, the process gone, as the daemon does; a path that is
 * not a file's (pipe:[N], anon_inode:...) is taken as it is. */
static int still_names(const struct fdpath_cache *c, uint32_t pid, const struct path_str *p, uint64_t ino) {
        if (p->s[0] != '/')
                return 1;
        char root[128];
        snprintf(root, sizeof(root), "%s/%u/root", c->proc_root, pid);
        _cleanup_(closep) int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        uint64_t found;
        dev_t dev;
        int r = file_identity_cached(rootfd >= 0 ? rootfd : AT_FDCWD, rootfd >= 0 ? p->s + 1 : p->s, &found, &dev);
        if (r == -EAGAIN)
                return r;
        return r == 0 && found == ino;
}

/* A cached answer, checked at most once a generation (a drain): fresh from /proc in this one, or still naming
 * its inode (1); 0 when it names another, -EAGAIN when that cannot be told now. */
static int answer_holds(const struct fdpath_cache *c, uint32_t pid, const struct path_str *p, uint64_t ino,
                        uint64_t checked, uint64_t *verified, uint64_t generation) {
        if (checked == generation || *verified == generation + 1)
                return 1;
        int r = still_names(c, pid, p, ino);
        if (r == 1)
                *verified = generation + 1;
        return r;
}

static enum path_state state_of_error(int r) {
        return r == -EACCES || r == -EPERM ? PATH_DENIED : r == -ENAMETOOLONG ? PATH_TOO_LONG
               : r == -EAGAIN                ? PATH_REUSED /* it named another file as it was looked at */
                                             : PATH_GONE;
}

int fdpath_learn(struct fdpath_cache *c, uint32_t mnt_id, uint64_t ino, const char *path, size_t len) {
        struct path_str *p = path_str_new(path, len);
        if (!p)
                return -ENOMEM;
        file_remember(c, mnt_id, ino, p);
        path_str_unref(p);
        c->learned++;
        return 0;
}

void fdpath_of_identity(struct fdpath_cache *c, uint32_t pid, uint32_t mnt_id, uint64_t ino, uint64_t generation,
                        struct path_str **ret_path, enum path_state *ret_state) {
        struct fdpath_file *f = file_slot(c, mnt_id, ino);
        int r = f->path && f->mnt_id == mnt_id && f->ino == ino
                        ? answer_holds(c, pid, f->path, f->ino, UINT64_MAX, &f->verified, generation)
                        : 0;
        if (r == 0) {
                *ret_path = NULL;
                *ret_state = PATH_NOT_KNOWN;
                return;
        }
        /* No fd to ask /proc about: where the check would wait on a file system, the path it had, marked so. */
        *ret_path = path_str_ref(f->path);
        *ret_state = r == 1 ? PATH_OK : PATH_UNVERIFIED;
}

void fdpath_lookup(struct fdpath_cache *c, uint32_t pid, uint32_t fd, const struct capture_file *captured,
                   uint64_t generation, struct path_str **ret_path, enum path_state *ret_state) {
        if ((int32_t) fd < 0) {
                *ret_path = NULL;
                *ret_state = PATH_NOT_FD;
                return;
        }
        struct fdpath_entry *e = slot_of(c, pid, fd);
        bool same_fd = e->pid == pid && e->fd == fd;
        bool same_file = same_fd && captured && e->mnt_id == captured->mnt_id && e->ino == captured->ino;
        /* A failed lookup keeps the identity it was for, and no path: never an answer on its own. */
        if (same_file && e->path && answer_holds(c, pid, e->path, e->ino, e->checked, &e->verified, generation) == 1) {
                *ret_path = path_str_ref(e->path);
                *ret_state = PATH_OK;
                return;
        }
        struct fdpath_file *f = captured ? file_slot(c, captured->mnt_id, captured->ino) : NULL;
        if (f && f->path && f->mnt_id == captured->mnt_id && f->ino == captured->ino) {
                int r = answer_holds(c, pid, f->path, f->ino, UINT64_MAX, &f->verified, generation);
                if (r == 1) {
                        *ret_path = path_str_ref(f->path);
                        *ret_state = PATH_OK;
                        return;
                }
                if (r == 0) {
                        path_str_unref(f->path); /* another file's by now */
                        *f = (struct fdpath_file) {};
                }
        }
        if (same_fd && !e->path && e->checked == generation && (!captured || same_file)) {
                /* failed already in this drain: /proc will not say otherwise so soon */
                *ret_path = NULL;
                *ret_state = e->failed;
                return;
        }
        if (same_fd && !captured && e->checked == generation) {
                *ret_path = path_str_ref(e->path);
                *ret_state = PATH_UNVERIFIED;
                return;
        }
        struct path_str *p = NULL;
        uint32_t mnt_id = 0;
        uint64_t ino = 0;
        c->lookups++;
        int r = fdpath_resolve(c->proc_root, pid, fd, &p, &mnt_id, &ino);
        if (r < 0) {
                path_str_unref(e->path);
                *e = (struct fdpath_entry) { .pid = pid, .fd = fd, .mnt_id = captured ? captured->mnt_id : 0,
                                             .ino = captured ? captured->ino : 0, .checked = generation,
                                             .failed = state_of_error(r) };
                *ret_path = NULL;
                *ret_state = e->failed;
                return;
        }
        path_str_unref(e->path);
        *e = (struct fdpath_entry) { .pid = pid, .fd = fd, .mnt_id = mnt_id, .ino = ino, .checked = generation, .path = p };
        file_remember(c, mnt_id, ino, p);
        if (captured && (captured->mnt_id != mnt_id || captured->ino != ino)) {
                /* the fd names another file now: the one of the call is not known any more */
                *ret_path = NULL;
                *ret_state = PATH_REUSED;
                return;
        }
        *ret_path = path_str_ref(p);
        *ret_state = captured ? PATH_OK : PATH_UNVERIFIED;
}

/* Listing a /proc fd directory builds a dentry and an inode for each entry listed: read with readdir()'s 32 KiB,
 * a look at 32 files of a process with thousands built a thousand, and a fan-out of such processes held the
 * drains up until the rings overflowed.  The buffer holds what is wanted and no more. */
#define PRIME_DIRENT_SIZE 32u /* an fd's entry: the 19-byte header and a name of up to 10 digits, 8-aligned */
#define PRIME_BATCH 32u       /* entries a read asks for at most */

size_t fdpath_prime(struct fdpath_cache *c, uint32_t pid, long *pos, size_t max, bool *ret_done) {
        char dir_path[128];
        snprintf(dir_path, sizeof(dir_path), "%s/%u/fd", c->proc_root, pid);
        *ret_done = true;
        _cleanup_(closep) int dir = open(dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return 0;
        if (*pos && lseek(dir, *pos, SEEK_SET) < 0) /* /proc's fd directories go on from an fd number */
                return 0;
        _Alignas(struct dirent64) uint8_t buf[(PRIME_BATCH + 2) * PRIME_DIRENT_SIZE]; /* + "." and ".." */
        size_t n = 0;
        while (n < max) {
                ssize_t got = getdents64(dir, buf, MIN(sizeof(buf), (max - n + 2) * PRIME_DIRENT_SIZE));
                if (got <= 0)
                        return n; /* the end, or the process gone */
                for (ssize_t off = 0; off < got && n < max;) {
                        const struct dirent64 *de = (const void *) (buf + off);
                        off += de->d_reclen;
                        *pos = (long) de->d_off;
                        char *end;
                        unsigned long fd = strtoul(de->d_name, &end, 10);
                        if (*end || end == de->d_name || fd > UINT32_MAX)
                                continue;
                        struct path_str *p = NULL;
                        uint32_t mnt_id;
                        uint64_t ino;
                        c->lookups++;
                        n++;
                        if (fdpath_resolve(c->proc_root, pid, (uint32_t) fd, &p, &mnt_id, &ino) < 0)
                                continue;
                        file_remember(c, mnt_id, ino, p);
                        path_str_unref(p);
                }
        }
        *ret_done = false;
        return n;
}

void fdpath_forget(struct fdpath_cache *c, uint32_t pid) {
        for (size_t i = 0; i < c->cap; i++)
                if (c->slots[i].pid == pid) {
                        path_str_unref(c->slots[i].path);
                        c->slots[i] = (struct fdpath_entry) {};
                }
}
