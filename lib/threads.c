/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "threads.h"

static bool idle(void *entry, void *userdata) {
        const struct thread *th = entry;
        return !th->enter && th->newest_seen <= *(const uint64_t *) userdata;
}

void thread_table_sweep(struct id_table *t, uint64_t processed_up_to) {
        id_table_filter(t, idle, &processed_up_to);
        if (t->used * 2 > t->cap)
                (void) id_table_grow(t);
}
