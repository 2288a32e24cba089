/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growable byte buffer that formatters append to without stdio.  Growth is rare (it keeps its capacity across
 * entries); a failed growth sets `failed` and later appends are dropped, so callers check once per entry. */
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
bool outbuf_reserve(struct outbuf *b, size_t extra);
void outbuf_put(struct outbuf *b, const void *p, size_t n);
void outbuf_puts(struct outbuf *b, const char *s);
void outbuf_putc(struct outbuf *b, char c);
void outbuf_u64(struct outbuf *b, uint64_t v);
void outbuf_s64(struct outbuf *b, int64_t v);
/* 0x%016llx, as the seed script printed pointers */
void outbuf_ptr(struct outbuf *b, uint64_t v);
/* 0x%llx */
void outbuf_hex(struct outbuf *b, uint64_t v);
/* decimal right-aligned in `width` columns, as "[%4d]" */
void outbuf_u64_width(struct outbuf *b, uint64_t v, unsigned width);
/* A comm or path: printable ASCII as is, anything else as \xNN, so one entry stays one line. */
void outbuf_escaped(struct outbuf *b, const char *s, size_t n);
