/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "requests.h"

/* The fields of a request or summary entry, named once for every structured format: the journal writes them as
 * AIO_<NAME>=, JSON as "<name>" in lower case.  One list, so the two schemas cannot drift apart. */
struct field_writer {
        void (*str)(struct field_writer *w, const char *name, const char *v, size_t len);
        void (*u64)(struct field_writer *w, const char *name, uint64_t v);
        void (*s64)(struct field_writer *w, const char *name, int64_t v);
        void (*ptr)(struct field_writer *w, const char *name, uint64_t v); /* an address or flags: hex */
};

void request_fields(struct field_writer *w, const struct request *r);
void summary_fields(struct field_writer *w, const struct proc_summary *s);

/* Anything in the request not vouched for (stale, unmatched, unknown, evicted, a path not checked): a warning. */
int request_priority(const struct request *r);

/* The latency percentiles a summary reports, in order, with their field names (P50, ...). */
#define SUMMARY_PERCENTILES 4
extern const double summary_percentiles[SUMMARY_PERCENTILES];
extern const char *const summary_percentile_names[SUMMARY_PERCENTILES];
