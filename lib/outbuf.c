/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "outbuf.h"

#include <stdlib.h>
#include <string.h>

void outbuf_free(struct outbuf *b) {
        free(b->data);
        *b = (struct outbuf) {};
}

bool outbuf_grow(struct outbuf *b, size_t extra) {
        if (b->failed)
                return false;
        if (b->cap - b->len >= extra)
                return true;
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len < extra) {
                if (cap > SIZE_MAX / 2) {
                        b->failed = true;
                        return false;
                }
                cap *= 2;
        }
        char *p = realloc(b->data, cap);
        if (!p) {
                b->failed = true;
                return false;
        }
        b->data = p;
        b->cap = cap;
        return true;
}


/* "00" "01" ... "99": two digits per division */
static const char two_digits[201] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";

static size_t u64_to_dec(char tmp[static 20], uint64_t v) {
        size_t n = 0;
        while (v >= 100) {
                unsigned d = (unsigned) (v % 100) * 2;
                v /= 100;
                tmp[19 - n++] = two_digits[d + 1];
                tmp[19 - n++] = two_digits[d];
        }
        if (v >= 10) {
                tmp[19 - n++] = two_digits[v * 2 + 1];
                tmp[19 - n++] = two_digits[v * 2];
        } else
                tmp[19 - n++] = (char) ('0' + v);
        return n;
}

void outbuf_u64(struct outbuf *b, uint64_t v) {
        char tmp[20];
        size_t n = u64_to_dec(tmp, v);
        outbuf_put(b, tmp + 20 - n, n);
}

void outbuf_u64_width(struct outbuf *b, uint64_t v, unsigned width) {
        char tmp[20];
        size_t n = u64_to_dec(tmp, v);
        for (size_t i = n; i < width; i++)
                outbuf_putc(b, ' ');
        outbuf_put(b, tmp + 20 - n, n);
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
        if (!outbuf_reserve(b, 18))
                return;
        char *tmp = b->data + b->len;
        tmp[0] = '0';
        tmp[1] = 'x';
        for (int i = 0; i < 8; i++, v >>= 8) {
                tmp[17 - 2 * i] = hexdigits[v & 0xf];
                tmp[16 - 2 * i] = hexdigits[(v >> 4) & 0xf];
        }
        b->len += 18;
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

void outbuf_escaped(struct outbuf *b, const char *s, size_t n) {
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) s[i];
                if (c >= 0x20 && c < 0x7f && c != '\\') {
                        /* a run of printable bytes in one copy */
                        size_t run = i + 1;
                        while (run < n && (unsigned char) s[run] >= 0x20 && (unsigned char) s[run] < 0x7f &&
                               s[run] != '\\')
                                run++;
                        outbuf_put(b, s + i, run - i);
                        i = run - 1;
                } else {
                        char esc[4] = { '\\', 'x', hexdigits[c >> 4], hexdigits[c & 0xf] };
                        outbuf_put(b, esc, sizeof(esc));
                }
        }
}
