/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "inflight.h"

#include <errno.h>
#include <stdlib.h>

#include "util.h"

#define NIL INFLIGHT_NIL

static uint32_t key_hash(uint32_t pid, uint64_t ctx, uint64_t iocb) {
        return (uint32_t) hash_u64(iocb ^ hash_u64(ctx ^ ((uint64_t) pid << 32)));
}

static size_t bucket_of(const struct inflight *f, uint32_t hash) {
        return hash & (f->n_buckets - 1);
}

uint32_t inflight_find(const struct inflight *f, uint32_t pid, uint64_t ctx, uint64_t iocb) {
        for (uint32_t n = f->buckets[bucket_of(f, key_hash(pid, ctx, iocb))]; n != NIL; n = f->nodes[n].hnext) {
                const struct request *r = &f->nodes[n].r;
                if (r->iocb == iocb && r->ctx == ctx && r->pid == pid)
                        return n;
        }
        return NIL;
}

static void rehash(struct inflight *f) {
        for (size_t b = 0; b < f->n_buckets; b++)
                f->buckets[b] = NIL;
        for (uint32_t n = f->oldest; n != NIL; n = f->nodes[n].gnext) {
                size_t b = bucket_of(f, f->nodes[n].hash);
                f->nodes[n].hnext = f->buckets[b];
                f->buckets[b] = n;
        }
}

/* Room for cap nodes, the new ones on the free list, and buckets as many. */
static int resize(struct inflight *f, size_t cap) {
        struct inflight_node *nodes = realloc(f->nodes, cap * sizeof(*nodes));
        if (!nodes)
                return -ENOMEM;
        f->nodes = nodes;
        for (size_t i = f->cap; i < cap; i++)
                nodes[i].gnext = i + 1 < cap ? (uint32_t) (i + 1) : f->free_head;
        f->free_head = (uint32_t) f->cap;
        f->cap = cap;
        size_t want = f->n_buckets;
        while (want < cap)
                want *= 2;
        if (want != f->n_buckets) {
                uint32_t *b = realloc(f->buckets, want * sizeof(*b));
                if (!b)
                        return 0; /* chains get longer, nothing is lost */
                f->buckets = b;
                f->n_buckets = want;
                rehash(f);
        }
        return 0;
}

int inflight_init(struct inflight *f, size_t limit) {
        *f = (struct inflight) { .limit = MAX(limit, (size_t) 1), .free_head = NIL, .oldest = NIL, .newest = NIL,
                                 .n_buckets = 64 };
        f->buckets = malloc(f->n_buckets * sizeof(*f->buckets));
        if (!f->buckets)
                return -ENOMEM;
        for (size_t b = 0; b < f->n_buckets; b++)
                f->buckets[b] = NIL;
        /* the first nodes, then doubling as requests pile up */
        if (resize(f, MIN(f->limit, (size_t) 1024)) < 0) {
                inflight_done(f);
                return -ENOMEM;
        }
        return 0;
}

void inflight_done(struct inflight *f) {
        for (uint32_t n = f->nodes ? f->oldest : NIL; n != NIL; n = f->nodes[n].gnext)
                path_str_unref(f->nodes[n].r.path);
        free(f->nodes);
        free(f->buckets);
        *f = (struct inflight) {};
}

int inflight_reserve(struct inflight *f) {
        if (f->used >= f->limit)
                return -ENOSPC;
        if (f->free_head != NIL)
                return 0;
        size_t cap = MIN(f->cap * 2, f->limit);
        if (cap <= f->cap || resize(f, cap) < 0)
                return -ENOSPC;
        return f->free_head != NIL ? 0 : -ENOSPC;
}

struct request *inflight_insert(struct inflight *f, struct inflight_owner *o, uint32_t pid, uint64_t ctx,
                                uint64_t iocb) {
        uint32_t n = f->free_head;
        struct inflight_node *x = &f->nodes[n];
        f->free_head = x->gnext;
        x->r = (struct request) { .pid = pid, .ctx = ctx, .iocb = iocb };
        x->hash = key_hash(pid, ctx, iocb);
        size_t b = bucket_of(f, x->hash);
        x->hnext = f->buckets[b];
        f->buckets[b] = n;
        x->gprev = f->newest;
        x->gnext = NIL;
        if (f->newest != NIL)
                f->nodes[f->newest].gnext = n;
        else
                f->oldest = n;
        f->newest = n;
        x->pprev = o->tail;
        x->pnext = NIL;
        if (o->tail != NIL)
                f->nodes[o->tail].pnext = n;
        else
                o->head = n;
        o->tail = n;
        o->n++;
        f->used++;
        return &x->r;
}

void inflight_remove(struct inflight *f, uint32_t n, struct inflight_owner *o, struct request *ret) {
        struct inflight_node *x = &f->nodes[n];
        uint32_t *link = &f->buckets[bucket_of(f, x->hash)];
        while (*link != n)
                link = &f->nodes[*link].hnext;
        *link = x->hnext;
        if (x->gprev != NIL)
                f->nodes[x->gprev].gnext = x->gnext;
        else
                f->oldest = x->gnext;
        if (x->gnext != NIL)
                f->nodes[x->gnext].gprev = x->gprev;
        else
                f->newest = x->gprev;
        if (o) {
                if (x->pprev != NIL)
                        f->nodes[x->pprev].pnext = x->pnext;
                else
                        o->head = x->pnext;
                if (x->pnext != NIL)
                        f->nodes[x->pnext].pprev = x->pprev;
                else
                        o->tail = x->pprev;
                o->n--;
        }
        *ret = x->r;
        x->gnext = f->free_head;
        f->free_head = n;
        f->used--;
}
