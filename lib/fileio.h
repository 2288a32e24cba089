/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The whole of a small file (/proc, /sys) in buf, NUL-terminated: its length, or a negative errno.  A file longer
 * than size - 1 bytes is cut there. */
ssize_t read_small_file(const char *path, char *buf, size_t size);

/* All of data to fd, through EINTR and short writes: 0, or a negative errno (-ENOSPC: a write took nothing).
 * *written says how much went out either way. */
int write_all(int fd, const void *data, size_t len, size_t *written);

/* A write lock on the whole of an open file, for as long as it stays open: -EBUSY when another process holds
 * one, whose pid goes to *ret_holder (0 if the kernel does not say). */
int lock_for_writing(int fd, pid_t *ret_holder);
/* "another aiotraced (pid 42)", "pid 42 (vim)": who holds a lock, in words. */
void describe_holder(pid_t holder, char *buf, size_t size);

/* The soft limit on open files raised to the hard one (nothing here uses select()), and both to want where the
 * hard one is lower and the process may raise it.  The limit now, which may still be below want, in
 * *ret_limit. */
int fd_limit_raise(size_t want, size_t *ret_limit);

/* How many files this process has open now (/proc/self/fd). */
int count_open_files(size_t *ret_count);
/* This process's resident memory now, in KiB (/proc/self/status). */
int resident_kib(size_t *ret_kib);

/* The inode number and device of the file at path (from dirfd), looked up without waiting on any file system: the
 * path only where every component is in the kernel's cache and needs no revalidation (openat2's RESOLVE_CACHED),
 * the attributes as the kernel holds them (AT_STATX_DONT_SYNC).  A stalled FUSE server or a hung NFS mount is
 * never asked: -EAGAIN where the lookup would need to ask a file system, -ENOENT, ...  Where openat2 cannot be
 * had (see cached_lookup_available), an ordinary lookup, which may wait. */
int file_identity_cached(int dirfd, const char *path, uint64_t *ret_ino, dev_t *ret_dev);
/* Whether file_identity_cached can keep from waiting: not before Linux 5.12 (no RESOLVE_CACHED), nor under a
 * seccomp filter that denies openat2 (systemd's RestrictSUIDSGID=: it cannot read openat2's flags). */
bool cached_lookup_available(void);
