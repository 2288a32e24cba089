/* SPDX-License-Identifier: GPL-2.0-or-later */
/* JSON strings of any bytes, against a plain escaper written byte by byte: the fast path (eight bytes at a
 * time) must never let through what has to be escaped, wherever it sits in a word. */
#include "format_json.h"

#include "test.h"

/* ASCII only: UTF-8 has its own cases below. */
static void reference(struct outbuf *b, const unsigned char *s, size_t n) {
        static const char hex[] = "0123456789abcdef";
        outbuf_putc(b, '"');
        for (size_t i = 0; i < n; i++) {
                unsigned char c = s[i];
                if (c == '"' || c == '\\') {
                        outbuf_putc(b, '\\');
                        outbuf_putc(b, (char) c);
                } else if (c == '\n')
                        outbuf_puts(b, "\\n");
                else if (c < 0x20 || c == 0x7f) {
                        char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
                        outbuf_put(b, u, 6);
                } else
                        outbuf_putc(b, (char) c);
        }
        outbuf_putc(b, '"');
}

/* Decimal and hexadecimal conversions against printf: every power of ten and its neighbours, every power of two
 * and its neighbours, and random values of every length. */
static void test_numbers(void) {
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
        outbuf_free(&got);
}

int main(void) {
        struct outbuf got = {}, want = {};
        test_numbers();
        unsigned char s[64];
        uint64_t x = 12345;
        for (int round = 0; round < 200000; round++) {
                size_t n = (size_t) (round % 41);
                for (size_t i = 0; i < n; i++) {
                        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                        /* mostly plain, now and then one of the bytes that must be escaped */
                        static const char special[] = "\"\\\n\x01\x1f\x7f\x20~";
                        s[i] = x % 16 == 0 ? (unsigned char) special[(x >> 8) % 8] : (unsigned char) (0x20 + (x >> 16) % 95);
                }
                outbuf_reset(&got);
                outbuf_reset(&want);
                json_string(&got, (const char *) s, n);
                reference(&want, s, n);
                if (got.len != want.len || memcmp(got.data, want.data, got.len) != 0) {
                        fprintf(stderr, "json_string differs on round %d (%zu bytes)\n", round, n);
                        test_failures++;
                        break;
                }
        }
        /* UTF-8: valid sequences kept, anything else U+FFFD, byte by byte */
        outbuf_reset(&got);
        const char *utf8 = "a\xc3\xa9z\xe2\x82\xac\xf0\x9f\x98\x80\xff\xc3(\xed\xa0\x80";
        json_string(&got, utf8, strlen(utf8));
        outbuf_putc(&got, 0);
        CHECK_STR(got.data, "\"a\xc3\xa9z\xe2\x82\xac\xf0\x9f\x98\x80\\ufffd\\ufffd(\\ufffd\\ufffd\\ufffd\"");
        outbuf_free(&got);
        outbuf_free(&want);
        return test_result("test-json");
}
