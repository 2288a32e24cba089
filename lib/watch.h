/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* What PERF_EVENT_IOC_SET_FILTER takes: one page, NUL included. */
#define FILTER_MAX 4096

/* Without the capture, the kernel selects with tracepoint filters: the config's comm patterns, and the threads
 * of its watched pids (common_pid is a thread id), listed from /proc at start and added as they are created.
 * (The capture's programs select by process themselves: they need none of this.) */
struct watch_threads {
        uint32_t *tids;
        size_t n, cap;
        const char *proc_root; /* "/proc" */
};

void watch_threads_done(struct watch_threads *w);
/* The threads the config's watched pids have now, in place of those before.  report() is told of each pid that
 * cannot be listed (gone, or not allowed), with the config line that names it. */
void watch_threads_collect(struct watch_threads *w, const struct config *c,
                           void (*report)(void *userdata, const struct watch *entry, int error), void *userdata);
/* A thread was created (sched_process_fork): 1 when it is one of a watched pid's and was added to the set, 0 when
 * not (another process's, a child process, or gone already), negative errno. */
int watch_threads_fork(struct watch_threads *w, const struct config *c, uint32_t child_tid);

/* The filter of each kind of tracepoint event; NULL: no filter (everything watched). */
struct watch_filters {
        char *syscalls;     /* and sched_process_exec */
        char *fork;         /* sched_process_fork, on the parent: matches nothing without a pid watch */
        char *process_exit; /* sched_process_exit of a watched process's last thread */
};

/* -E2BIG: a filter longer than the kernel takes. */
int watch_filters_build(const struct config *c, const struct watch_threads *w, struct watch_filters *ret);
void watch_filters_done(struct watch_filters *f);

/* One filter: the config's comm patterns (with_comm) and the given thread ids as ranges where they run on, on
 * tid_field ("common_pid", or "parent_pid" for sched_process_fork).  *ret is NULL when everything is watched;
 * a filter that matches nothing when only pids are watched and none has a thread left. */
int watch_filter(const struct config *c, const uint32_t *tids, size_t n_tids, const char *tid_field, bool with_comm,
                 char **ret);

/* Whether the comm patterns alone fit in a tracepoint filter (the pids' threads come on top, at run time). */
bool watch_comms_fit_filter(const struct config *c);

/* "comm == \"fio\", pid 42", or "every process": what the config watches, for the daemon's messages. */
void watch_describe(const struct config *c, char *buf, size_t size);
