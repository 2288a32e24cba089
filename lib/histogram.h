/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "hist_bucket.h"

/* Latencies in a log-linear histogram (its buckets: bpf/hist_bucket.h, which the capture's summaries made in the
 * kernel share).  A bucket is at most 1/64 of its lowest value wide, and a percentile is reported as its bucket's
 * middle, so it is within 1/128 (0.8 %) of the exact nearest-rank percentile of the recorded values.  The max is
 * kept exactly. */

struct histogram {
        uint64_t count;
        uint64_t max;
        uint64_t min;
        uint64_t sum; /* exact: 584 years of latency before it wraps */
        uint32_t buckets[HIST_BUCKETS];
};

void histogram_reset(struct histogram *h);
void histogram_add(struct histogram *h, uint64_t value);
/* h gets every value from holds. */
void histogram_merge(struct histogram *h, const struct histogram *from);
/* The nearest-rank percentile p (0 < p <= 100), within the stated error; 0 for an empty histogram. */
uint64_t histogram_percentile(const struct histogram *h, double p);

/* Bucket arithmetic, for tests: the bucket of a value and the values a bucket holds. */
unsigned histogram_bucket_of(uint64_t value);
void histogram_bucket_range(unsigned bucket, uint64_t *ret_low, uint64_t *ret_high);
