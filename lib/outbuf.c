/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "outbuf.h"

#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

void outbuf_free(struct outbuf *b) {
        free(b->data);
        *b = (struct outbuf) {};
}

void outbuf_span_overrun(void) {
        abort();
}

static bool outbuf_fail(struct outbuf *b) {
        b->failed = true;
        b->cap = b->len; /* less than the allocation: only ever too little, and the slow path takes the rest */
        return false;
}

bool outbuf_grow(struct outbuf *b, size_t extra) {
        if (b->failed)
                return false;
        if (b->cap - b->len >= extra)
                return true;
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len < extra) {
                if (cap > SIZE_MAX / 2)
                        return outbuf_fail(b);
                cap *= 2;
        }
        char *p = realloc(b->data, cap);
        if (!p)
                return outbuf_fail(b);
        b->data = p;
        b->cap = cap;
        return true;
}


static const uint64_t powers_of_10[20] = {
        1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull,
        1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
        100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
        1000000000000000000ull, 10000000000000000000ull,
};

/* The number of decimal digits of v, from its bit length: 1233/4096 is just over log10(2).  v | 1 has as many
 * digits as v (a power of ten above 1 is even) and gives 0 one digit. */
static inline unsigned dec_digits(uint64_t v) {
        v |= 1;
        unsigned t = ((unsigned) (64 - __builtin_clzll(v)) * 1233) >> 12;
        return t + (v >= powers_of_10[t]);
}

/* "00" "01" ... "99" */
const char outbuf_two_digits[201] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";

static inline char *dec_pair(char *d, uint32_t v) {
        memcpy(d, outbuf_two_digits + 2 * v, 2);
        return d + 2;
}

/* the leading one or two digits, v < 100 */
static inline char *dec_lead(char *d, uint32_t v) {
        if (v < 10) {
                *d = (char) ('0' + v);
                return d + 1;
        }
        return dec_pair(d, v);
}

/* v < 10^8, without leading zeros: a branch by size, then pairs.  The sizes come in the same order line after
 * line (a pid, a size, an offset), so the branches are predicted. */
static inline char *dec_put_short(char *d, uint32_t v) {
        if (v < 100)
                return dec_lead(d, v);
        if (v < 10000) {
                d = dec_lead(d, v / 100);
                return dec_pair(d, v % 100);
        }
        if (v < 1000000) {
                uint32_t low = v % 10000;
                d = dec_lead(d, v / 10000);
                d = dec_pair(d, low / 100);
                return dec_pair(d, low % 100);
        }
        uint32_t low = v % 1000000, mid = low / 100;
        d = dec_lead(d, v / 1000000);
        d = dec_pair(d, mid / 100);
        d = dec_pair(d, mid % 100);
        return dec_pair(d, low % 100);
}

/* exactly eight digits of v < 10^8 */
static inline char *dec_put8(char *d, uint32_t v) {
        uint32_t hi = v / 10000, lo = v % 10000;
        d = dec_pair(d, hi / 100);
        d = dec_pair(d, hi % 100);
        d = dec_pair(d, lo / 100);
        return dec_pair(d, lo % 100);
}

/* v at d, at most 20 bytes */
static inline char *dec_put(char *d, uint64_t v) {
        if (_likely_(v < 100000000))
                return dec_put_short(d, (uint32_t) v);
        uint64_t q = v / 100000000;
        uint32_t r = (uint32_t) (v - q * 100000000);
        if (q < 100000000)
                d = dec_put_short(d, (uint32_t) q);
        else {
                uint64_t qq = q / 100000000; /* below 1845 */
                d = dec_put_short(d, (uint32_t) qq);
                d = dec_put8(d, (uint32_t) (q - qq * 100000000));
        }
        return dec_put8(d, r);
}

char *span_u64_any(char *d, uint64_t v) {
        return dec_put(d, v);
}

/* One value appended: its bound exact (test-json), so without outbuf_span_end's check. */
void outbuf_u64_any(struct outbuf *b, uint64_t v) {
        if (outbuf_reserve(b, SPAN_U64))
                b->len = (size_t) (dec_put(b->data + b->len, v) - b->data);
}

char *span_u64_width(char *d, uint64_t v, unsigned width) {
        unsigned n = dec_digits(v), pad = width > n ? width - n : 0;
        /* "[%4d]": a fixed copy, the digits written over what is not padding; it stays within the room, which
         * is at least SPAN_U64 */
        if (pad <= 16)
                memcpy(d, "                ", 16);
        else
                memset(d, ' ', pad);
        return dec_put(d + pad, v);
}

void outbuf_u64_width(struct outbuf *b, uint64_t v, unsigned width) {
        if (outbuf_reserve(b, SPAN_U64_WIDTH(width)))
                b->len = (size_t) (span_u64_width(b->data + b->len, v, width) - b->data);
}

void outbuf_s64(struct outbuf *b, int64_t v) {
        if (v < 0) {
                outbuf_putc(b, '-');
                outbuf_u64(b, (uint64_t) 0 - (uint64_t) v);
        } else
                outbuf_u64(b, (uint64_t) v);
}

static const char hexdigits[] = "0123456789abcdef";

void outbuf_ptr(struct outbuf *b, uint64_t v) {
        if (outbuf_reserve(b, SPAN_PTR))
                b->len = (size_t) (span_ptr(b->data + b->len, v) - b->data);
}

void outbuf_hex(struct outbuf *b, uint64_t v) {
        char tmp[18];
        size_t n = 0;
        do {
                tmp[17 - n++] = hexdigits[v & 0xf];
                v >>= 4;
        } while (v);
        tmp[17 - n++] = 'x';
        tmp[17 - n++] = '0';
        outbuf_put(b, tmp + 18 - n, n);
}

static inline bool plain_byte(unsigned char c) {
        return c >= 0x20 && c < 0x7f && c != '\\';
}

/* at most 4 bytes at d */
static inline char *escape_byte(char *d, unsigned char c) {
        if (plain_byte(c)) {
                *d = (char) c;
                return d + 1;
        }
        d[0] = '\\';
        d[1] = 'x';
        d[2] = hexdigits[c >> 4];
        d[3] = hexdigits[c & 0xf];
        return d + 4;
}

#ifdef __SSE2__
/* How many of the 16 bytes at s, from the first, are plain: printable ASCII and not a backslash. */
static inline unsigned plain_prefix16(const char *s) {
        __m128i v = _mm_loadu_si128((const __m128i *) (const void *) s);
        /* signed compares: bytes from 0x80 are negative, so below 0x20 */
        __m128i ok = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(0x1f)), _mm_cmplt_epi8(v, _mm_set1_epi8(0x7f)));
        ok = _mm_andnot_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')), ok);
        unsigned bad = ~(unsigned) _mm_movemask_epi8(ok) & 0xffff;
        return bad ? (unsigned) __builtin_ctz(bad) : 16;
}
#endif

char *span_escaped(char *d, const char *s, size_t n) {
        size_t i = 0;
#ifdef __SSE2__
        /* a path is mostly plain: sixteen bytes checked and copied at a time */
        while (i + 16 <= n) {
                unsigned k = plain_prefix16(s + i);
                memcpy(d, s + i, 16); /* the bytes past k are written again below */
                d += k;
                i += k;
                if (k < 16)
                        d = escape_byte(d, (unsigned char) s[i++]);
        }
        /* The tail, when the last sixteen bytes are plain: one block that ends where the input does, stored over
         * the output of the bytes before i in it, which are plain too and so were written one for one. */
        if (i < n && n >= 16 && plain_prefix16(s + n - 16) == 16) {
                size_t back = 16 - (n - i);
                memcpy(d - back, s + n - 16, 16);
                return d + (n - i);
        }
#endif
        for (; i < n; i++)
                d = escape_byte(d, (unsigned char) s[i]);
        return d;
}

char *span_escaped_comm(char *d, const char comm[static 16]) {
#ifdef __SSE2__
        /* the name in one load: where its NUL is, and whether anything before it needs escaping */
        __m128i v = _mm_loadu_si128((const __m128i *) (const void *) comm);
        unsigned nul = (unsigned) _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_setzero_si128()));
        unsigned n = nul ? (unsigned) __builtin_ctz(nul) : 16;
        if (plain_prefix16(comm) >= n) {
                _mm_storeu_si128((__m128i *) (void *) d, v);
                return d + n;
        }
#endif
        return span_escaped(d, comm, strnlen(comm, 16));
}

void outbuf_escaped(struct outbuf *b, const char *s, size_t n) {
        if (n > (SIZE_MAX - 16) / 4) {
                (void) outbuf_fail(b); /* no room could hold it: dropped, and said, like any append */
                return;
        }
        if (outbuf_reserve(b, SPAN_ESCAPED(n)))
                b->len = (size_t) (span_escaped(b->data + b->len, s, n) - b->data);
}

void outbuf_escaped_str(struct outbuf *b, const char *s) {
        /* in steps of 16 bytes of input, each of which writes at most 64 */
        for (;;) {
                if (!outbuf_reserve(b, 64))
                        return;
                char *d = b->data + b->len;
                for (unsigned k = 0; k < 16; k++) {
                        unsigned char c = (unsigned char) *s++;
                        if (!c) {
                                b->len = (size_t) (d - b->data);
                                return;
                        }
                        d = escape_byte(d, c);
                }
                b->len = (size_t) (d - b->data);
        }
}

void outbuf_frac9(struct outbuf *b, uint64_t v) {
        if (!outbuf_reserve(b, 9))
                return;
        char *d = b->data + b->len;
        for (int k = 8; k >= 0; k--, v /= 10)
                d[k] = (char) ('0' + v % 10);
        b->len += 9;
}
