/* SPDX-License-Identifier: GPL-2.0-or-later */
/* JSON strings of any bytes, against a plain escaper written byte by byte: the fast path (eight bytes at a
 * time) must never let through what has to be escaped, wherever it sits in a word. */
#include "format_fields.h"
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
        /* every value of up to seven digits, and every eight-digit one in a stride that meets every digit at
         * every place: the writer by size; beside each, a sixteen-digit number whose low eight digits are the
         * same value, zero-padded: the word-at-a-time writer */
        for (uint64_t v = 0; v < 130000000; v += v < 10000000 ? 1 : 997) {
                outbuf_reset(&got);
                outbuf_u64_width(&got, v, 4);
                outbuf_putc(&got, ' ');
                outbuf_u64(&got, v * 100000000 + v);
                outbuf_putc(&got, 0);
                snprintf(want, sizeof(want), "%4" PRIu64 " %" PRIu64, v, v * 100000000 + v);
                if (strcmp(got.data, want))
                        CHECK_STR(got.data, want);
        }
        outbuf_free(&got);
}

/* A growth that fails drops every later append until the buffer is reset (or its failure cleared, as the file
 * sink does to drop one entry and go on); after either, appends work and grow again. */
static void test_outbuf_failure(void) {
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

/* The text layout's escaping of a comm or a path, against a byte-at-a-time reading of its rule: strings of every
 * length up to 70 (the vector steps, their tails), mostly plain, with a byte to escape anywhere. */
static void test_escaping(void) {
        struct outbuf got = {}, got_str = {};
        char s[72], want[72 * 4 + 1];
        uint64_t x = 0x9e3779b97f4a7c15ull;
        for (unsigned len = 0; len <= 70; len++)
                for (unsigned round = 0; round < 200; round++) {
                        size_t w = 0;
                        for (unsigned i = 0; i < len; i++) {
                                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                                unsigned char c = (unsigned char) ('a' + x % 26);
                                if (x % 97 < 1 + round % 8) /* from about 1 byte in 97 to 8 in 97 */
                                        c = (unsigned char) (x >> 40);
                                if (c == 0)
                                        c = 0x5c;
                                s[i] = (char) c;
                                if (c >= 0x20 && c < 0x7f && c != '\\')
                                        want[w++] = (char) c;
                                else
                                        w += (size_t) sprintf(want + w, "\\x%02x", c);
                        }
                        s[len] = 0;
                        want[w] = 0;
                        outbuf_reset(&got);
                        outbuf_escaped(&got, s, len);
                        outbuf_putc(&got, 0);
                        outbuf_reset(&got_str);
                        outbuf_escaped_str(&got_str, s);
                        outbuf_putc(&got_str, 0);
                        if (strcmp(got.data, want) || strcmp(got_str.data, want)) {
                                CHECK_STR(got.data, want);
                                CHECK_STR(got_str.data, want);
                        }
                }
        outbuf_free(&got);
        outbuf_free(&got_str);
}

/* Every request and summary field name is spelled twice (journal, JSON): the two must say the same name. */
struct name_check {
        struct field_writer w;
        unsigned names;
};

static void check_name(struct field_writer *w, const struct field_name *n) {
        char want_journal[64], want_json[64], upper[48];
        size_t k = 0;
        /* the JSON spelling is ,"name": */
        CHECK(n->json_len > 4 && n->json_len < sizeof(upper) && strlen(n->json) == n->json_len);
        CHECK(strlen(n->journal) == n->journal_len);
        for (size_t i = 2; i + 2 < n->json_len && k + 1 < sizeof(upper); i++, k++) {
                char c = n->json[i];
                CHECK((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
                upper[k] = c >= 'a' && c <= 'z' ? (char) (c - 'a' + 'A') : c;
        }
        upper[k] = 0;
        snprintf(want_journal, sizeof(want_journal), "AIO_%s=", upper);
        snprintf(want_json, sizeof(want_json), ",\"%.*s\":", (int) (n->json_len - 4), n->json + 2);
        CHECK_STR(n->journal, want_journal);
        CHECK_STR(n->json, want_json);
        ((struct name_check *) w)->names++;
}
static void nc_str(struct field_writer *w, const struct field_name *n, const char *v, size_t len) {
        check_name(w, n);
}
static void nc_word(struct field_writer *w, const struct field_name *n, const char *v) {
        check_name(w, n);
}
static void nc_u64(struct field_writer *w, const struct field_name *n, uint64_t v) {
        check_name(w, n);
}
static void nc_s64(struct field_writer *w, const struct field_name *n, int64_t v) {
        check_name(w, n);
}

static void test_field_names(void) {
        struct name_check nc = { .w = { .str = nc_str, .word = nc_word, .u64 = nc_u64, .s64 = nc_s64, .ptr = nc_u64 } };
        struct path_str *path = calloc(1, sizeof(*path) + 8);
        path->len = 4;
        memcpy(path->s, "/a/b", 5);
        /* every optional field present */
        struct request r = {
                .pid = 1, .submit_tid = 2, .reap_tid = 3, .submit_time = 10, .end_time = 20, .nbytes_known = true,
                .submit_known = true, .has_result = true, .rw_flags = 1, .flags = 1, .reqprio = 1, .path = path,
                .path_state = PATH_UNVERIFIED, .res = -5, .kind = REQ_UNKNOWN, .end = END_EVICTED, .comm = "x",
        };
        request_fields(&nc.w, &r);
        r.kind = REQ_STALE;
        request_fields(&nc.w, &r);
        r.kind = REQ_COMPLETED;
        request_fields(&nc.w, &r);
        CHECK(nc.names >= 3 * 20);

        struct proc_interval iv = { .stale = 1, .unmatched = 1, .unknown = 1 };
        for (unsigned i = 0; i < REQ_OPS; i++)
                iv.submitted[i] = iv.completed[i] = 1;
        struct histogram h;
        histogram_reset(&h);
        histogram_add(&h, 1000);
        struct proc_summary s = { .pid = 1, .comm = "x", .start = 1, .end = 2, .iv = &iv, .latency = &h, .last = true };
        unsigned before = nc.names;
        summary_fields(&nc.w, &s);
        CHECK(nc.names - before >= 20 + 2 * (REQ_OPS - 1));
        free(path);
}

int main(void) {
        struct outbuf got = {}, want = {};
        test_numbers();
        test_escaping();
        test_outbuf_failure();
        test_field_names();
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
