/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Entries to a file that rotates itself, as auditd does: when the next entry would pass max_size, path.N-1
 * becomes path.N ... path becomes path.1 (the oldest goes), and a new path is opened.  The size is counted
 * here.  Lines are written in batches of whole entries; a batch that cannot be written whole (ENOSPC, EIO) is
 * cut back off the file, so no line is ever torn, and its entries are counted as dropped.  Once writing works
 * again, an entry saying how many were dropped comes first. */
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "format_json.h"
#include "outbuf.h"
#include "safefile.h"
#include "util.h"

#define FLUSH_AT (256u * 1024u)

struct sink_file {
        struct sink base;
        char path[4096];
        uint64_t max_size;
        unsigned keep;
        mode_t mode;
        struct line_format format;
        int fd;           /* -1: not open (failed; retried at the next flush) */
        int dirfd;        /* the directory that holds it, while it is open: rotation happens there */
        const char *name; /* in path: the file's name in dirfd */
        uint64_t size;    /* of the open file */
        struct outbuf buf, text, entry;
        uint64_t buffered;
        uint64_t pending_dropped; /* not yet reported in the file */
        uint64_t rotations;
        bool error_told;
        bool rotation_told;
        pid_t holder;     /* of the lock, when another process has the file */
        struct stat found; /* what a refused open found there */
};

/* The file as owned_file_open() takes it (never a symbolic link, a FIFO, another user's file or a hard link to
 * another name), in its directory opened anew each time (a directory removed and made again is followed).
 * Locked for writing, so that a second daemon given the same path does not write and rotate it too (-EBUSY,
 * the holder in f). */
static int file_open(struct sink_file *f) {
        _cleanup_(closep) int dirfd = -1, fd = -1;
        int r = safe_dir_open(f->path, &dirfd, &f->name);
        if (r < 0)
                return r;
        struct stat st = {};
        r = owned_file_open(dirfd, f->name, f->mode, &fd, &st);
        if (r < 0) {
                f->found = st;
                return r;
        }
        r = lock_for_writing(fd, &f->holder);
        if (r < 0)
                return r;
        f->fd = TAKE_FD(fd);
        f->dirfd = TAKE_FD(dirfd);
        f->size = (uint64_t) st.st_size;
        return 0;
}

static void file_close(struct sink_file *f) {
        if (f->fd >= 0)
                close(f->fd);
        if (f->dirfd >= 0)
                close(f->dirfd);
        f->fd = f->dirfd = -1;
}

static void tell_rotation_error(struct sink_file *f, const char *from, const char *to, int r) {
        if (f->rotation_told)
                return;
        sink_say(&f->base, LOG_WARNING, "%s: rotation: cannot rename %s to %s: %s; the file grows past max_size "
                 "until it can", f->path, from, to, strerror(-r));
        f->rotation_told = true;
}

/* Inside the directory the file was opened in: whatever is done meanwhile to the path's other components. */
static void rotate(struct sink_file *f) {
        char from[NAME_MAX + 16], to[NAME_MAX + 16];
        int dirfd = TAKE_FD(f->dirfd);
        file_close(f);
        for (unsigned n = f->keep; n > 1; n--) {
                snprintf(from, sizeof(from), "%s.%u", f->name, n - 1);
                snprintf(to, sizeof(to), "%s.%u", f->name, n);
                if (renameat(dirfd, from, dirfd, to) < 0 && errno != ENOENT) /* ENOENT: not that many yet */
                        tell_rotation_error(f, from, to, -errno);
        }
        snprintf(to, sizeof(to), "%s.1", f->name);
        if (renameat(dirfd, f->name, dirfd, to) < 0)
                tell_rotation_error(f, f->name, to, -errno);
        else {
                f->rotations++;
                f->rotation_told = false;
        }
        close(dirfd);
        (void) file_open(f);
}

static void format_entry(struct sink_file *f, struct outbuf *b, const struct entry *e) {
        format_line(b, &f->text, &f->format, e);
}

static void tell_error(struct sink_file *f, int r) {
        f->base.stats.last_error = r;
        if (!f->error_told) {
                char name[16], why[256];
                const char *refusal = owned_file_refusal(r, &f->found, why, sizeof(why));
                sink_say(&f->base, LOG_WARNING, "%s: %s (%s); entries are counted as dropped until it works again",
                         f->path, refusal ? refusal : strerror(-r), errno_name(-r, name));
                f->error_told = true;
        }
}

/* Write buf whole or not at all. */
static int write_whole(struct sink_file *f, const char *data, size_t len) {
        size_t written;
        int r = write_all(f->fd, data, len, &written);
        if (r < 0) {
                if (written > 0 && ftruncate(f->fd, (off_t) f->size) < 0)
                        r = -errno; /* cannot cut it back: the file is in trouble anyway */
                return r;
        }
        f->size += len;
        return 0;
}

/* The entry that says what could not be written, first in line once writing works again. */
static int write_drop_report(struct sink_file *f) {
        outbuf_reset(&f->entry);
        format_entry(f, &f->entry, &(struct entry) { .kind = ENTRY_DROPPED, .time = now_ns(), .dropped = f->pending_dropped,
                                                     .error = f->base.stats.last_error, .where = f->path });
        return write_whole(f, f->entry.data, f->entry.len);
}

static int file_flush(struct sink *s) {
        struct sink_file *f = (struct sink_file *) s;
        /* the wall clock may have been stepped (or the machine suspended): "ts" follows it from batch to batch */
        f->format.realtime_offset_ns = json_realtime_offset();
        int r = 0;
        if (f->fd < 0)
                r = file_open(f);
        /* The count of an outage goes in with the batch after it, or not at all: one count an outage, however
         * often a few bytes fit meanwhile. */
        uint64_t size = f->size;
        if (r == 0 && f->pending_dropped)
                r = write_drop_report(f);
        if (r == 0 && f->buf.len)
                r = write_whole(f, f->buf.data, f->buf.len);
        if (r < 0 && f->fd >= 0 && f->size != size && ftruncate(f->fd, (off_t) size) == 0)
                f->size = size;
        if (r == 0)
                f->pending_dropped = 0;
        if (r < 0) {
                s->stats.dropped += f->buffered;
                f->pending_dropped += f->buffered;
                tell_error(f, r);
                if (r != -ENOSPC && r != -EDQUOT && r != -EFBIG)
                        file_close(f); /* the directory gone, the file removed: open afresh next time */
        } else {
                s->stats.written += f->buffered;
                if (f->error_told) {
                        sink_say(s, LOG_NOTICE, "%s: writing again", f->path);
                        f->error_told = false;
                }
        }
        f->buffered = 0;
        outbuf_reset(&f->buf);
        return r;
}

static int file_write(struct sink *s, const struct entry *e) {
        struct sink_file *f = (struct sink_file *) s;
        /* Formatted where it is written from: one copy fewer of every entry. */
        size_t start = f->buf.len;
        format_entry(f, &f->buf, e);
        if (f->buf.failed) {
                f->buf.len = start;
                f->buf.failed = false;
                s->stats.dropped++;
                f->pending_dropped++;
                return -ENOMEM;
        }
        /* Rotate before an entry that would pass the size: every file holds whole entries, in order. */
        if (f->fd >= 0 && f->size + f->buf.len > f->max_size && f->size + start > 0) {
                size_t len = f->buf.len - start;
                f->buf.len = start;
                (void) file_flush(s); /* empties buf, keeps its bytes: the entry stays where it was */
                rotate(f);
                memmove(f->buf.data, f->buf.data + start, len);
                f->buf.len = len;
        }
        f->buffered++;
        if (f->buf.len >= FLUSH_AT)
                return file_flush(s);
        return 0;
}

static int file_finish(struct sink *s, unsigned timeout_ms) {
        return file_flush(s);
}

static void file_destroy(struct sink_file *f) {
        file_close(f);
        outbuf_free(&f->buf);
        outbuf_free(&f->text);
        outbuf_free(&f->entry);
        free(f);
}

static void file_free(struct sink *s) {
        (void) file_flush(s);
        file_destroy((struct sink_file *) s);
}

static int file_reopen(struct sink *s) {
        struct sink_file *f = (struct sink_file *) s;
        (void) file_flush(s);
        file_close(f);
        return file_open(f);
}

static void file_report(const struct sink *s, char *buf, size_t size) {
        const struct sink_file *f = (const struct sink_file *) s;
        snprintf(buf, size, "%" PRIu64 " entries written to %s, %" PRIu64 " rotations", s->stats.written, f->path,
                 f->rotations);
}

static const struct sink_ops file_ops = {
        .write = file_write, .flush = file_flush, .finish = file_finish, .free = file_free,
        .reopen = file_reopen, .report = file_report,
};

static void explain(const char *path, int r, pid_t holder, const struct stat *found, char *error, size_t error_size) {
        char who[64], why[256];
        const char *refusal = owned_file_refusal(r, found, why, sizeof(why));
        if (r == -EBUSY)
                describe_holder(holder, who, sizeof(who));
        snprintf(error, error_size, "output.path %s: %s%s", path,
                 refusal       ? refusal
                 : r == -EBUSY ? "is being written by "
                               : strerror(-r),
                 r == -EBUSY ? who : "");
}

int sink_file_check(const struct output_config *o, char *error, size_t error_size) {
        if (o->sink != SINK_FILE)
                return 0;
        _cleanup_(closep) int dirfd = -1;
        const char *name;
        struct stat st = {};
        int r = safe_dir_open(o->path, &dirfd, &name);
        if (r < 0) {
                int dir_len = (int) (strrchr(o->path, '/') - o->path);
                snprintf(error, error_size, "output.path %s: its directory %.*s%s", o->path, dir_len ? dir_len : 1,
                         o->path, r == -ENOENT ? " does not exist"
                                  : r == -EXDEV ? " is reached through a symbolic link that another user could have made"
                                  : r == -ENOTDIR ? ": a component is not a directory"
                                                : ": cannot be opened");
                if (r != -ENOENT && r != -EXDEV && r != -ENOTDIR)
                        snprintf(error + strlen(error), error_size - strlen(error), " (%s)", strerror(-r));
                return r;
        }
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                r = S_ISLNK(st.st_mode) ? -ELOOP : !S_ISREG(st.st_mode) ? -EINVAL : st.st_uid != geteuid() ? -EPERM
                  : st.st_nlink > 1 ? -EMLINK : 0;
                if (r == 0 && faccessat(dirfd, name, W_OK, 0) < 0)
                        r = -errno;
        } else if (errno != ENOENT)
                r = -errno;
        else if (faccessat(dirfd, ".", W_OK | X_OK, 0) < 0) { /* not there yet: its directory must take it */
                r = -errno;
                snprintf(error, error_size, "output.path %s: its directory %.*s cannot take a new file: %s", o->path,
                         (int) (name - o->path - 1), o->path, strerror(-r));
                return r;
        }
        if (r < 0)
                explain(o->path, r, 0, &st, error, error_size);
        return r;
}

int sink_file_new(const struct output_config *o, unsigned max_iocbs_per_call, struct sink **ret, char *error,
                  size_t error_size) {
        struct sink_file *f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        *f = (struct sink_file) {
                .base.ops = &file_ops, .max_size = o->max_size, .keep = o->keep, .mode = (mode_t) o->mode,
                .format = { .format = o->format, .json_message = o->json_message,
                            .max_iocbs_per_call = max_iocbs_per_call, .realtime_offset_ns = json_realtime_offset() },
                .fd = -1, .dirfd = -1,
        };
        snprintf(f->path, sizeof(f->path), "%s", o->path);
        if (!outbuf_reserve(&f->buf, FLUSH_AT + 65536) || !outbuf_reserve(&f->text, 65536) ||
            !outbuf_reserve(&f->entry, 65536)) {
                file_destroy(f);
                return -ENOMEM;
        }
        int r = file_open(f);
        if (r < 0) {
                explain(f->path, r, f->holder, &f->found, error, error_size);
                file_destroy(f);
                return r;
        }
        *ret = &f->base;
        return 0;
}
