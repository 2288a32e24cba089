/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"
#include "outbuf.h"
#include "tracker.h"

/* Metrics for Prometheus, in its text format, for node_exporter's textfile collector.  Counted per program, as
 * a fleet names it across restarts: its command name and systemd unit, never its pid.  The counts come from the
 * tracker's summaries, which see every request's end exactly once, so they add up to the request records and
 * never go backwards while the daemon runs (a reload, a process's end). */

/* At most this many programs get series of their own; the rest are summed in comm="other", unit="".  While they
 * are all taken, a program idle for METRICS_IDLE_WRITES writes of the file (no request ended, none in flight) is
 * let go, so that a burst of short-lived programs cannot keep the programs that come after it in "other" for
 * the daemon's lifetime.  While there is room, an idle program keeps its series (no counter resets). */
#define METRICS_MAX_PROGRAMS 64
#define METRICS_IDLE_WRITES 3
/* The latency histogram's boundaries, in seconds: from 10 us to 10 s, 1-2.5-5 a decade. */
#define METRICS_LATENCY_BOUNDS 19

struct metrics_program {
        char comm[16];
        char unit[UNIT_NAME_MAX];
        uint64_t submitted[REQ_OPS];
        uint64_t completed[REQ_OPS];
        uint64_t punted[REQ_OPS]; /* io_uring's, handed to an io-wq worker */
        uint64_t polled;          /* io_uring's, armed for poll */
        uint64_t errors;
        uint64_t bytes_read;
        uint64_t bytes_written;
        uint64_t cancelled;
        uint64_t abandoned;
        uint64_t unresolved; /* stale, unmatched, unknown: ended, but not as anything above */
        uint64_t latency_le[METRICS_LATENCY_BOUNDS]; /* not cumulative: those first counted at bound i */
        uint64_t latency_count;
        uint64_t latency_sum_ns;
        uint64_t in_flight; /* a gauge: set before each write */
        uint64_t stuck;     /* of those, said to be stuck: a gauge too */
        uint64_t seen;      /* the write (metrics.writes) during which it last had a request end or in flight */
};

/* What the daemon says of itself beside the programs. */
struct metrics_daemon {
        uint64_t records;
        uint64_t lost;
        uint64_t dropped;
        uint64_t stale;
        uint64_t unreadable;
        uint64_t skipped_reads;
        uint64_t ring_bytes;
};

struct metrics {
        struct metrics_program programs[METRICS_MAX_PROGRAMS + 1]; /* the last: "other" */
        size_t n_programs;
        uint64_t writes; /* of the file so far: metrics_written() */
        uint64_t let_go; /* programs whose series were let go */
};

/* The boundaries, in ns, and as the le label writes them. */
extern const uint64_t metrics_latency_bound_ns[METRICS_LATENCY_BOUNDS];

void metrics_init(struct metrics *m);
/* One process's interval, added to its program's counts. */
void metrics_add_summary(struct metrics *m, const struct proc_summary *s);
/* The requests in flight now, per program, from the tracker. */
void metrics_set_in_flight(struct metrics *m, struct tracker *t);
/* Everything, in the text exposition format. */
void metrics_format(const struct metrics *m, const struct metrics_daemon *d, struct outbuf *b);
/* After each write: while every program's series are taken, those idle for METRICS_IDLE_WRITES writes go.  How
 * many went. */
size_t metrics_written(struct metrics *m);
