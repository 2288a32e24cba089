/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

#include "events.h"
#include "ring.h"

/* The events of one CPU, all writing into the ring of the first. */
struct perf_cpu {
        int cpu;
        int *fds; /* one per event of the table; fds[0] owns the ring */
        void *map;
        size_t map_size;
};

struct perf_session {
        struct perf_cpu *cpus;
        size_t n_cpus;
        size_t n_events;
        struct ring *rings; /* one per CPU, for the engine */
};

int online_cpus(int **ret, size_t *ret_n);
int perf_session_open(struct perf_session *ps, const struct event_table *t, const int *cpus, size_t n_cpus,
                      unsigned ring_pages, char *error, size_t error_size);
/* fork_filter applies to the sched_process_fork event, when the table has one.  NULL: no filter. */
int perf_session_set_filters(struct perf_session *ps, const struct event_table *t, const char *filter,
                             const char *fork_filter, char *error, size_t error_size);
int perf_session_enable(struct perf_session *ps, int enable);
void perf_session_close(struct perf_session *ps);
