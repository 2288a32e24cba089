/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "fdpath.h"
#include "inflight.h"
#include "procs.h"
#include "request.h"

struct file_summary;
struct file_tallies;

struct tracker_callbacks {
        void (*request)(void *userdata, const struct request *r);
        void (*summary)(void *userdata, const struct proc_summary *s);
        void (*file_summary)(void *userdata, const struct file_summary *s);
        /* optional: the counts summed in the kernel, handed over (tracker_kernel_sum) before summaries are made:
         * every process's at the end of an interval (pid 0), one's at its end */
        void (*collect)(void *userdata, uint32_t pid, uint64_t start_time);
        void *userdata;
};

struct tracker_options {
        size_t max_inflight;             /* in total */
        size_t max_inflight_per_process;
        unsigned max_iocbs_per_call;
        uint64_t summary_interval_ns;
        uint64_t stuck_after_ns; /* a request in flight longer is said to be stuck, once; 0: never */
        unsigned summary_files; /* files named in the file summaries (0: none made) */
        bool paths; /* look up each request's file path */
        bool paths_by_identity; /* the capture names each request's file: know a process's open files at once */
        const char *proc_root;
};

/* The core of request tracking, which the handler of each source (lib/aio_requests.c, lib/uring_requests.c)
 * drives: the processes, each source's table of requests in flight under one bound, how a request's end is
 * counted and handed over, and the summaries.  No allocation per request (nodes and processes come from arrays
 * that grow by doubling). */
/* How long a completion waits for its submit: longer than an io_submit blocks (for a free request slot on a
 * busy device, even) before it returns. */
#define TRACKER_EARLY_HOLD_NS 1000000000ull
#define TRACKER_EARLY_MAX 64
/* How often the tables are looked at for requests stuck: one is said so up to this late. */
#define TRACKER_STUCK_LOOK_NS 1000000000ull

struct tracker {
        struct tracker_options opt;
        struct tracker_callbacks cb;
        struct trace_stats *stats;
        struct fdpath_cache paths;
        struct procs procs;
        /* each source's requests in flight, together at most opt.max_inflight */
        struct inflight aio;   /* (process, context, iocb) */
        struct inflight uring; /* (process, ring, request) */

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

        uint64_t next_summary; /* 0: not started */
        uint64_t next_stuck_look; /* when the tables are next looked at for requests stuck */
        uint64_t interval_lost; /* records lost in the interval in progress */
        struct file_tallies *files; /* NULL: no file summaries */
        uint64_t files_start;       /* of their interval */
};

int tracker_init(struct tracker *t, const struct tracker_options *opt, const struct tracker_callbacks *cb,
                 struct trace_stats *stats);
void tracker_done(struct tracker *t);

/* The requests ended while the last call or record was handled, handed over (after the call itself was
 * written); and the requests of a context destroyed by it, abandoned. */
void tracker_flush(struct tracker *t);

/* A process exited (every request of it abandoned, its last summary written) or exec'd (its contexts are gone
 * with its old memory). */
void tracker_process_end(struct tracker *t, uint32_t pid, uint64_t time, enum request_end why);

/* What the capture summed in the kernel for the process of pid (started at start_time, 0 if not known) since it
 * was last taken: into its interval in progress, and the stats, as its records would have been counted.  Its
 * requests in flight there are what the changes taken so far add up to. */
void tracker_kernel_sum(struct tracker *t, uint32_t pid, uint64_t start_time, const struct capture_sum *s,
                        uint64_t time);

/* Records the kernel (or the capture) dropped: the summaries of the interval in progress say so. */
void tracker_note_lost(struct tracker *t, uint64_t records);

/* Summaries of every interval that ended by `until`, for each process that did AIO in it. */
void tracker_tick(struct tracker *t, uint64_t until);
/* Look at the open files of the processes new since (PROCS_PRIME_PER_DRAIN at most, a chunk of each in turn):
 * called after each drain. */
void tracker_prime(struct tracker *t);
/* At the end of tracing: the summaries of the interval in progress. */
void tracker_finish(struct tracker *t, uint64_t now);

/* What a reload may change: whether paths are looked up, the summaries' interval (the one in progress ends as
 * the new length says), and the files a file summary names (0: none made; what was counted until `now` is
 * said at once).  -ENOMEM: no file summaries. */
/* A request in flight longer than stuck_after_ns (0: never) is said to be stuck, once (REQ_STUCK). */
void tracker_set_stuck_after(struct tracker *t, uint64_t stuck_after_ns);
int tracker_set_options(struct tracker *t, bool paths, uint64_t summary_interval_ns, unsigned summary_files,
                        uint64_t now);
/* Requests in flight now, in all. */
size_t tracker_inflight_total(const struct tracker *t);
/* Requests of a process in flight now (tests). */
size_t tracker_inflight(struct tracker *t, uint32_t pid);
/* Every process the tracker knows now: its name, unit and requests in flight. */
void tracker_foreach_process(struct tracker *t,
                             void (*fn)(void *userdata, const char *comm, const char *unit, uint32_t in_flight,
                                        uint32_t stuck),
                             void *userdata);

/* ---- for the handlers of the sources ---- */

/* The process of pid, new when not known yet, its record at `time` (counted no_memory when there is no room:
 * NULL). */
struct proc *tracker_proc(struct tracker *t, uint32_t pid, const char *comm, uint64_t time);
/* The process of pid as the kernel told it before its thread's first record: a process of that pid not yet known,
 * or known with no identity yet, takes it; one known as another (another start) has ended. */
void tracker_identity(struct tracker *t, uint32_t pid, const struct proc_identity *id, uint64_t time);
/* A slot in the list of requests ended by the call being handled, or NULL (counted no_memory). */
struct request *tracker_pending(struct tracker *t);
/* A request's end counted: in the stats, its process's interval and its file's. */
void tracker_account(struct tracker *t, struct proc *p, const struct request *r);
/* A request handed out at once, named after its process p (NULL: gone); its path reference dropped. */
void tracker_emit(struct tracker *t, const struct proc *p, struct request *r);
/* Room for one more request of p in f: its own oldest, or the oldest of all sources, evicted (ended abandoned,
 * into the pending list) when a bound is reached.  False when there is no room all the same. */
bool tracker_make_room(struct tracker *t, struct proc *p, struct inflight *f, uint64_t time);
/* Node n of f off its lists, into *ret, with what p counts of it. */
void tracker_remove(struct tracker *t, struct inflight *f, uint32_t n, struct proc *p, struct request *ret);
/* A request whose completion was seen in its ring and that no call reaped: reaped by the program itself. */
void tracker_end_reaped_in_user_space(struct tracker *t, struct proc *p, struct request *r);
