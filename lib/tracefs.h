/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Where tracefs is: its own mount, or tracing/ under debugfs; with mount_if_missing, mount it at
 * /sys/kernel/tracing as libtracefs does.  mounts_path is normally /proc/self/mounts.  -EACCES: it is mounted,
 * but this process may not read it. */
int tracefs_find(const char *mounts_path, bool mount_if_missing, char *ret, size_t size);
