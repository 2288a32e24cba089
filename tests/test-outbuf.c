/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The output buffer's writers against plain references: numbers against printf, and a growth that fails.  Built
 * twice: as is (SSE2 on x86_64), and as test-outbuf-portable without SSE2, so that the fallbacks other machines
 * run are tested here too. */
#include "outbuf.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "test.h"

/* Decimal and hexadecimal conversions against printf: every power of ten and its neighbours, every power of two
 * and its neighbours, and random values of every length. */
TEST(numbers) {
        struct outbuf got = {};
        char want[128];
        uint64_t values[400];
        size_t n = 0;
        uint64_t p = 1;
        for (int i = 0; i < 20; i++, p *= 10) {
                values[n++] = p - 1;
                values[n++] = p;
                values[n++] = p + 1;
        }
        for (int i = 0; i < 64; i++) {
                values[n++] = (1ull << i) - 1;
                values[n++] = 1ull << i;
        }
        values[n++] = UINT64_MAX;
        uint64_t x = 88172645463325252ull;
        while (n < 400) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                values[n++] = x >> (x % 64);
        }
        for (size_t i = 0; i < n; i++) {
                uint64_t v = values[i];
                outbuf_reset(&got);
                outbuf_u64(&got, v);
                outbuf_putc(&got, ' ');
                outbuf_s64(&got, (int64_t) v);
                outbuf_putc(&got, ' ');
                outbuf_ptr(&got, v);
                outbuf_putc(&got, ' ');
                outbuf_hex(&got, v);
                outbuf_putc(&got, '[');
                outbuf_u64_width(&got, v, 4);
                outbuf_putc(&got, 0);
                snprintf(want, sizeof(want), "%" PRIu64 " %" PRId64 " 0x%016" PRIx64 " 0x%" PRIx64 "[%4" PRIu64, v,
                         (int64_t) v, v, v, v);
                CHECK_STR(got.data, want);
        }
        /* every value of up to seven digits, and every eight-digit one in a stride that meets every digit at
         * every place: the writer by size; beside each, a sixteen-digit number whose low eight digits are the
         * same value, zero-padded: the word-at-a-time writer */
        for (uint64_t v = 0; v < 130000000; v += v < 10000000 ? 1 : 997) {
                outbuf_reset(&got);
                outbuf_u64_width(&got, v, 4);
                outbuf_putc(&got, ' ');
                outbuf_u64(&got, v * 100000000 + v);
                outbuf_putc(&got, ' ');
                if (outbuf_reserve(&got, 3 * SPAN_S64)) /* the span writers, inline paths and all */
                        got.len = (size_t) (span_u64_width4(span_s64(span_u64(got.data + got.len, v), -(int64_t) v), v) -
                                            got.data);
                outbuf_putc(&got, 0);
                snprintf(want, sizeof(want), "%4" PRIu64 " %" PRIu64 " %" PRIu64 "%" PRId64 "%4" PRIu64, v,
                         v * 100000000 + v, v, -(int64_t) v, v);
                if (strcmp(got.data, want))
                        CHECK_STR(got.data, want);
        }
        outbuf_free(&got);
}

/* A growth that fails drops every later append until the buffer is reset (or its failure cleared, as the file
 * sink does to drop one entry and go on); after either, appends work and grow again. */
TEST(outbuf_failure) {
        struct outbuf b = {};
        outbuf_escaped(&b, "x", SIZE_MAX / 2); /* more than any room: refused before a byte is read */
        CHECK(b.failed && b.len == 0);
        outbuf_reset(&b);
        outbuf_puts(&b, "abc");
        CHECK(!outbuf_reserve(&b, SIZE_MAX / 2 + 10));
        CHECK(b.failed);
        outbuf_puts(&b, "def");
        outbuf_u64(&b, 12345);
        outbuf_ptr(&b, 1);
        outbuf_escaped_str(&b, "x");
        CHECK(b.len == 3);
        b.failed = false;
        for (unsigned i = 0; i < 3000; i++)
                outbuf_puts(&b, "0123456789");
        CHECK(!b.failed && b.len == 3 + 30000 && memcmp(b.data + 29993, "0123456789", 10) == 0);
        CHECK(!outbuf_reserve(&b, SIZE_MAX - 5));
        outbuf_reset(&b);
        outbuf_puts(&b, "xyz");
        outbuf_u64(&b, 12345);
        outbuf_putc(&b, 0);
        CHECK(!b.failed);
        CHECK_STR(b.data, "xyz12345");
        outbuf_free(&b);
}

TEST_MAIN("test-outbuf")
