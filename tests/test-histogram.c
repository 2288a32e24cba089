/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The latency histogram against exact percentiles of known data: within the 1/128 it states, always. */
#include "histogram.h"

#include "test.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return x < y ? -1 : x > y;
}

/* nearest rank, as the histogram defines it */
static uint64_t exact_percentile(const uint64_t *sorted, size_t n, double p) {
        double r = p / 100.0 * (double) n;
        size_t rank = (size_t) r;
        if ((double) rank < r)
                rank++;
        if (rank < 1)
                rank = 1;
        return sorted[rank - 1];
}

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void) {
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return rng_state;
}

static void check_data(uint64_t *v, size_t n, const char *what) {
        static struct histogram h;
        histogram_reset(&h);
        for (size_t i = 0; i < n; i++)
                histogram_add(&h, v[i]);
        qsort(v, n, sizeof(*v), cmp_u64);
        static const double ps[] = { 0.1, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100 };
        for (size_t k = 0; k < ELEMENTSOF(ps); k++) {
                uint64_t want = exact_percentile(v, n, ps[k]), est = histogram_percentile(&h, ps[k]);
                uint64_t err = est > want ? est - want : want - est;
                if (want >= (1ull << HIST_MAX_BITS))
                        continue; /* beyond the range the error is stated for */
                if (err * 128 > want) {
                        fprintf(stderr, "%s: p%g = %" PRIu64 ", exact %" PRIu64 " (error %" PRIu64 ")\n", what,
                                ps[k], est, want, err);
                        test_failures++;
                }
        }
        CHECK_EQ(h.max, v[n - 1]);
        CHECK_EQ(h.min, v[0]);
        CHECK_EQ(h.count, n);
}

/* The buckets cover every value once, in order, each at most 1/64 of its low end wide. */
TEST(buckets) {
        uint64_t next = 0;
        for (unsigned b = 0; b < HIST_BUCKETS; b++) {
                uint64_t low, high;
                histogram_bucket_range(b, &low, &high);
                CHECK_EQ(low, next);
                CHECK(high >= low);
                CHECK((high - low + 1) * 64 <= (low > 64 ? low : 64));
                CHECK_EQ(histogram_bucket_of(low), b);
                CHECK_EQ(histogram_bucket_of(high), b);
                next = high + 1;
        }
        CHECK_EQ(next, 1ull << HIST_MAX_BITS);
        CHECK_EQ(histogram_bucket_of(UINT64_MAX), HIST_BUCKETS - 1);
}

/* The bucket arithmetic the capture shares finds the top bit by halving (BPF has no count of leading zeros): the
 * same as the compiler's, for every bit and its neighbours. */
TEST(top_bit) {
        for (unsigned bit = 0; bit < 64; bit++) {
                uint64_t v = 1ull << bit;
                CHECK_EQ(hist_top_bit(v), bit);
                CHECK_EQ(hist_top_bit(v | (v - 1)), bit);
                if (bit)
                        CHECK_EQ(hist_top_bit(v + 1), 63u - (unsigned) __builtin_clzll(v + 1));
        }
        uint64_t x = 0x9e3779b97f4a7c15ull;
        for (unsigned i = 0; i < 100000; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                uint64_t v = x >> (x % 64);
                if (v)
                        CHECK_EQ(hist_top_bit(v), 63u - (unsigned) __builtin_clzll(v));
        }
}

/* Percentiles within 1/128 of the exact nearest-rank ones, on data of several shapes. */
TEST(percentiles) {
        struct histogram h;
        histogram_reset(&h);
        CHECK_EQ(histogram_percentile(&h, 50), 0);

        static uint64_t v[200000];
        /* small exact values */
        for (size_t i = 0; i < 1000; i++)
                v[i] = i % 64;
        check_data(v, 1000, "small");
        /* uniform over microseconds to milliseconds */
        for (size_t i = 0; i < 200000; i++)
                v[i] = 1000 + rnd() % 5000000;
        check_data(v, 200000, "uniform");
        /* log-uniform over nine decades, a storage latency's shape */
        for (size_t i = 0; i < 200000; i++)
                v[i] = 1ull << (rnd() % 38), v[i] += rnd() % v[i];
        check_data(v, 200000, "log-uniform");
        /* bimodal with a far tail */
        for (size_t i = 0; i < 100000; i++)
                v[i] = i % 100 == 0 ? 50000000 + rnd() % 1000000 : 80000 + rnd() % 2000;
        check_data(v, 100000, "bimodal");
        /* one value, and two */
        v[0] = 123456789;
        check_data(v, 1, "one");
        v[0] = 5, v[1] = 1000000;
        check_data(v, 2, "two");
}

TEST_MAIN("test-histogram")
