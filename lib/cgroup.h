/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UNIT_NAME_MAX 256 /* systemd's, with its NUL */

/* The systemd unit a cgroup path is in: its first component past the slices that names a service or a scope
 * ("/system.slice/mariadb.service/x" -> "mariadb.service"), as systemd's cg_path_get_unit reads it.  0, or
 * -ENOENT when the path is in no such unit (the root, a slice itself), -ENAMETOOLONG.  ret untouched on failure. */
int cgroup_path_unit(const char *path, char ret[static UNIT_NAME_MAX]);

/* The cgroup path of a process from the text of /proc/PID/cgroup: the unified hierarchy's ("0::PATH"), or on a
 * hybrid layout systemd's own ("N:name=systemd:PATH"), which is where systemd keeps its units there.  A pointer
 * into text and its length, or NULL. */
const char *cgroup_of_proc_text(const char *text, size_t *ret_len);

#define CGROUP_PATH_MAX 512 /* kept of a process's cgroup path; a longer one is not kept */

/* The cgroup path of pid, from PROC_ROOT/PID/cgroup: 0, or a negative errno (-ENOENT: gone, or none found;
 * -ENAMETOOLONG).  ret untouched on failure. */
int proc_cgroup(const char *proc_root, uint32_t pid, char ret[static CGROUP_PATH_MAX]);

/* The mount point of the cgroup v2 hierarchy, from a mountinfo file (/proc/self/mountinfo): 0, -ENOENT when it
 * is mounted nowhere (a v1-only layout).  ret untouched on failure. */
int cgroup2_mount_point(const char *mountinfo_path, char *ret, size_t size);

#define CGROUP_FIND_DEPTH 32   /* levels cgroup_find_named() looks at: the capture's CAPTURE_CGROUP_DEPTH */
#define CGROUP_PATTERNS_MAX 64 /* cgroup globs a watch list may give: the config's bound */
#define CGROUP_PATTERN_SIZE 512

/* Each cgroup below root (a cgroup2 mount point) whose path from root matches one of the patterns, as fnmatch(3)
 * with FNM_PATHNAME ("/" is the root itself): found() gets which pattern, the path from root and the cgroup's id
 * (its directory's inode, what the kernel calls it).  One walk for them all, which reads a directory only where
 * some pattern's leading components match the way there.  The number found, or the first negative errno of
 * found() or of root (-E2BIG: more than CGROUP_PATTERNS_MAX patterns).  ret_dirs_read (optional): how many
 * directories were read. */
int cgroup_find_all(const char *root, const char *const *patterns, size_t n,
                    int (*found)(void *userdata, size_t which, const char *path, uint64_t id), void *userdata,
                    unsigned *ret_dirs_read);
/* The same for one pattern. */
int cgroup_find(const char *root, const char *pattern,
                int (*found)(void *userdata, const char *path, uint64_t id), void *userdata);

/* The same for each cgroup named name, at any level (a unit's, as systemd names them): not below a match. */
int cgroup_find_named(const char *root, const char *name,
                      int (*found)(void *userdata, const char *path, uint64_t id), void *userdata);
