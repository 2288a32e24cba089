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

/* The fields of a request or summary entry, named once for every structured format.  One list, so the two
 * schemas cannot drift apart. */
struct field_writer {
        void (*str)(struct field_writer *w, const struct field_name *name, const char *v, size_t len);
        /* a word of aiotraced's own (a kind, an op, an errno name): printable ASCII, nothing to escape */
        void (*word)(struct field_writer *w, const struct field_name *name, const char *v);
        void (*u64)(struct field_writer *w, const struct field_name *name, uint64_t v);
        void (*s64)(struct field_writer *w, const struct field_name *name, int64_t v);
        void (*ptr)(struct field_writer *w, const struct field_name *name, uint64_t v); /* an address or flags: hex */
};

/* A call's arguments, as the syscall table lists them (those the journal carries, with journal set), and what
 * it read beyond them when call_aux_shown() says so. */
void call_arg_fields(struct field_writer *w, const struct aio_call *c, bool journal);
/* A call's fields: who made it, its result and how long it took, its arguments and what it read beyond them.
 * The journal's have OBJECT_PID first and the syscall after the names; JSON's the syscall first, and say when
 * the call began before tracing or what could not be read. */
void call_fields(struct field_writer *w, const struct aio_call *c, bool journal);
/* Whether a call shows its aux value (or why it could not be read): io_setup's new context once the call made
 * one, a timeout whenever one was given. */
bool call_aux_shown(const struct aio_call *c);

/* What names a process after it is gone: its systemd unit and its cgroup, when it is in one (the root says
 * nothing); and its pid as its own pid namespace (a container's) has it, where that is another. */
void process_fields(struct field_writer *w, const char *unit, const char *cgroup, uint32_t ns_pid);
void request_fields(struct field_writer *w, const struct request *r);
void summary_fields(struct field_writer *w, const struct proc_summary *s);
/* A file's summary: its path, or for the other line how many files and requests without a path it holds. */
void file_summary_fields(struct field_writer *w, const struct file_summary *s);

/* Anything in the request not vouched for (stale, unmatched, unknown, evicted, a path not checked): a warning. */
int request_priority(const struct request *r);

/* The latency percentiles a summary reports, in order. */
#define SUMMARY_PERCENTILES 4
extern const double summary_percentiles[SUMMARY_PERCENTILES];
