/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "hotplug.h"
#include "ring.h"

/* One CPU: a bpf-output software event owns the ring; the tracepoint events of the current set write into it.  The kernel
 * takes a tracepoint filter only once per event (EEXIST after), so a new filter means a new set of events
 * under the same ring: the ring, and what it holds, outlives any set. */
struct perf_cpu {
        /* its number, and whether its events live: a CPU taken offline takes its events with it, and they stay
         * dead once it is back; the ring stays */
        struct cpu_life life;
        int owner_fd;
        int *fds; /* the current set: one per event of the table */
        void *map;
        size_t map_size;
        uint64_t produced; /* samples the kernel generated on this CPU, by the event counts of retired sets */
        int live_fd;           /* a bpf-output event writing into the ring: the owner, or its stand-in since */
        uint64_t live_enabled; /* its enabled time at the last look */
};

struct perf_session {
        struct perf_cpu *cpus;
        size_t n_cpus;
        size_t n_events;
        struct ring *rings; /* one per CPU, for the engine */
        size_t ring_bytes;
        unsigned wakeup_bytes; /* of a ring, unread, that wake the reader */
        bool with_sets;        /* tracepoint events sample into the rings (without the capture, whose programs
                                * write there themselves) */
        char *filter_text[3]; /* the current set's filters (see perf_filters), to open it again on one CPU */
};

/* Open and map the rings; no tracepoint is attached yet.  A CPU offline now gets an absent ring, stopped, until
 * perf_session_revive_cpu (-ENODEV: none is online).  read_at_once: the reader reads the callers' memory itself,
 * after the calls, and wants to be woken early. */
int perf_session_open(struct perf_session *ps, const struct event_table *t, const int *cpus, size_t n_cpus,
                      unsigned ring_pages, bool read_at_once, char *error, size_t error_size);
/* The tracepoint filter of each kind of event (NULL: none). */
struct perf_filters {
        const char *syscalls;     /* and sched_process_exec */
        const char *fork;         /* sched_process_fork */
        const char *process_exit; /* sched_process_exit */
};

/* Open a set of the table's tracepoints on every CPU, sampling into its ring with these filters, enable it, then
 * retire the previous set.  On failure the previous set stays.  (With the capture there is none: its programs
 * write into the rings themselves.) */
int perf_session_attach(struct perf_session *ps, const struct event_table *t, const struct perf_filters *filters,
                        char *error, size_t error_size);
/* Whether CPU index i's events died since the last look (1; 0 alive): its live event's enabled time stopped.  A
 * read of an event on another CPU interrupts that CPU: not for every turn of the loop. */
int perf_session_check_cpu(struct perf_session *ps, size_t i);
/* Open the current set again on CPU index i, writing into the same ring, and a new live_fd: -ENODEV while the
 * CPU is offline. */
int perf_session_revive_cpu(struct perf_session *ps, const struct event_table *t, size_t i, char *error,
                            size_t error_size);
int perf_session_disable(struct perf_session *ps);
/* Samples generated on CPU index i so far (retired sets and the current one): every hit that passed the filter,
 * whether the ring had room for it or not.  Exact once the events are disabled. */
uint64_t perf_session_produced(const struct perf_session *ps, size_t i);
void perf_session_close(struct perf_session *ps);
