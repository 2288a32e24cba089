/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Latencies in a log-linear histogram, as HdrHistogram keeps them: values below 2^HIST_SUB_BITS ns exactly, and
 * every power of two above split into 2^HIST_SUB_BITS buckets of equal width.  A bucket is at most 1/64 of its
 * lowest value wide, and a percentile is reported as its bucket's middle, so it is within 1/128 (0.8 %) of the
 * exact nearest-rank percentile of the recorded values.  The max is kept exactly; values past 2^HIST_MAX_BITS ns
 * (18 minutes) fall in the last bucket. */
#define HIST_SUB_BITS 6
#define HIST_MAX_BITS 40
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS (HIST_SUB + (HIST_MAX_BITS - HIST_SUB_BITS) * HIST_SUB)

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
