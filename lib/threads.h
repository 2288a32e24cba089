/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"

/* Per-thread state: the sys_enter waiting for its sys_exit, the newest record the rings hold for the thread,
 * and its command name.  Open addressing, sized up front; it grows only when threads pile up. */
struct thread {
        uint32_t tid; /* 0: empty slot */
        uint32_t pid;
        uint64_t newest_seen; /* newest record time indexed from the rings */
        uint64_t enter_time;
        const struct event_desc *enter; /* NULL: no call pending */
        uint64_t args[AIO_ARGS_MAX];
        uint32_t enter_cpu;
        int last_tp;      /* tracepoint and perf event id of the newest record processed: */
        uint64_t last_id; /* an event set replaced under a ring doubles records for a moment */
        bool comm_known;
        char comm[16];
};

struct thread_table {
        struct thread *slots;
        size_t cap; /* a power of two */
        size_t used;
};

int thread_table_init(struct thread_table *t, size_t cap);
void thread_table_done(struct thread_table *t);
struct thread *thread_find(struct thread_table *t, uint32_t tid);
/* Find or insert; NULL only when memory for growing ran out. */
struct thread *thread_get(struct thread_table *t, uint32_t tid);
/* Drop idle threads (no call pending, nothing newer than `processed_up_to` in the rings). */
void thread_table_sweep(struct thread_table *t, uint64_t processed_up_to);
