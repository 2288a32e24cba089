/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "histogram.h"

#include <string.h>

void histogram_reset(struct histogram *h) {
        memset(h, 0, sizeof(*h));
}

unsigned histogram_bucket_of(uint64_t v) {
        return hist_bucket_of(v);
}

void histogram_bucket_range(unsigned b, uint64_t *ret_low, uint64_t *ret_high) {
        if (b < HIST_SUB) {
                *ret_low = *ret_high = b;
                return;
        }
        unsigned range = (b - HIST_SUB) / HIST_SUB, sub = (b - HIST_SUB) % HIST_SUB;
        unsigned shift = range; /* bucket width is 2^shift */
        uint64_t low = ((uint64_t) (HIST_SUB + sub)) << shift;
        *ret_low = low;
        *ret_high = low + (1ull << shift) - 1;
}

void histogram_add(struct histogram *h, uint64_t v) {
        h->buckets[histogram_bucket_of(v)]++;
        if (h->count == 0 || v < h->min)
                h->min = v;
        if (v > h->max)
                h->max = v;
        h->count++;
        h->sum += v;
}

void histogram_merge(struct histogram *h, const struct histogram *from) {
        if (from->count == 0)
                return;
        for (unsigned b = 0; b < HIST_BUCKETS; b++)
                h->buckets[b] += from->buckets[b];
        if (h->count == 0 || from->min < h->min)
                h->min = from->min;
        if (from->max > h->max)
                h->max = from->max;
        h->count += from->count;
        h->sum += from->sum;
}

uint64_t histogram_percentile(const struct histogram *h, double p) {
        if (h->count == 0)
                return 0;
        /* nearest rank: the smallest value with at least p % of the values at or below it */
        double exact = p / 100.0 * (double) h->count;
        uint64_t rank = (uint64_t) exact;
        if ((double) rank < exact)
                rank++;
        if (rank < 1)
                rank = 1;
        if (rank >= h->count)
                return h->max;
        uint64_t seen = 0;
        for (unsigned b = 0; b < HIST_BUCKETS; b++) {
                seen += h->buckets[b];
                if (seen < rank)
                        continue;
                uint64_t low, high;
                histogram_bucket_range(b, &low, &high);
                uint64_t mid = low + (high - low) / 2;
                /* the exact extremes are known: never report beyond them */
                if (mid < h->min)
                        mid = h->min;
                if (mid > h->max)
                        mid = h->max;
                return mid;
        }
        return h->max;
}
