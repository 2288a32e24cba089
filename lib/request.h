/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* A request, from its submit to its end, as its record says it; and what a process (or a file) did in an
 * interval, counted from the requests' ends.  What the tracker keeps, the summaries count and the formats write:
 * it knows none of them. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aio_decode.h"
#include "fdpath.h"
#include "histogram.h"
#include "util.h"

/* How a request ended, as its record says. */
enum request_kind {
        REQ_COMPLETED, /* reaped by io_getevents / io_pgetevents */
        REQ_CANCELLED, /* io_cancel asked for it, then it was reaped (or io_cancel returned its result) */
        REQ_ABANDONED, /* never reaped: its context destroyed, its process gone, or evicted from a full table */
        REQ_STALE,     /* reaped, but the completion's data is not what was submitted: not merged */
        REQ_UNMATCHED, /* reaped, but never seen submitted (or its submit could not be read) */
        REQ_UNKNOWN,   /* never seen reaped while completions of its process could not be read: it may have been */
        REQ_STUCK,     /* still in flight after stuck_after, its process alive: said once, and it goes on */
        _REQ_KIND_MAX,
};

/* How io_uring ran a request it could not complete at once (bits): handed to an io-wq worker, armed for poll. */
enum {
        REQ_ASYNC_IO_WQ = 1 << 0,
        REQ_ASYNC_POLL = 1 << 1,
};

/* Why a request was abandoned. */
enum request_end {
        END_REAPED,
        END_DESTROY,
        END_EXIT,
        END_EXEC,
        END_EVICTED,
        END_RESUBMITTED, /* its iocb was submitted again: the completion in between was not seen */
        END_SUBMIT_UNTRACKED, /* unmatched: its process had submits that could not be read, or were evicted */
        END_SUBMIT_UNSEEN,    /* unmatched: nothing explains it (submitted before tracing began?) */
        END_UNTRACED,         /* unknown: io_uring's requests are no longer traced (a reload turned them off) */
        END_NO_CQE,           /* io_uring, IOSQE_CQE_SKIP_SUCCESS: completed (its request reused) with no CQE */
        _END_MAX,
};

_const_ const char *request_kind_name(enum request_kind k);
struct word;
const struct word *request_kind_word(enum request_kind k);
_const_ const char *request_end_name(enum request_end e);

enum {
        CQ_OVERFLOW_KEPT = 1, /* kept in the ring's overflow list, for the program to reap later */
        CQ_OVERFLOW_DROPPED,  /* lost: the kernel could not keep it (it counts it in the ring's cq overflow) */
};

/* Where a request came from. */
enum request_interface {
        REQ_AIO,      /* io_submit: ctx is the AIO context, iocb the iocb's address, data its aio_data */
        REQ_IO_URING, /* an io_uring ring: ctx is the ring, iocb the kernel's request, data its user_data */
};

/* One request, from its io_submit to its end: what the tracker keeps and what a request record says. */
struct request {
        uint32_t pid;
        uint32_t submit_tid; /* 0: not known */
        uint32_t reap_tid; /* 0: not reaped */
        uint64_t ctx;
        uint64_t iocb;
        uint64_t data;         /* aio_data at submit */
        uint64_t submit_time;  /* io_submit's enter (CLOCK_MONOTONIC ns) */
        uint64_t end_time;     /* the reaping call's exit, or when it was abandoned */
        int64_t offset;
        uint64_t nbytes; /* for preadv/pwritev the iovecs' total, when known */
        bool nbytes_known;
        bool submit_known; /* false for an unmatched completion: only ctx, iocb and the result are known */
        bool cancel_requested;
        bool has_result;
        uint8_t interface;  /* enum request_interface */
        bool fixed_file;    /* io_uring: fd is an index in the ring's registered files */
        bool no_file;       /* io_uring: an op on no file (nop, openat, timeout, ...): no fd, no path */
        bool no_offset;     /* io_uring: the op's offset was not read */
        bool submit_failed; /* io_uring: failed before it was submitted (io_uring_req_failed) */
        bool cqe_skip;      /* io_uring: IOSQE_CQE_SKIP_SUCCESS: a CQE comes only if it fails */
        uint64_t link_prev; /* io_uring: the request before it in a link chain (0: none), done once it begins */
        uint32_t file_mnt_id; /* io_uring: the file its path is of (0: not known) */
        uint64_t file_ino;
        bool iocb_changed;  /* AIO: another thread wrote the iocb during the call; offset, nbytes and path are
                             * the kernel's, the fd is not known */
        uint8_t cq_overflow; /* io_uring: its completion found the CQ ring full: CQ_OVERFLOW_* */
        bool stuck_told;     /* said to be stuck (REQ_STUCK) while in flight */
        uint8_t async;       /* io_uring: REQ_ASYNC_*, how the kernel ran it when it could not at once */
        uint16_t opcode;    /* IOCB_CMD_*, or io_uring's as uring_request_opcode() says */
        int16_t reqprio;
        int32_t rw_flags;
        uint32_t flags;
        uint32_t fd;
        struct path_str *path;
        enum path_state path_state;
        int64_t res;
        int64_t res2;
        uint64_t event_data; /* a stale completion: the data it carried */
        /* Its completion seen in the context's AIO ring (the capture looks at each call): at ring_time, with
         * this result.  Not reaped by a call by the time it ended: reaped by the program itself. */
        bool ring_seen;
        bool reaped_in_user_space; /* its end_time is when the completion was first seen: latency at most */
        uint64_t ring_time;
        int64_t ring_res, ring_res2;
        enum request_kind kind;
        enum request_end end;
        char comm[16];
        /* its process's systemd unit and cgroup ("" when not known): set as the record is handed out */
        const char *unit;
        const char *cgroup;
        uint32_t ns_pid; /* its process's pid in its own pid namespace, where that is not pid; else 0 */
};

/* Opcodes by index for the per-op counts: each opcode the op table knows at its own (IOCB_CMD_* 0..8), and one
 * for any other (or unknown). */
#define REQ_OPS (AIO_OPCODE_MAX + 2)
unsigned request_op_index(uint16_t opcode, bool known);
const char *request_op_index_name(unsigned i);
/* The op of a request record: AIO's name, or io_uring's own. */
_pure_ const struct word *request_op_word(const struct request *r);

/* What one process did in one interval. */
struct proc_interval {
        uint64_t submitted[REQ_OPS];
        uint64_t completed[REQ_OPS];
        uint64_t bytes_read;
        uint64_t bytes_written;
        uint64_t errors; /* completions with a negative result */
        uint64_t cancelled;
        uint64_t abandoned;
        uint64_t stale;
        uint64_t unmatched;
        uint64_t unknown;
        uint64_t reaped_in_user_space; /* of completed */
        uint64_t submitted_io_uring;   /* of submitted, through io_uring */
        uint64_t cq_overflows;         /* io_uring completions that found the CQ ring full */
        uint64_t punted[REQ_OPS];      /* io_uring requests handed to an io-wq worker, by op */
        uint64_t polled;               /* io_uring requests armed for poll */
        uint32_t inflight_max;
        bool active;
};

struct proc_summary {
        uint32_t pid;
        const char *comm;
        const char *unit;   /* its systemd unit when it was first seen, or "" */
        const char *cgroup; /* its cgroup then, or "" */
        uint32_t ns_pid;    /* its pid in its own pid namespace, where that is not pid; else 0 */
        uint64_t start; /* the interval, CLOCK_MONOTONIC ns */
        uint64_t end;
        const struct proc_interval *iv;
        uint32_t inflight; /* at the end */
        const struct histogram *latency;
        bool last; /* the process ended (or tracing did) */
        uint64_t records_lost; /* records lost, on any CPU, during the interval: its counts may be short */
};

/* A request's end counted in an interval (its latency in h, unless it is only a bound). */
void proc_interval_count_end(struct proc_interval *iv, struct histogram *h, const struct request *r);
/* iv gets from's counts too. */
void proc_interval_merge(struct proc_interval *iv, const struct proc_interval *from);
