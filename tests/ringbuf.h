/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A perf mmap ring laid out in ordinary memory, written the way the kernel writes it, for tests without root. */
#pragma once

#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_PAGE 4096u

struct fake_ring {
        uint8_t *base; /* metadata page, then data */
        size_t data_size;
};

static inline struct perf_event_mmap_page *fake_meta(struct fake_ring *f) {
        return (struct perf_event_mmap_page *) f->base;
}

static inline void fake_ring_init(struct fake_ring *f, size_t data_size, uint64_t start) {
        f->base = aligned_alloc(FAKE_PAGE, FAKE_PAGE + data_size);
        memset(f->base, 0xee, FAKE_PAGE + data_size);
        memset(f->base, 0, FAKE_PAGE);
        f->data_size = data_size;
        fake_meta(f)->data_offset = FAKE_PAGE;
        fake_meta(f)->data_size = data_size;
        fake_meta(f)->data_head = start;
        fake_meta(f)->data_tail = start;
}

static inline void fake_ring_free(struct fake_ring *f) {
        free(f->base);
}

/* Append a record at data_head, wrapping as the kernel does. */
static inline void fake_ring_put(struct fake_ring *f, const void *rec, size_t len) {
        uint64_t head = fake_meta(f)->data_head;
        uint8_t *data = f->base + FAKE_PAGE;
        for (size_t i = 0; i < len; i++)
                data[(head + i) % f->data_size] = ((const uint8_t *) rec)[i];
        __atomic_store_n(&fake_meta(f)->data_head, head + len, __ATOMIC_RELEASE);
}

static inline void put64(uint8_t *p, uint64_t v) {
        memcpy(p, &v, 8);
}
static inline void put32(uint8_t *p, uint32_t v) {
        memcpy(p, &v, 4);
}

/* A PERF_RECORD_SAMPLE of AIOT_SAMPLE_TYPE; returns its size (a multiple of 8). */
static inline size_t build_sample(uint8_t *buf, uint64_t id, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu,
                                  const void *raw, uint32_t raw_size) {
        size_t size = (44 + raw_size + 7) & ~(size_t) 7;
        memset(buf, 0, size);
        struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = (uint16_t) size };
        memcpy(buf, &h, sizeof(h));
        put64(buf + 8, id);
        put32(buf + 16, pid);
        put32(buf + 20, tid);
        put64(buf + 24, time);
        put32(buf + 32, cpu);
        put32(buf + 40, raw_size);
        memcpy(buf + 44, raw, raw_size);
        return size;
}

static inline size_t build_lost(uint8_t *buf, uint64_t id, uint64_t lost, uint64_t time, uint32_t cpu) {
        size_t size = 8 + 16 + 32;
        memset(buf, 0, size);
        struct perf_event_header h = { .type = PERF_RECORD_LOST, .size = (uint16_t) size };
        memcpy(buf, &h, sizeof(h));
        put64(buf + 8, id);
        put64(buf + 16, lost);
        put64(buf + 24 + 8, time);
        put32(buf + 24 + 16, cpu);
        put64(buf + 24 + 24, id);
        return size;
}
