/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "outbuf.h"

#include <stdlib.h>
#include <string.h>

void outbuf_free(struct outbuf *b) {
        free(b->data);
        *b = (struct outbuf) {};
}

bool outbuf_reserve(struct outbuf *b, size_t extra) {
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

void outbuf_put(struct outbuf *b, const void *p, size_t n) {
        if (!outbuf_reserve(b, n))
                return;
        memcpy(b->data + b->len, p, n);
        b->len += n;
}

void outbuf_puts(struct outbuf *b, const char *s) {
        outbuf_put(b, s, strlen(s));
}

void outbuf_putc(struct outbuf *b, char c) {
        if (!outbuf_reserve(b, 1))
                return;
        b->data[b->len++] = c;
}

static size_t u64_to_dec(char tmp[static 20], uint64_t v) {
        size_t n = 0;
        do {
                tmp[19 - n++] = (char) ('0' + v % 10);
                v /= 10;
        } while (v);
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
        char tmp[18] = { '0', 'x' };
        for (int i = 0; i < 16; i++)
                tmp[17 - i] = hexdigits[(v >> (4 * i)) & 0xf];
        outbuf_put(b, tmp, sizeof(tmp));
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
                if (c >= 0x20 && c < 0x7f && c != '\\')
                        outbuf_putc(b, (char) c);
                else {
                        char esc[4] = { '\\', 'x', hexdigits[c >> 4], hexdigits[c & 0xf] };
                        outbuf_put(b, esc, sizeof(esc));
                }
        }
}
