/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The latency histogram's layout, one for the daemon (lib/histogram.c) and for the capture's summaries made in
 * the kernel (bpf/summaries.h), so that a bucket means the same on both sides: values below 2^HIST_SUB_BITS ns
 * exactly, and every power of two above split into 2^HIST_SUB_BITS buckets of equal width, as HdrHistogram keeps
 * them; values past 2^HIST_MAX_BITS ns (18 minutes) fall in the last bucket.  Only fixed-size types and no
 * library: this header is compiled for BPF too. */

#define HIST_SUB_BITS 6
#define HIST_MAX_BITS 40
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS (HIST_SUB + (HIST_MAX_BITS - HIST_SUB_BITS) * HIST_SUB)

/* The highest bit set of v (v > 0), by halving: BPF has no instruction to count leading zeros. */
static inline unsigned hist_top_bit(unsigned long long v) {
        unsigned top = 0;
        if (v >> 32) {
                v >>= 32;
                top += 32;
        }
        if (v >> 16) {
                v >>= 16;
                top += 16;
        }
        if (v >> 8) {
                v >>= 8;
                top += 8;
        }
        if (v >> 4) {
                v >>= 4;
                top += 4;
        }
        if (v >> 2) {
                v >>= 2;
                top += 2;
        }
        return top + (unsigned) (v >> 1);
}

/* The bucket of a value, in [0, HIST_BUCKETS). */
static inline unsigned hist_bucket_of(unsigned long long v) {
        if (v < HIST_SUB)
                return (unsigned) v;
        unsigned top = hist_top_bit(v); /* v lies in [2^top, 2^(top+1)) */
        if (top >= HIST_MAX_BITS)
                return HIST_BUCKETS - 1;
        unsigned shift = top - HIST_SUB_BITS;
        return HIST_SUB + shift * HIST_SUB + (unsigned) ((v >> shift) - HIST_SUB);
}
