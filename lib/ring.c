/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* sample_id_all trailer for AIOT_SAMPLE_TYPE: {pid, tid}, time, {cpu, res}, identifier */
#define TRAILER_SIZE 32u
#define SAMPLE_FIXED_SIZE (8u + 8u + 8u + 8u + 8u + 4u) /* header, id, pid/tid, time, cpu, raw size */

int ring_init(struct ring *r, void *base, size_t page_size, size_t data_size, int cpu) {
        if (data_size == 0 || (data_size & (data_size - 1)) != 0)
                return -EINVAL;
        uint8_t *scratch = malloc(RING_RECORD_MAX);
        if (!scratch)
                return -ENOMEM;
        struct perf_event_mmap_page *meta = base;
        /* Kernels since 4.1 say where the data is; older ones put it right after the first page. */
        size_t offset = meta->data_offset ? meta->data_offset : page_size;
        *r = (struct ring) {
                .meta = meta,
                .data = (const uint8_t *) base + offset,
                .size = data_size,
                .mask = data_size - 1,
                .scratch = scratch,
                .cpu = cpu,
        };
        r->head = r->read_pos = r->scan_pos = __atomic_load_n(&meta->data_tail, __ATOMIC_RELAXED);
        return 0;
}

int ring_init_absent(struct ring *r, int cpu) {
        struct perf_event_mmap_page *meta = calloc(1, sizeof(*meta));
        if (!meta)
                return -ENOMEM;
        *r = (struct ring) { .meta = meta, .cpu = cpu, .absent_meta = meta };
        return 0;
}

void ring_done(struct ring *r) {
        free(r->scratch);
        free(r->absent_meta);
        r->scratch = NULL;
        r->absent_meta = NULL;
}

bool ring_refresh(struct ring *r) {
        r->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
        return r->head != r->read_pos;
}

static void ring_copy(const struct ring *r, uint64_t pos, void *dst, size_t len) {
        size_t off = pos & r->mask;
        size_t first = MIN(len, r->size - off);
        memcpy(dst, r->data + off, first);
        if (first < len)
                memcpy((uint8_t *) dst + first, r->data, len - first);
}

/* The header at pos, or NULL when it cannot be a record: the kernel only writes sizes that are multiples of 8. */
static const struct perf_event_header *ring_header(const struct ring *r, uint64_t pos, uint64_t head) {
        if (head - pos < sizeof(struct perf_event_header))
                return NULL;
        const struct perf_event_header *h = (const void *) (r->data + (pos & r->mask));
        if (h->size < sizeof(*h) || (h->size & 7) != 0 || h->size > head - pos)
                return NULL;
        return h;
}

int ring_peek(struct ring *r, const struct perf_event_header **ret) {
        if (r->read_pos == r->head)
                return 0;
        const struct perf_event_header *h = ring_header(r, r->read_pos, r->head);
        if (!h)
                return -EBADMSG;
        size_t off = r->read_pos & r->mask;
        if (off + h->size > r->size) {
                ring_copy(r, r->read_pos, r->scratch, h->size);
                h = (const void *) r->scratch;
        }
        *ret = h;
        return 1;
}

void ring_advance(struct ring *r, const struct perf_event_header *h) {
        r->read_pos += h->size;
        if (r->scan_pos < r->read_pos)
                r->scan_pos = r->read_pos;
}

uint64_t ring_skip_to_head(struct ring *r) {
        uint64_t skipped = r->head - r->read_pos;
        r->read_pos = r->scan_pos = r->head;
        return skipped;
}

void ring_commit(struct ring *r) {
        __atomic_store_n(&r->meta->data_tail, r->read_pos, __ATOMIC_RELEASE);
}

uint64_t ring_used(const struct ring *r) {
        return r->head - __atomic_load_n(&r->meta->data_tail, __ATOMIC_RELAXED);
}

/* How far the scan asks for the ring's lines ahead of the header it reads.  The kernel wrote them on another
 * CPU, most often: read one at a time, each header waits for its line to come over; asked for ahead, many come
 * at once, and the records' bodies are in the cache when they are decoded. */
#define SCAN_PREFETCH_BYTES 2048u

void ring_scan(struct ring *r, void (*fn)(void *userdata, uint32_t tid, uint64_t time), void *userdata) {
        uint64_t fetched = r->scan_pos & ~(uint64_t) 63;
        while (r->scan_pos != r->head) {
                uint64_t until = MIN(r->head, r->scan_pos + SCAN_PREFETCH_BYTES);
                for (; fetched < until; fetched += 64)
                        __builtin_prefetch(r->data + (fetched & r->mask), 0, 3);
                const struct perf_event_header *h = ring_header(r, r->scan_pos, r->head);
                if (!h)
                        return; /* ring_peek will report it when the reader gets there */
                if (h->type == PERF_RECORD_SAMPLE && h->size >= SAMPLE_FIXED_SIZE) {
                        uint8_t fixed[32];
                        ring_copy(r, r->scan_pos, fixed, sizeof(fixed));
                        fn(userdata, load_u32(fixed + 20), load_u64(fixed + 24));
                }
                r->scan_pos += h->size;
        }
}

bool record_time(const struct perf_event_header *h, uint64_t *ret_time) {
        const uint8_t *p = (const uint8_t *) h;
        if (h->type == PERF_RECORD_SAMPLE) {
                if (h->size < SAMPLE_FIXED_SIZE)
                        return false;
                *ret_time = load_u64(p + 24);
                return true;
        }
        if (h->size < sizeof(*h) + TRAILER_SIZE)
                return false;
        *ret_time = load_u64(p + h->size - TRAILER_SIZE + 8);
        return true;
}

int sample_parse(const struct perf_event_header *h, struct sample *ret) {
        const uint8_t *p = (const uint8_t *) h;
        if (h->type != PERF_RECORD_SAMPLE || h->size < SAMPLE_FIXED_SIZE)
                return -EBADMSG;
        uint32_t raw_size = load_u32(p + 40);
        if (raw_size > h->size - SAMPLE_FIXED_SIZE)
                return -EBADMSG;
        *ret = (struct sample) {
                .id = load_u64(p + 8),
                .pid = load_u32(p + 16),
                .tid = load_u32(p + 20),
                .time = load_u64(p + 24),
                .cpu = load_u32(p + 32),
                .raw_size = raw_size,
                .raw = p + SAMPLE_FIXED_SIZE,
        };
        return 0;
}

int lost_parse(const struct perf_event_header *h, struct lost_record *ret) {
        const uint8_t *p = (const uint8_t *) h;
        if (h->type != PERF_RECORD_LOST || h->size < sizeof(*h) + 16 + TRAILER_SIZE)
                return -EBADMSG;
        const uint8_t *trailer = p + h->size - TRAILER_SIZE;
        *ret = (struct lost_record) {
                .id = load_u64(p + 8),
                .lost = load_u64(p + 16),
                .time = load_u64(trailer + 8),
                .cpu = load_u32(trailer + 16),
        };
        return 0;
}
