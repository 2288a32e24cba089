/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include "config.h"
#include "entry.h"
#include "outbuf.h"

#define JSON_SCHEMA_VERSION 1

/* How a file or descriptor sink writes its entries. */
struct line_format {
        enum output_format format;
        /* JSON: the text layout as "message" on calls, requests and summaries as well (always on the entries that
         * have nothing else: info, stats, lost) */
        bool json_message;
        unsigned max_iocbs_per_call;
        int64_t realtime_offset_ns; /* what turns an entry's CLOCK_MONOTONIC time into wall-clock time for "ts" */
};

/* One JSON object per entry, on one line: the journal's fields, in lower case without the aio_ prefix, plus
 * what a journal field cannot carry (every iocb and io_event as an object).  text is scratch for "message". */
void format_json(struct outbuf *b, struct outbuf *text, const struct entry *e, const struct line_format *f);

/* CLOCK_REALTIME - CLOCK_MONOTONIC now, in ns: what turns an entry's time into "ts". */
int64_t json_realtime_offset(void);

/* One entry in the output format a file or descriptor sink was given: text lines, or one JSON line. */
void format_line(struct outbuf *b, struct outbuf *text, const struct line_format *f, const struct entry *e);

/* A JSON string of any bytes: escaped, and invalid UTF-8 replaced by U+FFFD, so the line always parses. */
void json_string(struct outbuf *b, const char *s, size_t n);
