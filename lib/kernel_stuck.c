/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "kernel_stuck.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tracker.h"
#include "uring.h"
#include "util.h"

static int cmp_entry(const void *a, const void *b) {
        const struct stuck_entry *x = a, *y = b;
        if (x->ctx != y->ctx)
                return x->ctx < y->ctx ? -1 : 1;
        if (x->id != y->id)
                return x->id < y->id ? -1 : 1;
        if (x->kind != y->kind)
                return x->kind < y->kind ? -1 : 1;
        return (x->submit_time > y->submit_time) - (x->submit_time < y->submit_time);
}

static bool clear_kernel_stuck(struct proc *p, void *userdata) {
        (void) userdata;
        p->kernel_stuck = 0;
        return false;
}

void kernel_stuck_begin(struct kernel_stuck *k, struct tracker *t, uint64_t stuck_after_ns, uint64_t now) {
        k->n_now = 0;
        k->time = now;
        k->before = now > stuck_after_ns ? now - stuck_after_ns : 0;
        procs_filter(&t->procs, clear_kernel_stuck, NULL);
}

int kernel_stuck_add(struct kernel_stuck *k, struct tracker *t, const struct sum_key *key, const struct sum_req *r) {
        /* completed already (seen in its AIO ring), or with no completion asked for: not known stuck */
        if (r->submit_time >= k->before || (r->flags & (SUM_RING_SEEN | SUM_CQE_SKIP)))
                return 0;
        if (ARRAY_ROOM(k->now, k->cap_now, k->n_now, 64) < 0)
                return -ENOMEM;
        uint32_t pid = r->seen_pid ? r->seen_pid : r->tgid;
        k->now[k->n_now++] = (struct stuck_entry) { .ctx = key->ctx, .id = key->id, .submit_time = r->submit_time,
                                                     .kind = key->kind, .pid = pid, .data = r->data,
                                                     .opcode = r->opcode };
        struct proc *p = procs_find(&t->procs, pid);
        if (p)
                p->kernel_stuck++;
        return 0;
}

/* A record of what the kernel's map holds of the request: its process, op, context or ring, iocb or request,
 * data and how long it has been in flight; no fd, file or offset (the summaries keep none). */
static void tell(struct tracker *t, const struct stuck_entry *e, uint64_t now) {
        /* a process not summed yet in an interval is not known yet: named now */
        struct proc *p = tracker_proc(t, e->pid, NULL, now);
        bool uring = e->kind == SUM_URING;
        struct request told = {
                .pid = e->pid, .ctx = e->ctx, .iocb = e->id, .data = e->data, .submit_time = e->submit_time,
                .end_time = now, .submit_known = true, .interface = uring ? REQ_IO_URING : REQ_AIO,
                .opcode = uring ? uring_request_opcode((uint8_t) e->opcode, 0) : e->opcode,
                .no_file = true, .no_offset = true, .path_state = PATH_NONE, .kind = REQ_STUCK, .stuck_told = true,
        };
        t->stats->stuck++;
        tracker_emit(t, p, &told);
}

void kernel_stuck_end(struct kernel_stuck *k, struct tracker *t) {
        if (k->n_now)
                qsort(k->now, k->n_now, sizeof(*k->now), cmp_entry);
        size_t j = 0;
        for (size_t i = 0; i < k->n_now; i++) {
                while (j < k->n_told && cmp_entry(&k->told[j], &k->now[i]) < 0)
                        j++; /* ended since the last look */
                if (j < k->n_told && cmp_entry(&k->told[j], &k->now[i]) == 0)
                        continue; /* told at an earlier look */
                tell(t, &k->now[i], k->time);
        }
        /* this look's are the ones told from now on */
        struct stuck_entry *swap = k->told;
        size_t cap = k->cap_told;
        k->told = k->now;
        k->n_told = k->n_now;
        k->cap_told = k->cap_now;
        k->now = swap;
        k->cap_now = cap;
        k->n_now = 0;
}

void kernel_stuck_done(struct kernel_stuck *k) {
        free(k->told);
        free(k->now);
        *k = (struct kernel_stuck) {};
}
