/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "idtable.h"

/* Per-thread state, in an id_table keyed by tid: the sys_enter waiting for its sys_exit, the newest record the
 * rings hold for the thread, and its command name. */
struct thread {
        uint32_t tid; /* the key: first */
        uint32_t pid;
        uint64_t newest_seen; /* newest record time indexed from the rings (not kept with the capture) */
        uint64_t enter_time;
        const struct event_desc *enter; /* NULL: no call pending */
        uint64_t args[AIO_ARGS_MAX];
        uint32_t enter_cpu;
        int last_tp;      /* tracepoint and perf event id of the newest record processed: */
        uint64_t last_id; /* an event set replaced under a ring doubles records for a moment */
        uint64_t last_exit_time; /* of its last call's record: the time of the capture's records of more of its items */
        bool comm_known;
        uint8_t selected;           /* the engine's select callback said: 0 not asked, 1 watched, 2 not */
        uint32_t select_generation; /* of the engine's selection it said it for */
        char comm[16];
};

static inline int thread_table_init(struct id_table *t, size_t cap) {
        return id_table_init(t, sizeof(struct thread), cap);
}
static inline struct thread *thread_find(struct id_table *t, uint32_t tid) {
        return id_table_find(t, tid);
}
/* Find or insert; NULL only when memory for growing ran out. */
static inline struct thread *thread_get(struct id_table *t, uint32_t tid) {
        return id_table_get(t, tid, NULL);
}
/* Drop idle threads (no call pending, nothing newer than `processed_up_to` in the rings as far as they were
 * indexed: with the capture they are not, and a thread goes once no call of it is pending; its next record makes
 * it again, with the name the capture took).  When most are still live the table grows as well: otherwise every
 * drain would sweep a table it cannot shrink. */
void thread_table_sweep(struct id_table *t, uint64_t processed_up_to);
