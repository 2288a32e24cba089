/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "threads.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int thread_table_init(struct thread_table *t, size_t cap) {
        size_t c = 64;
        while (c < cap)
                c *= 2;
        struct thread *slots = calloc(c, sizeof(*slots));
        if (!slots)
                return -ENOMEM;
        *t = (struct thread_table) { .slots = slots, .cap = c };
        return 0;
}

void thread_table_done(struct thread_table *t) {
        free(t->slots);
        *t = (struct thread_table) {};
}

static struct thread *probe(struct thread *slots, size_t cap, uint32_t tid) {
        size_t mask = cap - 1;
        for (size_t i = hash_u64(tid) & mask;; i = (i + 1) & mask)
                if (slots[i].tid == tid || slots[i].tid == 0)
                        return &slots[i];
}

struct thread *thread_find(struct thread_table *t, uint32_t tid) {
        struct thread *th = probe(t->slots, t->cap, tid);
        return th->tid == tid ? th : NULL;
}

static int rehash(struct thread_table *t, size_t cap, uint64_t keep_after, bool sweep) {
        struct thread *slots = calloc(cap, sizeof(*slots));
        if (!slots)
                return -ENOMEM;
        size_t used = 0;
        for (size_t i = 0; i < t->cap; i++) {
                const struct thread *th = &t->slots[i];
                if (th->tid == 0)
                        continue;
                if (sweep && !th->enter && th->newest_seen <= keep_after)
                        continue;
                *probe(slots, cap, th->tid) = *th;
                used++;
        }
        free(t->slots);
        t->slots = slots;
        t->cap = cap;
        t->used = used;
        return 0;
}

struct thread *thread_get(struct thread_table *t, uint32_t tid) {
        struct thread *th = probe(t->slots, t->cap, tid);
        if (th->tid == tid)
                return th;
        if ((t->used + 1) * 4 > t->cap * 3) {
                if (rehash(t, t->cap * 2, 0, false) < 0)
                        return NULL;
                th = probe(t->slots, t->cap, tid);
        }
        *th = (struct thread) { .tid = tid };
        t->used++;
        return th;
}

void thread_table_sweep(struct thread_table *t, uint64_t processed_up_to) {
        /* Rebuilding in place of deleting keeps the probe chains valid without tombstones.  When most threads
         * are still live, grow as well: otherwise every drain would rebuild a table it cannot shrink. */
        size_t cap = t->cap;
        if (rehash(t, cap, processed_up_to, true) == 0 && t->used * 2 > t->cap)
                (void) rehash(t, cap * 2, 0, false);
}
