/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "config.h"
#include "events.h"

struct perf_session;

/* The in-kernel capture (capture.bpf.c), loaded and wired to the daemon's rings. */
struct bpf_capture;

/* Load the programs for this table's tracepoints, capturing at most max_items iocbs or events per call;
 * `summed_only`: without what writes records of calls and requests (the config asks for summaries alone: a
 * quicker start), until a config asks for more (bpf_capture_set_watch).  -EOPNOTSUPP when built without it; on
 * any failure `error` says why, in words a user can act on. */
int bpf_capture_open(const struct event_table *t, unsigned max_items, bool summed_only, struct bpf_capture **ret,
                     char *error, size_t error_size);
void bpf_capture_free(struct bpf_capture *c);
/* Loaded for summaries alone: the programs with records loaded beside them, in a thread of its own that keeps the
 * privilege to (the caller may drop it meanwhile), for a reload that asks for records. */
int bpf_capture_prepare_records(struct bpf_capture *c);
/* Why io_uring's requests are not traced (its programs could not be loaded, or the kernel has none), or NULL. */
const char *bpf_capture_uring_off(const struct bpf_capture *c);

/* Point the programs' output at the session's per-CPU rings. */
int bpf_capture_set_rings(struct bpf_capture *c, const struct perf_session *ps, char *error, size_t error_size);
/* Attach each program to its tracepoint (after the rings and the selection are set: it writes at once). */
int bpf_capture_attach(struct bpf_capture *c, const struct event_table *t, char *error, size_t error_size);
/* Select what the config watches; the programs do the selecting, so no tracepoint filter is needed.  Called
 * again on reload: what both configs watch stays watched throughout.  A config that asks for records where the
 * programs were loaded for summaries alone has them loaded again first (seconds of the kernel's verifier). */
int bpf_capture_set_watch(struct bpf_capture *c, const struct config *cfg, char *error, size_t error_size);
/* Find the cgroups made since that the config's cgroup patterns match: how many were added, or negative errno.
 * The tree is read only when cgroups were made since the last look. */
int bpf_capture_refresh_cgroups(struct bpf_capture *c, const struct config *cfg);
/* How many times the cgroup tree was looked at for the config's cgroup patterns. */
unsigned bpf_capture_cgroup_looks(const struct bpf_capture *c);
/* Select nothing from now on: the programs stay attached (they run while their events exist, enabled or
 * not) but write no more records. */
void bpf_capture_stop(struct bpf_capture *c);
/* The counts summed in the kernel, taken (and forgotten there): of every process (pid 0), the interval's (the
 * programs count into the other map from then on); or of one process at its end (start_time 0: whichever start).
 * The number taken, or a negative errno. */
typedef void (*bpf_capture_each_sum)(void *userdata, const struct capture_sum_key *key, const struct capture_sum *sum);
int bpf_capture_take_sums(struct bpf_capture *c, uint32_t pid, uint64_t start_time, bpf_capture_each_sum each,
                          void *userdata);

/* Each request in flight of the processes summed in the kernel, as its map has them now. */
typedef void (*bpf_capture_each_inflight)(void *userdata, const struct sum_key *key, const struct sum_req *r);
int bpf_capture_inflight(struct bpf_capture *c, bpf_capture_each_inflight each, void *userdata);

/* The programs' counter of this CPU (enum capture_counter). */
uint64_t bpf_capture_counter(const struct bpf_capture *c, int cpu, enum capture_counter which);
/* The same of every possible CPU at once, by CPU number, in n_possible values (0: none could be read). */
const uint64_t *bpf_capture_counters(const struct bpf_capture *c, enum capture_counter which);
/* What the programs have cost the threads they ran in: runs and nanoseconds, summed over the programs, and
 * each program that ran given to each (when not NULL).  The kernel counts both only while the sysctl
 * kernel.bpf_stats_enabled is 1 (it costs a clock read or two a run), so both are 0 if it never was. */
typedef void (*bpf_capture_each_prog)(const char *name, uint64_t runs, uint64_t ns, void *userdata);
int bpf_capture_run_time(const struct bpf_capture *c, bpf_capture_each_prog each, void *userdata, uint64_t *ret_runs,
                         uint64_t *ret_ns);
