/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "request.h"
#include "cgroup.h"
#include "fdpath.h"
#include "histogram.h"
#include "idtable.h"

struct file_summary;
struct file_tallies;

struct tracker_callbacks {
        void (*request)(void *userdata, const struct request *r);
        void (*summary)(void *userdata, const struct proc_summary *s);
        void (*file_summary)(void *userdata, const struct file_summary *s);
        void *userdata;
};

struct tracker_options {
        size_t max_inflight;             /* in total */
        size_t max_inflight_per_process;
        unsigned max_iocbs_per_call;
        uint64_t summary_interval_ns;
        unsigned summary_files; /* files named in the file summaries (0: none made) */
        bool paths; /* look up each request's file path */
        bool paths_by_identity; /* the capture names each request's file: know a process's open files at once */
        const char *proc_root;
};

struct req_node;
struct proc;

/* Requests in flight keyed by (process, context, iocb address), and per-process counters; bounded, with no
 * allocation per request (nodes and processes come from arrays that grow by doubling). */
/* How long a completion waits for its submit: longer than an io_submit blocks (for a free request slot on a
 * busy device, even) before it returns. */
#define TRACKER_EARLY_HOLD_NS 1000000000ull
#define TRACKER_EARLY_MAX 64

#define TRACKER_PRIME_QUEUE 4096 /* processes waiting to have their files looked at; past it, they are not */
#define TRACKER_PRIME_PER_DRAIN 256 /* files looked at after each drain, at most */
#define TRACKER_PRIME_CHUNK 32      /* of one process before the next one's turn */

struct tracker {
        struct tracker_options opt;
        struct tracker_callbacks cb;
        struct trace_stats *stats;
        struct fdpath_cache paths;

        struct req_node *nodes;
        size_t nodes_cap, nodes_limit;
        uint32_t free_head;
        uint32_t oldest, newest; /* every request in submit order */
        uint32_t *buckets;
        size_t n_buckets; /* a power of two */
        size_t used;

        struct id_table procs; /* struct proc by pid */

        struct request *pending; /* ended during the call being handled, emitted after it */
        size_t n_pending, pending_cap;
        uint64_t destroy_ctx; /* io_destroy of the call being handled: its requests are abandoned after it */
        uint32_t destroy_pid;
        uint64_t destroy_time;

        /* Completions found before their submit: the kernel reads the iocbs as io_submit begins, and a reaper on
         * another CPU can reap one before that io_submit returns, so its exit comes later.  Held, oldest first,
         * until a submit that began before the completion claims one, or TRACKER_EARLY_HOLD_NS has passed. */
        struct request *early;
        size_t n_early;

        /* Processes whose open files are still to be looked at (fdpath_prime), a few of each at a time, after
         * each drain: a process with thousands of files, forked hundreds of times, costs the other processes'
         * records nothing. */
        uint32_t prime_queue[TRACKER_PRIME_QUEUE];
        size_t prime_head, prime_n;

        uint64_t next_summary; /* 0: not started */
        uint64_t interval_lost; /* records lost in the interval in progress */
        struct file_tallies *files; /* NULL: no file summaries */
        uint64_t files_start;       /* of their interval */
};

int tracker_init(struct tracker *t, const struct tracker_options *opt, const struct tracker_callbacks *cb,
                 struct trace_stats *stats);
void tracker_done(struct tracker *t);

/* A call whose memory was read: remember what it submitted, match what it reaped or cancelled (each event gets
 * its submit's fd, or is marked when its data disagrees), and note what ends; the call gets its process's unit
 * and cgroup, valid until tracker_flush().  The requests that ended are handed over by tracker_flush(), after
 * the call itself was written.  generation: the engine's drain count. */
void tracker_match(struct tracker *t, struct aio_call *call, uint64_t generation);
void tracker_flush(struct tracker *t);

/* A completion the kernel wrote in ctx's ring, seen at `time` (by the capture, at a call of the process): its
 * request is complete.  reaped: taken from the ring, and by no io_getevents (none reaps from that ring): it
 * ends then, reaped in user space (handed over by tracker_flush()), unless its process ever reaped by a call;
 * else at its iocb's next submit, its context's io_destroy or its process's end, unless a call reaps it first.
 * False when no request in flight is its (yet). */
bool tracker_ring_event(struct tracker *t, uint32_t pid, uint64_t ctx, const struct io_event *ev, bool reaped,
                        uint64_t time);

/* An io_uring request, as its submit was seen. */
struct uring_submit {
        uint32_t pid, tid;
        const char *comm;
        uint64_t ring, req, user_data;
        uint64_t time;
        uint16_t opcode; /* uring_request_opcode() */
        bool details;    /* off, len (nbytes_known: a length in bytes) read by the capture */
        bool nbytes_known;
        bool fixed_file;
        bool no_file;
        bool failed; /* failed before it was submitted: its details are the SQE's */
        uint32_t fd;
        int64_t off;
        uint64_t len;
        uint32_t rw_flags;
        const struct capture_file *file; /* the file fd named at submit; NULL: not known */
};

/* Requests of io_uring, keyed by (process, ring, request): each ends at its completion, or, for a multishot
 * one, each completion but the last is a record of its own while it stays in flight.  The requests ended are
 * handed over by tracker_flush(). */
void tracker_uring_submit(struct tracker *t, const struct uring_submit *u, uint64_t generation);
void tracker_uring_complete(struct tracker *t, uint32_t pid, uint32_t tid, uint64_t ring, uint64_t req,
                            uint64_t user_data, int32_t res, uint32_t cflags, uint64_t time);
/* io_uring's requests are no longer traced: those in flight end unknown. */
void tracker_uring_stop(struct tracker *t, uint64_t time);
/* A completion the CQ ring had no room for (no request named: found by its user_data), kept in the
 * overflow list or dropped. */
void tracker_uring_overflow(struct tracker *t, uint32_t pid, uint32_t tid, uint64_t ring, uint64_t user_data,
                            int32_t res, uint32_t cflags, bool dropped, uint64_t time);


/* A process exited (every request of it abandoned, its last summary written) or exec'd (its contexts are gone
 * with its old memory). */
void tracker_process_end(struct tracker *t, uint32_t pid, uint64_t time, enum request_end why);

/* Records the kernel (or the capture) dropped: the summaries of the interval in progress say so. */
void tracker_note_lost(struct tracker *t, uint64_t records);

/* Summaries of every interval that ended by `until`, for each process that did AIO in it. */
void tracker_tick(struct tracker *t, uint64_t until);
/* Look at the open files of the processes new since (TRACKER_PRIME_PER_DRAIN at most, a chunk of each in turn):
 * called after each drain. */
void tracker_prime(struct tracker *t);
/* At the end of tracing: the summaries of the interval in progress. */
void tracker_finish(struct tracker *t, uint64_t now);

/* What a reload may change: whether paths are looked up, the summaries' interval (the one in progress ends as
 * the new length says), and the files a file summary names (0: none made; what was counted until `now` is
 * said at once).  -ENOMEM: no file summaries. */
int tracker_set_options(struct tracker *t, bool paths, uint64_t summary_interval_ns, unsigned summary_files,
                        uint64_t now);
/* Requests in flight now, in all. */
size_t tracker_inflight_total(const struct tracker *t);
/* Requests of a process in flight now (tests). */
size_t tracker_inflight(struct tracker *t, uint32_t pid);
/* Every process the tracker knows now: its name, unit and requests in flight. */
void tracker_foreach_process(struct tracker *t,
                             void (*fn)(void *userdata, const char *comm, const char *unit, uint32_t in_flight),
                             void *userdata);
