/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The processes that did asynchronous I/O: what names each (comm, unit, cgroup, its own pid in its pid
 * namespace), its requests in flight in each source's table, and its counts for the interval in progress; and
 * the look at each new process's open files, a few at a time, after each drain. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"
#include "fdpath.h"
#include "histogram.h"
#include "idtable.h"
#include "inflight.h"
#include "request.h"

/* What names a process after it is gone, as the kernel said it at its first record. */
struct proc_identity {
        const char *comm;    /* a thread's name (16 bytes, NUL-padded), or NULL */
        uint64_t start_time; /* CLOCK_BOOTTIME ns: which process of its pid it is */
        uint32_t ns_pid;     /* in its own pid namespace */
        const char *cgroup;  /* its cgroup v2 path, cgroup_len bytes; NULL: not known */
        size_t cgroup_len;
};

struct proc {
        uint32_t pid; /* 0: empty slot */
        char comm[16];
        /* told by the kernel at its first record, or else read from /proc then, if the process there is still the
         * one that made the record: what names it after it is gone ("" when not known) */
        char unit[UNIT_NAME_MAX];
        char cgroup[CGROUP_PATH_MAX];
        uint32_t ns_pid; /* in its own pid namespace, where that is not pid (a container's); else 0 */
        uint64_t start_time; /* CLOCK_BOOTTIME ns, as the kernel told it; 0: not told */
        struct inflight_owner aio, uring; /* its requests in each source's table */
        uint64_t forgotten;    /* submits not tracked (unreadable) or evicted: explains completions not found */
        uint64_t unidentified; /* completions that could not be read: explains requests never seen reaped */
        uint64_t link_ring, link_req; /* io_uring: the last request submitted with IOSQE_IO_LINK, and its ring */
        bool reaps_by_call; /* io_getevents returned completions of it: one seen reaped in the ring may be in one */
        uint32_t n_done_in_ring; /* of its AIO requests: completed, seen in the ring, waiting to be known reaped */
        uint32_t stuck;          /* of its requests in flight: said to be stuck */
        uint64_t kernel_inflight; /* summed in the kernel: its requests in flight there, as last taken */
        uint32_t kernel_stuck;    /* of those, stuck at the last look (lib/kernel_stuck.c) */
        uint64_t interval_start;
        long prime_pos;  /* where the look at its open files goes on (fdpath_prime) */
        uint32_t primed; /* of its files looked at */
        bool prime_queued;
        struct proc_interval iv;
        struct histogram *latency; /* allocated with the process, not per request */
};

/* Its requests the kernel has not completed yet: those seen completed in the ring only wait to be known reaped. */
static inline uint32_t proc_in_flight(const struct proc *p) {
        return p->aio.n + p->uring.n - p->n_done_in_ring + (uint32_t) p->kernel_inflight;
}

#define PROCS_PRIME_QUEUE 4096  /* processes waiting to have their files looked at; past it, they are not */
#define PROCS_PRIME_PER_DRAIN 256 /* files looked at after each drain, at most */
#define PROCS_PRIME_CHUNK 32      /* of one process before the next one's turn */

struct procs {
        struct id_table table; /* struct proc by pid */
        const char *proc_root; /* where a new process's cgroup and pid namespace are read; NULL: not read */
        uint64_t unidentified; /* processes whose cgroup and own pid could not be told */
        /* Processes whose open files are still to be looked at (fdpath_prime), a few of each at a time, after
         * each drain: a process with thousands of files, forked hundreds of times, costs the other processes'
         * records nothing. */
        uint32_t prime_queue[PROCS_PRIME_QUEUE];
        size_t prime_head, prime_n;
};

int procs_init(struct procs *ps, const char *proc_root);
void procs_done(struct procs *ps);

struct proc *procs_find(struct procs *ps, uint32_t pid);
/* The process of pid, new (named comm, its interval begun at interval_start, queued to have its files looked at
 * when prime) when not known yet; NULL without memory.  A new one's cgroup, unit and pid namespace are id's, or
 * with none, read from /proc if the process there started before its record at record_time (CLOCK_MONOTONIC),
 * else not known (counted).  Pointers into the table stay valid until the next procs_get() or procs_remove(). */
struct proc *procs_get(struct procs *ps, uint32_t pid, const char *comm, uint64_t interval_start, bool prime,
                       const struct proc_identity *id, uint64_t record_time);
/* What names p, as the kernel told it (a process whose identity was not known yet). */
void procs_identify(struct proc *p, const struct proc_identity *id);
void procs_remove(struct procs *ps, struct proc *p);
/* fn for every process; one for which it returns true is removed (its histogram freed). */
void procs_filter(struct procs *ps, bool (*fn)(struct proc *p, void *userdata), void *userdata);

/* The open files of the processes queued (PROCS_PRIME_PER_DRAIN at most, a chunk of each in turn), remembered
 * in paths; at most a quarter of its room for one process. */
void procs_prime(struct procs *ps, struct fdpath_cache *paths);
