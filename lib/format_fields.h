/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "field_name.h"
#include "file_summary.h"
#include "outbuf.h"
#include "tracker.h"

/* Append a name (padded to FIELD_NAME_MAX) in one fixed-size copy. */
static inline void field_name_put(struct outbuf *b, const char name[static FIELD_NAME_MAX], size_t len) {
        if (!outbuf_reserve(b, FIELD_NAME_MAX))
                return;
        memcpy(b->data + b->len, name, FIELD_NAME_MAX);
        b->len += len;
}

/* The fields of a call, a request or a summary, listed once for every format: JSON and the journal write each
 * through their writer, and the text whatever it does not lay out by hand (the tails below).  One list, so the
 * formats cannot drift apart. */
struct field_writer {
        void (*str)(struct field_writer *w, const struct field_name *name, const char *v, size_t len);
        /* a word of aiotraced's own (a kind, an op, an errno name): printable ASCII, nothing to escape */
        void (*word)(struct field_writer *w, const struct field_name *name, const char *v);
        void (*u64)(struct field_writer *w, const struct field_name *name, uint64_t v);
        void (*s64)(struct field_writer *w, const struct field_name *name, int64_t v);
        void (*ptr)(struct field_writer *w, const struct field_name *name, uint64_t v); /* an address or flags: hex */
};

/* A call's fields: who made it, its result and how long it took, its arguments and what it read beyond them.
 * The journal's have OBJECT_PID first and the syscall after the names; JSON's the syscall first, and say when
 * the call began before tracing or what could not be read. */
void call_fields(struct field_writer *w, const struct aio_call *c, bool journal);
/* Whether a call shows its aux value (or why it could not be read): io_setup's new context once the call made
 * one, a timeout whenever one was given. */
bool call_aux_shown(const struct aio_call *c);

void request_fields(struct field_writer *w, const struct request *r);
void summary_fields(struct field_writer *w, const struct proc_summary *s);
/* A file's summary: its path, or for the other line how many files and requests without a path it holds. */
void file_summary_fields(struct field_writer *w, const struct file_summary *s);

/* The fields of a list that the text layout does not lay out by hand (see struct field_name), written at the end
 * of the entry's text line as ", name = value" (the name JSON's, the value as the text writes it): with
 * these, a field added to a list shows in text too.  A call's come before the newline of its first line. */
void call_text_tail(struct outbuf *b, const struct aio_call *c);
void request_text_tail(struct outbuf *b, const struct request *r);
void summary_text_tail(struct outbuf *b, const struct proc_summary *s);
void file_summary_text_tail(struct outbuf *b, const struct file_summary *s);

/* The writer behind the tails, for one field at a time. */
struct text_tail {
        struct field_writer w;
        struct outbuf *b;
};
void text_tail_init(struct text_tail *t, struct outbuf *b);

/* Anything in the request not vouched for (stale, unmatched, unknown, evicted, a path not checked): a warning. */
int request_priority(const struct request *r);

/* The latency percentiles a summary reports, in order. */
#define SUMMARY_PERCENTILES 4
extern const double summary_percentiles[SUMMARY_PERCENTILES];
