/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every event aiotraced opens uses this sample layout, so record fields sit at fixed offsets. */
#define AIOT_SAMPLE_TYPE \
        (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW)

/* The largest record perf can write: header.size is 16 bits. */
#define RING_RECORD_MAX 65536u

/* One per-CPU perf mmap ring.  Two cursors walk it ahead of the kernel's tail:
 * read_pos, the next record to process, and scan_pos, how far records have been indexed by thread, so that
 * the fallback memory reader can tell whether a thread has already moved on. */
struct ring {
        struct perf_event_mmap_page *meta;
        const uint8_t *data;
        uint64_t size;
        uint64_t mask;
        uint64_t head;
        uint64_t read_pos;
        uint64_t scan_pos;
        uint8_t *scratch; /* a record that wraps around the end is copied here whole */
        int cpu;
        struct perf_event_mmap_page *absent_meta; /* an absent ring's empty stand-in, freed with it */
};

struct sample {
        uint64_t id;
        uint32_t pid;
        uint32_t tid;
        uint64_t time;
        uint32_t cpu;
        uint32_t raw_size;
        const uint8_t *raw;
};

struct lost_record {
        uint64_t id;
        uint64_t lost;
        uint64_t time;
        uint32_t cpu;
};

/* base: the mapping (metadata page first); data_size: bytes of ring after it (a power of two). */
int ring_init(struct ring *r, void *base, size_t page_size, size_t data_size, int cpu);
/* A ring for a CPU that has none yet (offline): always empty, until ring_done and ring_init in its place. */
int ring_init_absent(struct ring *r, int cpu);
void ring_done(struct ring *r);

/* Snapshot data_head (acquire).  Returns true when there is something past read_pos. */
bool ring_refresh(struct ring *r);

/* The record at read_pos, contiguous (copied when it wraps).  0: none left before the snapshot head; 1: *ret set;
 * -EBADMSG: the ring holds garbage at read_pos (the rest of the snapshot is skipped, see ring_skip_to_head). */
int ring_peek(struct ring *r, const struct perf_event_header **ret);
void ring_advance(struct ring *r, const struct perf_event_header *h);
/* Drop everything up to the snapshot head; returns the number of bytes skipped. */
uint64_t ring_skip_to_head(struct ring *r);
/* Hand processed space back to the kernel (release store of data_tail). */
void ring_commit(struct ring *r);
/* Bytes the kernel may not write over: from the tail handed back to the snapshot head. */
uint64_t ring_used(const struct ring *r);

/* Walk records between scan_pos and the snapshot head, calling fn(tid, time) for each sample. */
void ring_scan(struct ring *r, void (*fn)(void *userdata, uint32_t tid, uint64_t time), void *userdata);

/* Time of any record (samples carry it; others carry it in the sample_id_all trailer). */
bool record_time(const struct perf_event_header *h, uint64_t *ret_time);
int sample_parse(const struct perf_event_header *h, struct sample *ret);
int lost_parse(const struct perf_event_header *h, struct lost_record *ret);
