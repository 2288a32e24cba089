/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* The whole of a small file (/proc, /sys) in buf, NUL-terminated: its length, or a negative errno.  A file longer
 * than size - 1 bytes is cut there. */
ssize_t read_small_file(const char *path, char *buf, size_t size);
