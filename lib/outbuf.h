/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
void outbuf_u64_any(struct outbuf *b, uint64_t v);
/* A digit alone inline: fds, counts, a result of 0 or 1 are a third of the numbers an entry has. */
static inline void outbuf_u64(struct outbuf *b, uint64_t v) {
        if (v < 10 && outbuf_reserve(b, 1)) {
                b->data[b->len++] = (char) ('0' + v);
                return;
        }
        outbuf_u64_any(b, v);
}
void outbuf_s64(struct outbuf *b, int64_t v);
/* 0x%016llx, as the seed script printed pointers */
void outbuf_ptr(struct outbuf *b, uint64_t v);
/* 0x%llx */
void outbuf_hex(struct outbuf *b, uint64_t v);
/* decimal right-aligned in `width` columns, as "[%4d]" */
void outbuf_u64_width(struct outbuf *b, uint64_t v, unsigned width);
/* A comm or path: printable ASCII as is, anything else as \xNN, so one entry stays one line. */
void outbuf_escaped(struct outbuf *b, const char *s, size_t n);
/* The same of a NUL-terminated string (a comm), in one pass. */
void outbuf_escaped_str(struct outbuf *b, const char *s);
