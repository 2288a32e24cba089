/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "sink.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <stdlib.h>
#include <unistd.h>

#include "fileio.h"
#include "format_json.h"
#include "outbuf.h"
#include "util.h"

#define FLUSH_AT (256u * 1024u)

struct sink_fd {
        struct sink base;
        int fd;
        bool error_told;
        struct line_format format;
        struct outbuf buf, text;
        uint64_t buffered; /* entries in buf */
};

void sink_say(struct sink *s, int level, const char *fmt, ...) {
        if (!s->log)
                return;
        char msg[4600];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        s->log(s->log_userdata, level, msg);
}

void sink_free(struct sink *s) {
        if (s)
                s->ops->free(s);
}

void sink_freep(struct sink **s) {
        sink_free(*s);
}

static int fd_flush(struct sink *s) {
        struct sink_fd *f = (struct sink_fd *) s;
        /* the wall clock may have been stepped (or the machine suspended): "ts" follows it from batch to batch */
        f->format.realtime_offset_ns = json_realtime_offset();
        size_t written;
        int r = write_all(f->fd, f->buf.data, f->buf.len, &written);
        if (r < 0) {
                /* Lines already out stay counted as written; what is left of the batch is dropped, not retried
                 * forever against a closed or full destination. */
                s->stats.dropped += f->buffered;
                s->stats.last_error = r;
                s->closed = r == -EPIPE;
                if (!f->error_told) {
                        char name[16];
                        sink_say(s, LOG_WARNING, "standard output: %s (%s); entries are counted as dropped%s",
                                 strerror(-r), errno_name(-r, name), s->closed ? "" : " until it works again");
                        f->error_told = true;
                }
        } else {
                s->stats.written += f->buffered;
                if (f->error_told && f->buffered) {
                        sink_say(s, LOG_NOTICE, "standard output: writing again");
                        f->error_told = false;
                }
        }
        f->buffered = 0;
        outbuf_reset(&f->buf);
        return r;
}

static int fd_write(struct sink *s, const struct entry *e) {
        struct sink_fd *f = (struct sink_fd *) s;
        size_t before = f->buf.len;
        format_line(&f->buf, &f->text, &f->format, e);
        if (f->buf.failed) {
                f->buf.len = before;
                f->buf.failed = false;
                s->stats.dropped++;
                s->stats.last_error = -ENOMEM;
                return -ENOMEM;
        }
        f->buffered++;
        if (f->buf.len >= FLUSH_AT)
                return fd_flush(s);
        return 0;
}

static void fd_free(struct sink *s) {
        struct sink_fd *f = (struct sink_fd *) s;
        (void) fd_flush(s);
        outbuf_free(&f->buf);
        outbuf_free(&f->text);
        free(f);
}

static int fd_finish(struct sink *s, unsigned timeout_ms) {
        return fd_flush(s);
}

static const struct sink_ops fd_ops = { .write = fd_write, .flush = fd_flush, .finish = fd_finish, .free = fd_free };

int sink_fd_new(int fd, const struct output_config *o, unsigned max_iocbs_per_call, struct sink **ret) {
        struct sink_fd *f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        *f = (struct sink_fd) {
                .base.ops = &fd_ops, .fd = fd,
                .format = { .format = o->format, .json_message = o->json_message,
                            .max_iocbs_per_call = max_iocbs_per_call, .realtime_offset_ns = json_realtime_offset() },
        };
        if (!outbuf_reserve(&f->buf, FLUSH_AT + 65536)) {
                free(f);
                return -ENOMEM;
        }
        *ret = &f->base;
        return 0;
}
