/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include "config.h"
#include "entry.h"

struct sink_stats {
        uint64_t written; /* entries handed to the destination */
        uint64_t dropped; /* entries that could not be written */
        int last_error;   /* negative errno of the latest failure, 0 none */
};

/* What a sink has to say of itself while it runs (it cannot write, it writes again): the daemon's to print.
 * level: syslog's.  It may be called from a sink's own thread. */
typedef void (*sink_log_fn)(void *userdata, int level, const char *message);

/* Where entries go.  The engine does not know which sink is at the end. */
struct sink {
        const struct sink_ops *ops;
        struct sink_stats stats;
        sink_log_fn log;
        void *log_userdata;
        bool closed; /* the destination is gone for good (a pipe whose reader closed it): nothing will get through */
};

/* Say it through the daemon's log, if it gave one. */
void sink_say(struct sink *s, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

struct sink_ops {
        int (*write)(struct sink *s, const struct entry *e);
        int (*flush)(struct sink *s); /* never blocks for long: the rings wait meanwhile */
        int (*finish)(struct sink *s, unsigned timeout_ms); /* at exit: everything out, or counted dropped */
        void (*free)(struct sink *s);
        int (*reopen)(struct sink *s); /* optional: a file moved away by logrotate */
        /* optional: what it did, said when it closes ("N entries written to PATH, M rotations") */
        void (*report)(const struct sink *s, char *buf, size_t size);
};

static inline int sink_write(struct sink *s, const struct entry *e) {
        return s->ops->write(s, e);
}
static inline int sink_flush(struct sink *s) {
        return s->ops->flush(s);
}
static inline int sink_finish(struct sink *s, unsigned timeout_ms) {
        return s->ops->finish(s, timeout_ms);
}
static inline int sink_reopen(struct sink *s) {
        return s->ops->reopen ? s->ops->reopen(s) : 0;
}
/* Empty when the sink has nothing to say. */
static inline void sink_report(const struct sink *s, char *buf, size_t size) {
        buf[0] = 0;
        if (s->ops->report)
                s->ops->report(s, buf, size);
}
void sink_free(struct sink *s);
void sink_freep(struct sink **s);

/* The config's output.format (text or JSON lines) to an open descriptor (stdout in the foreground), buffered and
 * written a batch at a time. */
int sink_fd_new(int fd, const struct output_config *o, unsigned max_iocbs_per_call, struct sink **ret);
/* One structured journal entry per entry (format_journal.h), sent by a thread of its own from a queue of
 * queue_bytes: a slow journal costs dropped entries, counted and reported, never a stalled ring. */
int sink_journal_new(unsigned max_iocbs_per_call, size_t queue_bytes, struct sink **ret);
/* The config's output.path, rotated at output.max_size keeping output.keep files, text or JSON lines. */
int sink_file_new(const struct output_config *o, unsigned max_iocbs_per_call, struct sink **ret, char *error,
                  size_t error_size);
/* What opening the file sink would refuse, found without creating anything: the path must be a regular file
 * or not exist yet, in a directory that exists and can be written, not a symbolic link.  0, or why not. */
int sink_file_check(const struct output_config *o, char *error, size_t error_size);
