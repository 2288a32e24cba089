/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include "config.h"
#include "entry.h"
#include "outbuf.h"

#define JSON_SCHEMA_VERSION 1

/* One JSON object per entry, on one line: the journal's fields, in lower case without the aio_ prefix, plus
 * what a journal field cannot carry (every iocb and io_event as an object).  realtime_offset_ns turns the
 * entry's CLOCK_MONOTONIC time into wall-clock time for "ts". */
void format_json(struct outbuf *b, struct outbuf *text, const struct entry *e, unsigned max_iocbs_per_call,
                 int64_t realtime_offset_ns);

/* CLOCK_REALTIME - CLOCK_MONOTONIC now, in ns: what turns an entry's time into "ts". */
int64_t json_realtime_offset(void);

/* One entry in the output format a file or descriptor sink was given: text lines, or one JSON line. */
void format_line(struct outbuf *b, struct outbuf *text, enum output_format format, const struct entry *e,
                 unsigned max_iocbs_per_call, int64_t realtime_offset_ns);

/* A JSON string of any bytes: escaped, and invalid UTF-8 replaced by U+FFFD, so the line always parses. */
void json_string(struct outbuf *b, const char *s, size_t n);
