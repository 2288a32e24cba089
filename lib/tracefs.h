/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define TRACEFS_DEFAULT "/sys/kernel/tracing"

/* Where tracefs is: its own mount, or tracing/ under debugfs; with mount_if_missing, mount it at
 * TRACEFS_DEFAULT as libtracefs does (then 1, so the caller can say so: the mount stays).  mounts_path is
 * normally /proc/self/mounts.  -EACCES: it is mounted, but this process may not read it. */
int tracefs_find(const char *mounts_path, bool mount_if_missing, char *ret, size_t size);

/* Whether a seccomp filter confines this process (a unit's SystemCallFilter=, a container's): a system call
 * outside it may kill the process rather than fail, so nothing that is not needed is tried. */
bool seccomp_filtered(void);
