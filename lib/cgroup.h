/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

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
