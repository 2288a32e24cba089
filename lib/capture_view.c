/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "capture_view.h"

#include <errno.h>
#include <string.h>

#include "util.h"

static size_t padded(uint32_t len) {
        return ((size_t) len + 7) & ~(size_t) 7;
}

int capture_view_parse(const uint8_t *raw, size_t raw_size, size_t record_size, struct capture_view *ret) {
        size_t at = (record_size + 7) & ~(size_t) 7;
        struct capture_header h;
        if (raw_size < at + sizeof(h))
                return -ENOENT;
        memcpy(&h, raw + at, sizeof(h));
        if (h.magic != CAPTURE_MAGIC)
                return -ENOENT;
        if (h.version != CAPTURE_VERSION || h.size < sizeof(h) || h.size > raw_size - at)
                return -EBADMSG;
        const uint8_t *data = raw + at + sizeof(h);
        size_t size = h.size - sizeof(h), off = 0;
        /* Walk once so that lookups can trust every segment header. */
        for (uint32_t i = 0; i < h.n_segments; i++) {
                struct capture_segment s;
                if (size - off < sizeof(s))
                        return -EBADMSG;
                memcpy(&s, data + off, sizeof(s));
                if (s.valid > s.len || padded(s.len) > size - off - sizeof(s))
                        return -EBADMSG;
                off += sizeof(s) + padded(s.len);
        }
        const uint8_t *files = NULL;
        if (h.n_files) {
                if (h.n_files > CAPTURE_MAX_ITEMS || h.files_off < off || h.files_off % 8 ||
                    h.files_off > size || (size - h.files_off) / sizeof(struct capture_iocb_file) < h.n_files)
                        return -EBADMSG;
                files = data + h.files_off;
        }
        *ret = (struct capture_view) {
                .data = data, .size = off, .n_segments = h.n_segments, .flags = h.flags,
                .files = files, .n_files = files ? h.n_files : 0,
                .enter_cpu = h.enter_cpu, .enter_time = h.enter_time,
        };
        memcpy(ret->args, h.args, sizeof(ret->args));
        memcpy(ret->comm, h.comm, sizeof(ret->comm));
        ret->comm[sizeof(ret->comm) - 1] = 0;
        return 0;
}

static bool segment_holds(const struct capture_segment *s, uint64_t addr, size_t len) {
        return addr >= s->addr && len <= s->len && addr - s->addr <= s->len - len;
}

static void fill_one(struct capture_view *v, struct remote_chunk *c) {
        size_t off = v->cursor_off;
        uint32_t idx = v->cursor_idx;
        for (uint32_t tried = 0; tried < v->n_segments; tried++) {
                if (idx == v->n_segments) {
                        idx = 0;
                        off = 0;
                }
                struct capture_segment s;
                memcpy(&s, v->data + off, sizeof(s));
                if (segment_holds(&s, c->addr, c->len)) {
                        uint64_t rel = c->addr - s.addr;
                        v->cursor_off = off;
                        v->cursor_idx = idx;
                        if (rel + c->len <= s.valid) {
                                memcpy(c->buf, v->data + off + sizeof(s) + rel, c->len);
                                c->state = MEM_OK;
                        } else
                                c->state = MEM_FAULT;
                        return;
                }
                off += sizeof(s) + padded(s.len);
                idx++;
        }
        c->state = v->flags & CAPTURE_F_NO_ARGS ? MEM_NOT_CAPTURED
                   : v->flags & CAPTURE_F_BOUNDED ? MEM_NOT_READ
                                                  : MEM_NOT_CAPTURED;
}

void capture_view_fill(struct capture_view *v, struct remote_chunk *chunks, size_t n) {
        for (size_t i = 0; i < n; i++)
                fill_one(v, &chunks[i]);
}

bool capture_view_file(const struct capture_view *v, unsigned i, struct capture_iocb_file *ret) {
        if (i >= v->n_files)
                return false;
        struct capture_iocb_file f;
        memcpy(&f, v->files + (size_t) i * sizeof(f), sizeof(f));
        if (f.file.mnt_id == 0)
                return false;
        *ret = f;
        return true;
}

size_t capture_view_ring(const struct capture_view *v, uint64_t ctx, struct io_event *events, bool *reaped,
                         size_t max) {
        if (!(v->flags & CAPTURE_F_RING))
                return 0;
        size_t off = 0, n = 0;
        bool in_ring = false;
        uint32_t head = 0, tail = 0;
        for (uint32_t i = 0; i < v->n_segments; i++) {
                struct capture_segment s;
                memcpy(&s, v->data + off, sizeof(s));
                const uint8_t *bytes = v->data + off + sizeof(s);
                off += sizeof(s) + padded(s.len);
                if (!in_ring) {
                        /* the ring's header (id, nr, head, tail, ...): the segments after it are its completions */
                        in_ring = s.addr == ctx && s.len == AIO_RING_HEADER && s.valid == AIO_RING_HEADER;
                        if (in_ring) {
                                memcpy(&head, bytes + 8, sizeof(head));
                                memcpy(&tail, bytes + 12, sizeof(tail));
                        }
                        continue;
                }
                if (s.addr < ctx + AIO_RING_HEADER || (s.addr - ctx - AIO_RING_HEADER) % IO_EVENT_SIZE)
                        break;
                uint64_t index = (s.addr - ctx - AIO_RING_HEADER) / IO_EVENT_SIZE;
                for (uint32_t at = 0; at + IO_EVENT_SIZE <= s.valid && n < max; at += IO_EVENT_SIZE, index++) {
                        memcpy(&events[n], bytes + at, IO_EVENT_SIZE);
                        bool pending = head <= tail ? index >= head && index < tail : index >= head || index < tail;
                        reaped[n++] = !pending;
                }
        }
        return n;
}
