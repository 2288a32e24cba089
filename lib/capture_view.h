/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture.h"
#include "remote.h"

/* The captured part of one record (see capture.h), checked once, then asked for regions as a memory reader is:
 * the handlers do not know which of the two sources answers them. */
struct capture_view {
        const uint8_t *data; /* the first segment */
        size_t size;         /* bytes of segments */
        uint32_t n_segments;
        uint16_t flags;
        char comm[16]; /* NUL-terminated */
        const uint8_t *files; /* io_submit: n_files struct capture_iocb_file, by iocb index */
        uint32_t n_files;
        /* flags & CAPTURE_F_ENTER: the call's enter */
        uint32_t enter_cpu;
        uint64_t enter_time;
        uint64_t args[6];
        /* where the last region was found: regions are mostly asked for in the order they were captured */
        size_t cursor_off;
        uint32_t cursor_idx;
};

/* The capture that follows a tracepoint record of record_size bytes in a sample's raw data.
 * -ENOENT: none (the kernel's own record); -EBADMSG: one that does not hold together. */
int capture_view_parse(const uint8_t *raw, size_t raw_size, size_t record_size, struct capture_view *ret);

/* Fill each chunk from the capture: MEM_OK with its bytes, MEM_FAULT where the program's read faulted, and
 * MEM_NOT_READ / MEM_NOT_CAPTURED where the program did not capture it (a bound, or no arguments kept). */
void capture_view_fill(struct capture_view *v, struct remote_chunk *chunks, size_t n);

/* The open file iocb i's fd named during the call, and what the kernel said it used itself; false when the
 * capture does not know it. */
bool capture_view_file(const struct capture_view *v, unsigned i, struct capture_iocb_file *ret);

/* The completions captured from ctx's AIO ring (CAPTURE_F_RING), in ring order, at most max, each with whether
 * the ring's head had passed it when it was captured (reaped): how many. */
size_t capture_view_ring(const struct capture_view *v, uint64_t ctx, struct io_event *events, bool *reaped,
                         size_t max);
