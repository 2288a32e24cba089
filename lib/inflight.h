/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Requests submitted and not yet reaped, keyed by (process, context, iocb address): what the submit said, so a
 * completion can be checked against it (the kernel copies aio_data into the io_event) and named with its fd. */
struct inflight {
        uint32_t pid; /* 0: empty */
        uint32_t fd;
        uint64_t ctx;
        uint64_t iocb;
        uint64_t data;
        uint64_t submit_time;
        uint16_t opcode;
};

struct inflight_table {
        struct inflight *slots;
        size_t cap; /* power of two; never more than 3/4 used */
        size_t used;
        size_t limit;
};

int inflight_table_init(struct inflight_table *t, size_t limit);
void inflight_table_done(struct inflight_table *t);
/* -ENOSPC when the table holds its limit; an existing key is overwritten (the iocb was resubmitted). */
int inflight_add(struct inflight_table *t, const struct inflight *req);
/* Remove and return; false when not there. */
bool inflight_take(struct inflight_table *t, uint32_t pid, uint64_t ctx, uint64_t iocb, struct inflight *ret);
/* Forget every request of a context (io_destroy), or of a process when ctx is 0; returns how many. */
size_t inflight_drop(struct inflight_table *t, uint32_t pid, uint64_t ctx);
