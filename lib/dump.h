/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"

/* A dump (aiotraced --dump FILE, read by tests/bench-replay): "AIOTDUMP 1", an "event SYSTEM NAME ID" line for
 * each event of the table (its tracepoint id on the kernel that recorded it), "records", then every record as
 * the rings held it. */
struct dump;

/* A new file (0600, never through a symlink, locked for writing: -EBUSY, with the holder's pid, when another
 * process has it), its header written. */
int dump_open(const char *path, const struct event_table *t, struct dump **ret, pid_t *ret_holder);
/* One record; one that cannot be written is counted. */
void dump_record(struct dump *d, const struct perf_event_header *h);
/* What is buffered, out now (after each drain: a crash loses little). */
void dump_flush(struct dump *d);
/* Everything out, then closed: the records that could not be written, in all. */
uint64_t dump_close(struct dump *d);

/* A whole dump in memory: its records, whose samples carry the ids of t's events with the same names, so that a
 * dump recorded on any kernel decodes with another table (the fixtures').  *ret_len bytes, *ret_n records. */
int dump_load(const char *path, const struct event_table *t, uint8_t **ret, size_t *ret_len, size_t *ret_n);
