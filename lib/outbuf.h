/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "util.h"

/* A growable byte buffer that formatters append to without stdio.  Growth is rare (it keeps its capacity across
 * entries); a failed growth sets `failed` and later appends are dropped, so callers check once per entry.  It
 * also makes `cap` equal `len`, so that an append's only test, for room, sends it to the slow path. */
struct outbuf {
        char *data;
        size_t len;
        size_t cap;
        bool failed;
};

void outbuf_free(struct outbuf *b);
static inline void outbuf_reset(struct outbuf *b) {
        b->len = 0;
        b->failed = false;
}
/* Room for extra more bytes: the common case inline, growth out of line. */
bool outbuf_grow(struct outbuf *b, size_t extra);
static inline bool outbuf_reserve(struct outbuf *b, size_t extra) {
        return _likely_(b->cap - b->len >= extra) || outbuf_grow(b, extra);
}

static inline void outbuf_put(struct outbuf *b, const void *p, size_t n) {
        if (!outbuf_reserve(b, n))
                return;
        memcpy(b->data + b->len, p, n);
        b->len += n;
}

static inline void outbuf_puts(struct outbuf *b, const char *s) {
        outbuf_put(b, s, strlen(s));
}

static inline void outbuf_putc(struct outbuf *b, char c) {
        if (!outbuf_reserve(b, 1))
                return;
        b->data[b->len++] = c;
}
/* A line's appends with one test for room: outbuf_span reserves the most the line can write and gives where it
 * starts, span_* write there unchecked, each returning where the next begins, and outbuf_span_end takes the
 * length.  NULL: the buffer has failed.  The SPAN_* sizes are what each writes at most. */
#define SPAN_U64 20 /* 18446744073709551615 */
#define SPAN_S64 20 /* -9223372036854775808 */
#define SPAN_PTR 18 /* 0x%016llx */
#define SPAN_U64_WIDTH(width) ((width) + SPAN_U64)
#define SPAN_ESCAPED(n) (4 * (n) + 16) /* every byte as \xNN, and a vector's overrun */

static inline char *outbuf_span(struct outbuf *b, size_t room) {
        return outbuf_reserve(b, room) ? b->data + b->len : NULL;
}
/* A span that wrote past its room has already corrupted memory: stop rather than go on. */
_Noreturn void outbuf_span_overrun(void);
static inline void outbuf_span_end(struct outbuf *b, char *d, size_t room) {
        size_t n = (size_t) (d - (b->data + b->len));
        if (n > room)
                outbuf_span_overrun();
        b->len += n;
}

static inline char *span_put(char *d, const void *p, size_t n) {
        memcpy(d, p, n);
        return d + n;
}
/* a string literal: its size known where it is written, so the copy is a few moves */
#define span_lit(d, s) span_put((d), "" s, sizeof(s) - 1)

/* A name from aiotraced's own tables (an op, a syscall, a request's kind): at most WORD_SIZE - 1 bytes. */
#define SPAN_WORD WORD_SIZE
static inline char *span_word(char *d, const struct word *w) {
        memcpy(d, w->s, w->len);
        return d + w->len;
}

char *span_u64_any(char *d, uint64_t v);
extern const char outbuf_two_digits[201]; /* "00" "01" ... "99" */
/* A digit alone inline: fds, counts, a result of 0 or 1 are a third of the numbers an entry has; four digits
 * (a size of 4096, a pid) inline too. */
static inline char *span_u64(char *d, uint64_t v) {
        if (v < 10) {
                *d = (char) ('0' + v);
                return d + 1;
        }
        if (v >= 1000 && v < 10000) {
                memcpy(d, outbuf_two_digits + 2 * (v / 100), 2);
                memcpy(d + 2, outbuf_two_digits + 2 * (v % 100), 2);
                return d + 4;
        }
        return span_u64_any(d, v);
}
static inline char *span_s64(char *d, int64_t v) {
        if (v < 0) {
                *d++ = '-';
                return span_u64(d, (uint64_t) 0 - (uint64_t) v);
        }
        return span_u64(d, (uint64_t) v);
}
#ifdef __SSE2__
/* Sixteen hex digits of v, most significant first, in one vector: each byte's two nibbles spread to two bytes,
 * then made a digit or a letter ('a' - '0' - 10 = 39 more where the nibble is above 9). */
static inline void hex16(char *d, uint64_t v) {
        __m128i x = _mm_cvtsi64_si128((long long) __builtin_bswap64(v)); /* the top byte first */
        __m128i nibble = _mm_set1_epi8(0x0f);
        __m128i n = _mm_unpacklo_epi8(_mm_and_si128(_mm_srli_epi16(x, 4), nibble), _mm_and_si128(x, nibble));
        __m128i letters = _mm_and_si128(_mm_cmpgt_epi8(n, _mm_set1_epi8(9)), _mm_set1_epi8(39));
        _mm_storeu_si128((__m128i *) (void *) d, _mm_add_epi8(n, _mm_add_epi8(letters, _mm_set1_epi8('0'))));
}
#else
static inline void hex16(char *d, uint64_t v) {
        static const char digits[] = "0123456789abcdef";
        for (int i = 15; i >= 0; i--, v >>= 4)
                d[i] = digits[v & 0xf];
}
#endif

/* 0x%016llx, as the seed script printed pointers: inline, as a line has up to five */
static inline char *span_ptr(char *d, uint64_t v) {
        d[0] = '0';
        d[1] = 'x';
        hex16(d + 2, v);
        return d + 18;
}

/* decimal right-aligned in `width` columns, as "[%4d]" */
char *span_u64_width(char *d, uint64_t v, unsigned width);
/* "%4u", inline below 10000: an iocb's or an event's index, on every such line */
static inline char *span_u64_width4(char *d, uint64_t v) {
        if (v >= 10000)
                return span_u64_width(d, v, 4);
        memcpy(d, outbuf_two_digits + 2 * (v / 100), 2);
        memcpy(d + 2, outbuf_two_digits + 2 * (v % 100), 2);
        if (v < 1000) { /* leading zeros blank, the last digit kept */
                d[0] = ' ';
                if (v < 100) {
                        d[1] = ' ';
                        if (v < 10)
                                d[2] = ' ';
                }
        }
        return d + 4;
}
/* A comm or path: printable ASCII as is, anything else as \xNN, so one entry stays one line. */
char *span_escaped(char *d, const char *s, size_t n);
/* The same of a comm: up to its NUL, within the 16 bytes the kernel keeps (all of them defined). */
#define SPAN_COMM SPAN_ESCAPED(16)
char *span_escaped_comm(char *d, const char comm[static 16]);

/* The same, each appended with its own test for room. */
void outbuf_u64_any(struct outbuf *b, uint64_t v);
static inline void outbuf_u64(struct outbuf *b, uint64_t v) {
        if (v < 10 && outbuf_reserve(b, 1)) {
                b->data[b->len++] = (char) ('0' + v);
                return;
        }
        outbuf_u64_any(b, v);
}
void outbuf_s64(struct outbuf *b, int64_t v);
void outbuf_ptr(struct outbuf *b, uint64_t v);
/* 0x%llx */
void outbuf_hex(struct outbuf *b, uint64_t v);
void outbuf_u64_width(struct outbuf *b, uint64_t v, unsigned width);
/* The nine digits of a fraction of a second, zero-padded: v's last nine. */
void outbuf_frac9(struct outbuf *b, uint64_t v);
void outbuf_escaped(struct outbuf *b, const char *s, size_t n);
/* The same of a NUL-terminated string (a comm), in one pass. */
void outbuf_escaped_str(struct outbuf *b, const char *s);
