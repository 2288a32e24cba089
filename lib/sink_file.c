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
#include <time.h>
#include <unistd.h>

#include "format_json.h"
#include "outbuf.h"
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
        uint64_t size;    /* of the open file */
        struct outbuf buf, text, entry;
        uint64_t buffered;
        uint64_t pending_dropped; /* not yet reported in the file */
        uint64_t rotations;
        bool error_told;
};

/* O_NOFOLLOW: a symlink planted at the path is refused (ELOOP), not followed. */
static int file_open(struct sink_file *f) {
        int fd = open(f->path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, f->mode);
        if (fd < 0)
                return -errno;
        struct stat st;
        int r = fstat(fd, &st) < 0 ? -errno : S_ISREG(st.st_mode) ? 0 : -EINVAL;
        if (r < 0) {
                close(fd);
                return r;
        }
        f->fd = fd;
        f->size = (uint64_t) st.st_size;
        return 0;
}

static void file_close(struct sink_file *f) {
        if (f->fd >= 0)
                close(f->fd);
        f->fd = -1;
}

static void rotate(struct sink_file *f) {
        char from[4200], to[4200];
        file_close(f);
        for (unsigned n = f->keep; n > 1; n--) {
                snprintf(from, sizeof(from), "%s.%u", f->path, n - 1);
                snprintf(to, sizeof(to), "%s.%u", f->path, n);
                (void) rename(from, to); /* ENOENT: not that many yet */
        }
        snprintf(to, sizeof(to), "%s.1", f->path);
        (void) rename(f->path, to);
        f->rotations++;
        (void) file_open(f);
}

static void format_entry(struct sink_file *f, struct outbuf *b, const struct entry *e) {
        format_line(b, &f->text, &f->format, e);
}

static void tell_error(struct sink_file *f, int r) {
        f->base.stats.last_error = r;
        if (!f->error_told) {
                char name[16];
                fprintf(stderr, "aiotraced: %s: %s (%s); entries are counted as dropped until it works again\n",
                        f->path, strerror(-r), errno_name(-r, name));
                f->error_told = true;
        }
}

/* Write buf whole or not at all. */
static int write_whole(struct sink_file *f, const char *data, size_t len) {
        size_t off = 0;
        while (off < len) {
                ssize_t n = write(f->fd, data + off, len - off);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        int r = n < 0 ? -errno : -ENOSPC;
                        if (off > 0 && ftruncate(f->fd, (off_t) f->size) < 0)
                                r = -errno; /* cannot cut it back: the file is in trouble anyway */
                        return r;
                }
                off += (size_t) n;
        }
        f->size += len;
        return 0;
}

/* The entry that says what could not be written, first in line once writing works again. */
static int write_drop_report(struct sink_file *f) {
        if (!f->pending_dropped)
                return 0;
        char msg[4400], name[16];
        snprintf(msg, sizeof(msg), "%llu entries could not be written to %s (%s)",
                 (unsigned long long) f->pending_dropped, f->path, errno_name(-f->base.stats.last_error, name));
        outbuf_reset(&f->entry);
        format_entry(f, &f->entry,
                     &(struct entry) { .kind = ENTRY_INFO, .time = now_ns(), .message = msg, .priority = 4 });
        int r = write_whole(f, f->entry.data, f->entry.len);
        if (r == 0)
                f->pending_dropped = 0;
        return r;
}

static int file_flush(struct sink *s) {
        struct sink_file *f = (struct sink_file *) s;
        /* the wall clock may have been stepped (or the machine suspended): "ts" follows it from batch to batch */
        f->format.realtime_offset_ns = json_realtime_offset();
        int r = 0;
        if (f->fd < 0)
                r = file_open(f);
        if (r == 0 && f->pending_dropped)
                r = write_drop_report(f);
        if (r == 0 && f->buf.len)
                r = write_whole(f, f->buf.data, f->buf.len);
        if (r < 0) {
                s->stats.dropped += f->buffered;
                f->pending_dropped += f->buffered;
                tell_error(f, r);
                if (r != -ENOSPC && r != -EDQUOT && r != -EFBIG)
                        file_close(f); /* the directory gone, the file removed: open afresh next time */
        } else {
                s->stats.written += f->buffered;
                if (f->error_told) {
                        fprintf(stderr, "aiotraced: %s: writing again\n", f->path);
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

int sink_file_new(const struct output_config *o, unsigned max_iocbs_per_call, struct sink **ret) {
        struct sink_file *f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        *f = (struct sink_file) {
                .base.ops = &file_ops, .max_size = o->max_size, .keep = o->keep, .mode = (mode_t) o->mode,
                .format = { .format = o->format, .json_message = o->json_message,
                            .max_iocbs_per_call = max_iocbs_per_call, .realtime_offset_ns = json_realtime_offset() },
                .fd = -1,
        };
        snprintf(f->path, sizeof(f->path), "%s", o->path);
        if (!outbuf_reserve(&f->buf, FLUSH_AT + 65536) || !outbuf_reserve(&f->text, 65536) ||
            !outbuf_reserve(&f->entry, 65536)) {
                file_destroy(f);
                return -ENOMEM;
        }
        int r = file_open(f);
        if (r < 0) {
                file_destroy(f);
                return r;
        }
        *ret = &f->base;
        return 0;
}
