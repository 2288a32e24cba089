/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "aio_decode.h"
#include "capture_view.h"
#include "events.h"
#include "remote.h"

/* One system call, enter and exit paired, with what was read of the caller's memory.  The arrays belong to the
 * engine and are reused for the next call: a sink copies what it keeps. */
struct aio_call {
        enum aio_syscall syscall;
        uint32_t pid;
        uint32_t tid;
        char comm[16]; /* the thread's name: up to a NUL, or all 16 bytes (TASK_COMM_LEN) */
        const char *unit;   /* its process's systemd unit and cgroup, "" when not known: tracker_match sets them */
        const char *cgroup;
        uint32_t ns_pid;    /* its process's pid in its own pid namespace, where that is not pid; else 0 */
        uint64_t enter_time;
        uint64_t exit_time;
        uint32_t enter_cpu;
        uint32_t exit_cpu;
        bool enter_seen; /* false: the exit of a call that began before tracing did */
        bool args_known; /* from the enter; or, begun before tracing, from the registers it entered with */
        uint64_t args[AIO_ARGS_MAX];
        int64_t ret;

        /* io_submit: iocbs; io_getevents/io_pgetevents: events; each with its own state */
        enum mem_state array_state; /* of iocbpp[] or events[] as a whole, when it could not be read at all */
        uint64_t n_wanted;          /* how many the call's result says there are */
        unsigned n_items;           /* how many were read (bounded by max_iocbs_per_call) */
        struct iocb_info *iocbs;
        struct event_info *events;

        /* io_setup: the context written to *ctxp; io_getevents/io_pgetevents: the timeout */
        enum mem_state aux_state;
        uint64_t aux[2];
        /* io_cancel: the iocb named */
        struct iocb_info cancel_iocb;
};

/* Counters a tracer reports: nothing is dropped or doubted without being counted here. */
struct trace_stats {
        uint64_t records;        /* every record read from the rings */
        uint64_t samples;
        uint64_t calls;          /* exits paired (or not) and decoded */
        uint64_t lost;           /* records the kernel dropped: PERF_RECORD_LOST */
        uint64_t stuck;          /* requests said to be still in flight after stuck_after */
        uint64_t stale;          /* values read but not trusted */
        uint64_t unreadable;     /* values the memory reader could not read */
        uint64_t truncated;      /* iocbs/events beyond max_iocbs_per_call */
        uint64_t unpaired_exit;  /* exit with no enter (call began before tracing or enter lost) */
        uint64_t unpaired_enter; /* enter never followed by its exit */
        uint64_t unmatched;      /* completions of iocbs never seen submitted (or whose submit was not read) */
        uint64_t completed;      /* requests reaped and matched to their submit */
        uint64_t cancelled;      /* of them, cancelled */
        uint64_t abandoned;      /* requests never reaped: context destroyed, process gone, evicted */
        uint64_t unknown;        /* requests whose end could not be told: their process's completions were unread */
        uint64_t evicted;        /* requests dropped from the full in-flight table (counted in abandoned too) */
        uint64_t in_flight;      /* at the end: requests submitted and not ended (still in flight, or ended unseen) */
        uint64_t bad_records;    /* malformed records skipped */
        uint64_t bad_bytes;      /* ring bytes skipped after a malformed record */
        uint64_t foreign;        /* samples of events that are not ours */
        uint64_t remote_reads;   /* process_vm_readv calls made */
        uint64_t skipped_reads;  /* calls whose memory was not read, to keep up with the rings instead */
        uint64_t captured;       /* calls whose memory the kernel captured during the call */
        uint64_t bad_captures;   /* captures that did not hold together: their calls were read afterwards */
        uint64_t duplicates;     /* records seen twice while an event set was being replaced, dropped */
        uint64_t no_memory;      /* records dropped because the thread table could not grow */
        uint64_t unselectable;   /* records of threads gone before the watch list could be checked for them */
        uint64_t unidentified;   /* processes whose unit, cgroup and own pid could not be told (read afterwards) */
        uint64_t summed_untracked; /* requests summed in the kernel, submitted but not tracked: its table was full */
        uint64_t ring_seen;      /* completions seen in a context's AIO ring while their request was in flight */
        uint64_t uring_submits;  /* io_uring requests seen submitted */
        uint64_t cq_overflows;   /* io_uring completions that found their CQ ring full (kept or dropped) */
};

struct call_ctx {
        unsigned max_iocbs;
        struct trace_stats *stats;
        /* the memory the kernel captured for the call being augmented; NULL: read it now with process_vm_readv */
        struct capture_view *capture;
        bool skip_reads; /* without a capture: mark every value MEM_SKIPPED rather than read it */
        /* scratch, sized max_iocbs, reused for every call */
        struct iocb_info *iocbs;
        struct event_info *events;
        uint8_t *raw;              /* max_iocbs * IOCB_SIZE */
        uint64_t *ptrs;            /* max_iocbs */
        struct remote_chunk *chunks; /* max_iocbs + 1 */
        unsigned *owner;             /* chunk -> item, max(max_iocbs, CALL_IOV_BUDGET) */
        uint8_t *iov_raw;            /* CALL_IOV_BUDGET iovecs */
};

#define CALL_IOV_BUDGET 1024u /* iovecs summed per call (UIO_MAXIOV) */

int call_ctx_init(struct call_ctx *c, unsigned max_iocbs, struct trace_stats *stats);
void call_ctx_done(struct call_ctx *c);

/* One handler per syscall family, as rasdaemon keeps one per event kind: it reads what the call left in the
 * caller's memory. */
struct call_handler {
        void (*augment)(struct call_ctx *c, struct aio_call *call);
};

extern const struct call_handler handler_context; /* io_setup, io_destroy */
extern const struct call_handler handler_submit;
extern const struct call_handler handler_cancel;
extern const struct call_handler handler_getevents; /* io_getevents, io_pgetevents */

const struct call_handler *call_handler_for(enum aio_syscall s);

/* After reading, the engine looks at the rings once more: a thread that has already made a later call may have
 * changed the memory before it was read, so nothing read for this call is trusted. */
void call_mark_stale(struct call_ctx *c, struct aio_call *call);
