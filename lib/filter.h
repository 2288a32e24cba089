/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* What PERF_EVENT_IOC_SET_FILTER takes: one page, NUL included. */
#define FILTER_MAX 4096

/* The tracepoint filter that selects the watched processes in the kernel: the config's comm patterns, and the
 * given thread ids (those of watched pids, as `common_pid` is a thread id), as ranges where they run on.
 * tid_field names the field ("common_pid", or "parent_pid" for sched_process_fork); comm patterns are left out
 * when with_comm is false.  *ret is NULL when everything is watched.  -E2BIG: longer than the kernel takes. */
int filter_build(const struct config *c, const uint32_t *tids, size_t n_tids, const char *tid_field, int with_comm,
                 char **ret);
