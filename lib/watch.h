/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "watch_key.h"

/* What PERF_EVENT_IOC_SET_FILTER takes: one page, NUL included. */
#define FILTER_MAX 4096

/* Without the capture, the kernel selects with tracepoint filters: the config's comm patterns, and the threads
 * of its watched pids (common_pid is a thread id), listed from /proc at start and added as they are created.
 * (The capture's programs select by process themselves: they need none of this.) */
struct watch_followed {
        uint32_t tgid;
        uint32_t root; /* the watched pid (children = true) it descends from */
};

struct watch_threads {
        uint32_t *tids;
        size_t n, cap;
        struct watch_followed *followed; /* processes followed as children, created since or found in /proc */
        size_t n_followed, cap_followed;
        const char *proc_root; /* "/proc" */
};

void watch_threads_done(struct watch_threads *w);
/* The threads the config's watched pids have now, in place of those before.  report() is told of each pid that
 * cannot be listed (gone, or not allowed), with the config line that names it. */
void watch_threads_collect(struct watch_threads *w, const struct watch *entries, size_t n_entries,
                           void (*report)(void *userdata, const struct watch *entry, int error), void *userdata);
/* The descendants the config's children = true pids have now in /proc, followed from now on (with those
 * followed before that are still there). */
int watch_threads_find_children(struct watch_threads *w, const struct watch *entries, size_t n_entries);
/* A thread was created (sched_process_fork): 1 when it is one of a watched or followed process's and was added
 * to the set, 2 when it is a new process of one whose children are followed and was added; 0 when not (another
 * process's, a child process not followed, or gone already), negative errno. */
int watch_threads_fork(struct watch_threads *w, const struct watch *entries, size_t n_entries, uint32_t parent_tid, uint32_t child_tid);
/* The watched pid a process followed as a child descends from; 0: none. */
uint32_t watch_threads_root_of(const struct watch_threads *w, uint32_t tgid);

/* The filter of each kind of tracepoint event; NULL: no filter (everything watched). */
struct watch_filters {
        char *syscalls;     /* and sched_process_exec */
        char *fork;         /* sched_process_fork, on the parent: matches nothing without a pid watch */
        char *process_exit; /* sched_process_exit of a watched process's last thread */
};

/* -E2BIG: a filter longer than the kernel takes. */
int watch_filters_build(const struct watch *entries, size_t n_entries, const struct watch_threads *w, struct watch_filters *ret);
void watch_filters_done(struct watch_filters *f);

/* One filter: the config's comm patterns (with_comm) and the given thread ids as ranges where they run on, on
 * tid_field ("common_pid", or "parent_pid" for sched_process_fork).  *ret is NULL when everything is watched;
 * a filter that matches nothing when only pids are watched and none has a thread left. */
int watch_filter(const struct watch *entries, size_t n_entries, const uint32_t *tids, size_t n_tids, const char *tid_field, bool with_comm,
                 char **ret);

/* Whether the comm patterns alone fit in a tracepoint filter (the pids' threads come on top, at run time). */
bool watch_comms_fit_filter(const struct watch *entries, size_t n_entries);

/* "comm == \"fio\", pid 42", or "every process": what the config watches, for the daemon's messages. */
void watch_describe(const struct watch *entries, size_t n_entries, char *buf, size_t size);

/* The capture's selection (bpf/capture.h): each entry's bit, and which entries need each class of key.  -E2BIG
 * when more than CAPTURE_MAX_COMBINED entries need a bit of their own. */
struct watch_plan {
        uint64_t *bits; /* per entry */
        size_t n;
        uint64_t all;
        uint64_t need[_CAPTURE_CLASS_MAX];
        uint64_t follow;
        unsigned n_combined;
};

int watch_plan_build(const struct watch *entries, size_t n_entries, struct watch_plan *ret);
void watch_plan_done(struct watch_plan *p);
/* The entries that follow the children of pid. */
uint64_t watch_plan_follow_of(const struct watch_plan *p, const struct watch *entries, size_t n_entries, pid_t pid);


/* What a watch entry cannot watch now, said to the user with its config line. */
struct watch_report {
        void (*note)(void *userdata, const struct watch *entry, const char *what);
        void *userdata;
};
