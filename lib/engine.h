/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "config.h"
#include "entry.h"
#include "events.h"
#include "aio_requests.h"
#include "tracker.h"
#include "uring_requests.h"
#include "ring.h"
#include "threads.h"

struct engine_callbacks {
        void (*emit)(void *userdata, const struct entry *e);
        /* a watched thread created another (sched_process_fork): the daemon decides whether to follow it */
        void (*fork)(void *userdata, uint32_t parent_tid, uint32_t child_tid);
        /* optional: every record as read from a ring, before it is handled (aiotraced --dump) */
        void (*record)(void *userdata, const struct perf_event_header *h);
        /* optional: whether a thread is watched, asked at its first record and again after an exec or
         * engine_reselect(); 1 yes, 0 no, negative errno: it cannot be told (the process is gone) */
        int (*select)(void *userdata, uint32_t pid, uint32_t tid, const char *comm);
        /* optional: every process's summary, whether or not summaries are recorded (the daemon's metrics) */
        void (*summary)(void *userdata, const struct proc_summary *s);
        /* optional: the counts summed in the kernel to hand to the tracker (tracker_kernel_sum) now: every
         * process's (pid 0), or one's at its end */
        void (*collect)(void *userdata, uint32_t pid, uint64_t start_time);
        void *userdata;
};

struct engine_options {
        unsigned max_iocbs_per_call;
        size_t max_inflight;
        size_t max_inflight_per_process; /* 0: max_inflight */
        unsigned records;                /* RECORD_* of config.h: what is emitted */
        unsigned summary_by;             /* SUMMARY_BY_* of config.h: what summaries are of (0: processes) */
        unsigned summary_files;          /* the files a file summary names */
        uint64_t stuck_after_ns;         /* a request in flight longer is said stuck, once; 0: never */
        uint64_t summary_interval_ns;    /* 0: no summaries */
        bool read_memory; /* augment calls with process_vm_readv (those the kernel did not capture) */
        bool replaced_sets; /* event sets are replaced under the rings (filter changes): drop the doubles */
        bool captured;      /* the kernel captures each call's memory, and names the files of its iocbs */
        bool uring_off;     /* io_uring = false: the capture notes a process's first request, no more */
        const char *proc_root; /* "/proc", for reading thread names */
};

/* The next record of one ring, peeked once and kept until processed. */
struct ring_cursor {
        const struct perf_event_header *h;
        uint64_t time;
        bool in_heap;  /* its ring is in the merge's heap */
        bool advanced; /* records were taken from its ring in this drain: its tail goes back to the kernel */
};

/* A ring in the merge's heap, with the time of its next record: the comparisons stay within the heap. */
struct heap_entry {
        uint64_t time;
        uint32_t ring;
};

/* The one engine: rings merged in time order, records paired per thread, each call handed to its family's
 * handler, then to the sink.  It owns no file descriptors. */
struct engine {
        struct ring *rings;
        struct ring_cursor *cursors;
        struct heap_entry *heap; /* the rings that hold a record, a binary min-heap: O(log n) a record */
        size_t heap_n;
        bool rescanned; /* the rings' heads were read again during the drain: rings may have records now */
        uint64_t *lost_per_ring;    /* reported by PERF_RECORD_LOST */
        uint64_t *lost_noted;       /* per ring: what the summaries were told of, by either account */
        uint64_t *samples_per_ring; /* read, whatever they turned out to be */
        size_t n_rings;
        const struct event_table *events;
        struct id_table threads;
        struct tracker tracker;
        struct call_ctx cctx;
        struct trace_stats stats;
        struct engine_callbacks cb;
        struct engine_options opt;
        struct aio_call call;
        struct iocb_info *more_iocbs; /* CAPTURE_MORE_ITEMS: a call's items past its record's */
        struct event_info *more_events;
        uint64_t processed_up_to;
        uint64_t drains; /* a generation for what is looked up at most once per drain */
        uint32_t select_generation;
};

int engine_init(struct engine *e, struct ring *rings, size_t n_rings, const struct event_table *events,
                const struct engine_options *opt, const struct engine_callbacks *cb);
void engine_done(struct engine *e);

/* Process, in time order, every record the rings hold with a time <= until (UINT64_MAX: all of them).
 * Returns true when records newer than `until` were left for a later drain. */
bool engine_drain(struct engine *e, uint64_t until);

/* At the end, with the events disabled and the rings drained: the kernel counted `produced` samples on ring i;
 * those neither read nor reported by a LOST record were dropped when the ring was full and no later record
 * came to carry the LOST record.  Reports them as a loss of that CPU. */
void engine_account_lost(struct engine *e, size_t ring, uint64_t produced);

/* What a ring's writer counted it could not write so far (the capture's programs count their failed outputs):
 * known before the kernel's LOST record comes, which it writes only once the ring has room again.  The
 * summaries of the interval say so at once; the LOST record, when it comes, is not counted for them twice. */
void engine_note_dropped(struct engine *e, size_t ring, uint64_t dropped_total);

/* At the end of tracing, after the last drain: the summaries of the interval in progress. */
void engine_finish(struct engine *e, uint64_t now);

/* The selection changed: every thread is asked about again. */
void engine_reselect(struct engine *e);

/* What a reload may change while tracing. */
/* Requests in flight longer than stuck_after_ns (0: never) are said stuck, once each. */
void engine_set_stuck_after(struct engine *e, uint64_t stuck_after_ns);
int engine_set_records(struct engine *e, unsigned records, unsigned summary_by, unsigned summary_files,
                       uint64_t summary_interval_ns);
/* io_uring's requests traced or not (the capture is told apart): turned off, those in flight end unknown. */
void engine_set_uring(struct engine *e, bool on);
