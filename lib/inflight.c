/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "inflight.h"

#include <errno.h>
#include <stdlib.h>

#include "util.h"

int inflight_table_init(struct inflight_table *t, size_t limit) {
        size_t cap = 64;
        while (cap * 3 / 4 < limit)
                cap *= 2;
        struct inflight *slots = calloc(cap, sizeof(*slots));
        if (!slots)
                return -ENOMEM;
        *t = (struct inflight_table) { .slots = slots, .cap = cap, .limit = limit };
        return 0;
}

void inflight_table_done(struct inflight_table *t) {
        free(t->slots);
        *t = (struct inflight_table) {};
}

static size_t slot_of(const struct inflight_table *t, uint32_t pid, uint64_t ctx, uint64_t iocb) {
        return hash_u64(iocb ^ hash_u64(ctx ^ ((uint64_t) pid << 32))) & (t->cap - 1);
}

static struct inflight *probe(struct inflight_table *t, uint32_t pid, uint64_t ctx, uint64_t iocb) {
        size_t mask = t->cap - 1;
        for (size_t i = slot_of(t, pid, ctx, iocb);; i = (i + 1) & mask) {
                struct inflight *s = &t->slots[i];
                if (s->pid == 0 || (s->pid == pid && s->ctx == ctx && s->iocb == iocb))
                        return s;
        }
}

int inflight_add(struct inflight_table *t, const struct inflight *req) {
        struct inflight *s = probe(t, req->pid, req->ctx, req->iocb);
        if (s->pid == 0) {
                if (t->used >= t->limit)
                        return -ENOSPC;
                t->used++;
        }
        *s = *req;
        return 0;
}

/* Backward-shift deletion: linear probing stays correct without tombstones. */
static void remove_slot(struct inflight_table *t, size_t i) {
        size_t mask = t->cap - 1;
        for (size_t j = (i + 1) & mask; t->slots[j].pid != 0; j = (j + 1) & mask) {
                const struct inflight *s = &t->slots[j];
                size_t home = slot_of(t, s->pid, s->ctx, s->iocb);
                /* Move s into the hole at i unless its home lies cyclically in (i, j]. */
                bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
                if (!stays) {
                        t->slots[i] = *s;
                        i = j;
                }
        }
        t->slots[i].pid = 0;
        t->used--;
}

bool inflight_take(struct inflight_table *t, uint32_t pid, uint64_t ctx, uint64_t iocb, struct inflight *ret) {
        struct inflight *s = probe(t, pid, ctx, iocb);
        if (s->pid == 0)
                return false;
        *ret = *s;
        remove_slot(t, (size_t) (s - t->slots));
        return true;
}

size_t inflight_drop(struct inflight_table *t, uint32_t pid, uint64_t ctx) {
        size_t dropped = 0;
        for (size_t i = 0; i < t->cap;) {
                const struct inflight *s = &t->slots[i];
                if (s->pid == pid && (ctx == 0 || s->ctx == ctx)) {
                        remove_slot(t, i);
                        dropped++;
                        continue; /* a later entry may have shifted into i */
                }
                i++;
        }
        return dropped;
}
