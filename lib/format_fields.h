/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "outbuf.h"
#include "requests.h"

/* A field's name as each structured format writes it, both spelled out at compile time: the journal's
 * AIO_<NAME>= and JSON's ,"<name>": (the same name in lower case).  Each sits in FIELD_NAME_MAX bytes, padded,
 * so that writing one is a copy of a fixed size (no call, no string instruction), then the length. */
#define FIELD_NAME_MAX 32
struct field_name {
        char journal[FIELD_NAME_MAX];
        char json[FIELD_NAME_MAX];
        uint8_t journal_len;
        uint8_t json_len;
};
#define FIELD_NAME_INIT(upper, lower)                                                                        \
        { "AIO_" upper "=", ",\"" lower "\":", sizeof("AIO_" upper "=") - 1, sizeof(",\"" lower "\":") - 1 }
#define FIELD_NAME(upper, lower)                                                                             \
        ({                                                                                                   \
                _Static_assert(sizeof("AIO_" upper "=") < FIELD_NAME_MAX, "field name too long");            \
                static const struct field_name _field_name = FIELD_NAME_INIT(upper, lower);                  \
                &_field_name;                                                                                \
        })

/* Append a name (padded to FIELD_NAME_MAX) in one fixed-size copy. */
static inline void field_name_put(struct outbuf *b, const char name[static FIELD_NAME_MAX], size_t len) {
        if (!outbuf_reserve(b, FIELD_NAME_MAX))
                return;
        memcpy(b->data + b->len, name, FIELD_NAME_MAX);
        b->len += len;
}

/* The fields of a request or summary entry, named once for every structured format.  One list, so the two
 * schemas cannot drift apart. */
struct field_writer {
        void (*str)(struct field_writer *w, const struct field_name *name, const char *v, size_t len);
        /* a word of aiotraced's own (a kind, an op, an errno name): printable ASCII, nothing to escape */
        void (*word)(struct field_writer *w, const struct field_name *name, const char *v);
        void (*u64)(struct field_writer *w, const struct field_name *name, uint64_t v);
        void (*s64)(struct field_writer *w, const struct field_name *name, int64_t v);
        void (*ptr)(struct field_writer *w, const struct field_name *name, uint64_t v); /* an address or flags: hex */
};

void request_fields(struct field_writer *w, const struct request *r);
void summary_fields(struct field_writer *w, const struct proc_summary *s);

/* Anything in the request not vouched for (stale, unmatched, unknown, evicted, a path not checked): a warning. */
int request_priority(const struct request *r);

/* The latency percentiles a summary reports, in order. */
#define SUMMARY_PERCENTILES 4
extern const double summary_percentiles[SUMMARY_PERCENTILES];
