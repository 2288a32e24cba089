/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* A table of requests in flight, keyed by (process, context, request): one per source (AIO's contexts and
 * iocbs, io_uring's rings and requests).  Every request is on two lists, oldest first: the table's and its
 * owner's (a process's), so that the oldest can be evicted and a process's ended without a search.  Nodes come
 * from an array that grows by doubling up to a limit: no allocation per request. */

#include <stddef.h>
#include <stdint.h>

#include "request.h"

#define INFLIGHT_NIL UINT32_MAX

/* One owner's requests in one table, oldest first. */
struct inflight_owner {
        uint32_t head, tail;
        uint32_t n;
};

struct inflight_node {
        struct request r;
        uint32_t hash;         /* of (pid, ctx, iocb), kept: removal and rehashing need not compute it again */
        uint32_t hnext;        /* bucket chain */
        uint32_t gprev, gnext; /* the table's, oldest first; gnext also links the free list */
        uint32_t pprev, pnext; /* its owner's, oldest first */
};

struct inflight {
        struct inflight_node *nodes;
        size_t cap, limit;
        uint32_t free_head;
        uint32_t oldest, newest;
        uint32_t *buckets;
        size_t n_buckets; /* a power of two */
        size_t used;
};

int inflight_init(struct inflight *f, size_t limit);
/* Drops the paths the requests still hold. */
void inflight_done(struct inflight *f);

/* The node of (pid, ctx, iocb), or INFLIGHT_NIL. */
uint32_t inflight_find(const struct inflight *f, uint32_t pid, uint64_t ctx, uint64_t iocb);
/* Room for one more: 0, or -ENOSPC at the limit (or when the array could not grow). */
int inflight_reserve(struct inflight *f);
/* A new node for (pid, ctx, iocb) on o's list, room reserved: its request zeroed but for those three. */
struct request *inflight_insert(struct inflight *f, struct inflight_owner *o, uint32_t pid, uint64_t ctx,
                                uint64_t iocb);
/* Node n off every list, its request moved to *ret (o: its owner's list, NULL when the owner is gone). */
void inflight_remove(struct inflight *f, uint32_t n, struct inflight_owner *o, struct request *ret);

static inline struct request *inflight_request(const struct inflight *f, uint32_t n) {
        return &f->nodes[n].r;
}
/* The next in the table's order, and in its owner's. */
static inline uint32_t inflight_next(const struct inflight *f, uint32_t n) {
        return f->nodes[n].gnext;
}
static inline uint32_t inflight_owner_next(const struct inflight *f, uint32_t n) {
        return f->nodes[n].pnext;
}
