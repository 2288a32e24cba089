/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "util.h"

/* A path, shared by the cache and every request that names it: allocated once per lookup that misses, never
 * per request. */
struct path_str {
        uint32_t refs;
        uint32_t len;
        char s[];
};

struct path_str *path_str_ref(struct path_str *p);
void path_str_unref(struct path_str *p);

/* How far a path can be trusted. */
enum path_state {
        PATH_NONE,       /* not looked up */
        PATH_OK,         /* the file the fd named during the call: checked against what the kernel captured */
        PATH_UNVERIFIED, /* looked up after the call with nothing to check it against: the fd may name another
                          * file by now */
        PATH_REUSED,     /* the fd names another file than during the call: closed and reused since */
        PATH_GONE,       /* the fd was closed, or the process is gone, before it could be looked up */
        PATH_DENIED,     /* not allowed to look */
        PATH_NOT_FD,     /* negative: no process has such an fd (the request fails with EBADF) */
        PATH_TOO_LONG,   /* longer than PATH_MAX: /proc cannot give it */
        PATH_NOT_KNOWN,  /* a file known by its identity alone, never seen under a path */
        PATH_MOVED,      /* the fd named another file at the call's enter than at its exit */
        _PATH_STATE_MAX,
};

_const_ const char *path_state_name(enum path_state s);

struct fdpath_entry {
        uint32_t pid; /* 0: empty */
        uint32_t fd;
        uint32_t mnt_id;
        uint64_t ino;
        uint64_t checked; /* the generation it was last looked up in */
        uint64_t verified; /* 1 + the generation its path was last seen to name its inode still; 0: never */
        struct path_str *path; /* NULL: the lookup failed, as `failed` says (kept for that generation only) */
        enum path_state failed;
};

/* A file, by its identity, and the path it was last found under. */
struct fdpath_file {
        uint32_t mnt_id;
        uint64_t ino;
        struct path_str *path; /* NULL: empty */
        uint64_t verified;     /* as fdpath_entry's */
};

/* (pid, fd) -> the path /proc/PID/fd/FD names, with the (mnt_id, ino) of the file it was for; and (mnt_id, ino)
 * -> path, which names a file the kernel saw during a call even after the fd is closed or reused (a program
 * that closes and reopens its files).  Both direct-mapped and bounded: a collision replaces the older entry. */
struct fdpath_cache {
        struct fdpath_entry *slots;
        struct fdpath_file *files;
        size_t cap; /* of each, a power of two */
        char proc_root[64];
        uint64_t lookups; /* /proc lookups made (cache misses) */
        uint64_t learned; /* paths the capture told, walked up in the kernel */
};

int fdpath_cache_init(struct fdpath_cache *c, size_t cap, const char *proc_root);
void fdpath_cache_done(struct fdpath_cache *c);

/* A file's path as the capture walked it in the kernel (relative to the daemon's root): remembered for its
 * identity, as a path /proc gave would be.  0 or -ENOMEM. */
int fdpath_learn(struct fdpath_cache *c, uint32_t mnt_id, uint64_t ino, const char *path, size_t len);
/* The path of a file known by its identity alone (what the kernel used, no fd of pid known to name it): one it
 * was found under before, still naming it (PATH_OK); PATH_UNVERIFIED where that cannot be checked without
 * waiting on its file system (or the lookup in the kernel's cache is denied); else PATH_NOT_KNOWN. */
void fdpath_of_identity(struct fdpath_cache *c, uint32_t pid, uint32_t mnt_id, uint64_t ino, uint64_t generation,
                        struct path_str **ret_path, enum path_state *ret_state);
/* The path of pid's fd.  With `captured` (the file the kernel saw during the call) the answer is checked
 * against it: PATH_OK (the path that file was found under, by this fd or another) or PATH_REUSED.  Without,
 * it is PATH_UNVERIFIED, looked up again at most once per `generation`.  *ret_path gets a reference (NULL when
 * there is no path); ret_state always gets a value. */
void fdpath_lookup(struct fdpath_cache *c, uint32_t pid, uint32_t fd, const struct capture_file *captured,
                   uint64_t generation, struct path_str **ret_path, enum path_state *ret_state);

/* The files pid has open now, remembered by their identity: a file the kernel names at a later call is then
 * known even when it was closed before that call's path could be looked up.  At most max of them, from *pos on
 * (0: the first), which is left where the next call goes on; *ret_done when none is left.  Returns how many
 * were looked at. */
size_t fdpath_prime(struct fdpath_cache *c, uint32_t pid, long *pos, size_t max, bool *ret_done);

/* Forget a process's fds (it exited or exec'd). */
void fdpath_forget(struct fdpath_cache *c, uint32_t pid);

/* Look up now, uncached: the path and the file's (mnt_id, ino), all of one open file, from /proc alone (no file
 * system is asked).  0, or -ENOENT (no such fd or process), -EACCES, -EAGAIN (the fd named another file as it
 * was looked at), ... */
int fdpath_resolve(const char *proc_root, uint32_t pid, uint32_t fd, struct path_str **ret_path,
                   uint32_t *ret_mnt_id, uint64_t *ret_ino);
