/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Files a root daemon writes, in directories that other users may write to or own.  Nothing planted there (a
 * symbolic link, a FIFO, a hard link to another file, a file of another user) is followed, waited on, written
 * through or handed out as the daemon's. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The directory that holds path, opened (O_PATH): a symbolic link on the way is followed only where no other
 * user could have made it (the link and the directory holding it are root's or the daemon's, and that directory
 * is writable by nobody else).  *ret_name points at path's last component.  -ENOENT, -ENOTDIR, -EXDEV (a link
 * another user could have planted), ... */
int safe_dir_open(const char *path, int *ret_dirfd, const char **ret_name);

/* path opened with flags (O_NOFOLLOW and O_CLOEXEC added), every symbolic link on the way, the last component's
 * too, followed only where safe_dir_open() would follow one; a relative path from the working directory.
 * -EXDEV: a link another user could have made. */
int safe_file_open(const char *path, int flags, int *ret_fd);

/* Who else may write in a directory, for a warning: the uid that owns it when that is not root or us, else -1
 * for "group or others may write" (a sticky bit does not stop them making new files), else 0 (nobody else). */
long dir_other_writer(int dirfd);

/* name in dirfd opened for appending: a file that is there must be a regular file, owned by the daemon's uid,
 * with no other hard link; one that is not is made anew (O_EXCL).  Its mode is set to mode whatever it was.
 * ret_st: the file's (on failure, what is there, when anything is, for the message).  Never waits on a FIFO.  Errors: -ELOOP a
 * symbolic link, -EINVAL not a regular file, -EPERM another user's, -EMLINK other hard links. */
int owned_file_open(int dirfd, const char *name, mode_t mode, int *ret_fd, struct stat *ret_st);

/* Why owned_file_open() refused, in words, naming whose is what is there ("is a symbolic link of uid 65534
 * (nobody), which is refused, not followed"); NULL for an error of the system (strerror's). */
const char *owned_file_refusal(int r, const struct stat *st, char *buf, size_t size);

/* What is there, and whose: "a FIFO of uid 65534 (nobody)". */
const char *file_found_describe(const struct stat *st, char *buf, size_t size);

/* path replaced whole with data: written to a new file of a name nobody can guess (made with O_EXCL, hidden by
 * a leading dot, not ending as path does), given mode and, unless gid is (gid_t) -1, the group, then renamed
 * over path.  What was at path is never opened.  A reader sees the old file or the new, never half of one. */
int file_replace(const char *path, const void *data, size_t len, mode_t mode, gid_t gid);

/* path removed if it is a regular file of the daemon's uid (what file_replace() made), else left alone: 0, 1
 * when removed, or a negative errno. */
int file_remove_owned(const char *path);
