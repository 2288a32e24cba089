/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "procs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pidns.h"
#include "util.h"

int procs_init(struct procs *ps, const char *proc_root) {
        *ps = (struct procs) { .proc_root = proc_root };
        return id_table_init(&ps->table, sizeof(struct proc), 64);
}

static bool free_latency(void *entry, void *userdata) {
        free(((struct proc *) entry)->latency);
        return false;
}

void procs_done(struct procs *ps) {
        if (ps->table.slots)
                id_table_filter(&ps->table, free_latency, NULL);
        id_table_done(&ps->table);
}

struct proc *procs_find(struct procs *ps, uint32_t pid) {
        return id_table_find(&ps->table, pid); /* pid 0: no process of ours */
}

static void comm_copy(char dst[static 16], const char *src) {
        size_t n = src ? strnlen(src, 15) : 0;
        memcpy(dst, src ? src : "", n);
        memset(dst + n, 0, 16 - n); /* all 16 bytes defined: a formatter reads them at once */
}

struct proc *procs_get(struct procs *ps, uint32_t pid, const char *comm, uint64_t interval_start, bool prime) {
        bool fresh;
        struct proc *p = id_table_get(&ps->table, pid, &fresh);
        if (!p || !fresh)
                return p;
        struct histogram *h = malloc(sizeof(*h));
        if (!h) {
                id_table_remove(&ps->table, p);
                return NULL;
        }
        histogram_reset(h);
        *p = (struct proc) { .pid = pid, .aio = { INFLIGHT_NIL, INFLIGHT_NIL, 0 },
                             .uring = { INFLIGHT_NIL, INFLIGHT_NIL, 0 }, .latency = h,
                             .interval_start = interval_start };
        if (ps->proc_root && proc_cgroup(ps->proc_root, pid, p->cgroup) >= 0)
                (void) cgroup_path_unit(p->cgroup, p->unit);
        if (ps->proc_root && proc_ns_pid(ps->proc_root, pid, &p->ns_pid) >= 0 && p->ns_pid == pid)
                p->ns_pid = 0;
        /* Files it opened before tracing began, and closes before a request's path is looked up (a database
         * reopening its tablespaces), keep their paths: looked at after this drain, a few at a time. */
        if (prime && ps->prime_n < PROCS_PRIME_QUEUE) {
                ps->prime_queue[(ps->prime_head + ps->prime_n++) % PROCS_PRIME_QUEUE] = pid;
                p->prime_queued = true;
        }
        comm_copy(p->comm, comm && comm[0] ? comm : "?");
        return p;
}

void procs_remove(struct procs *ps, struct proc *p) {
        free(p->latency);
        id_table_remove(&ps->table, p);
}

struct filter {
        bool (*fn)(struct proc *p, void *userdata);
        void *userdata;
};

static bool filter_one(void *entry, void *userdata) {
        const struct filter *f = userdata;
        struct proc *p = entry;
        if (!f->fn(p, f->userdata))
                return false;
        free(p->latency);
        return true;
}

void procs_filter(struct procs *ps, bool (*fn)(struct proc *p, void *userdata), void *userdata) {
        id_table_filter(&ps->table, filter_one, &(struct filter) { fn, userdata });
}

/* Each process in the queue in turn, a chunk of its files at a time; one that has more goes to the back.  At
 * most a quarter of the cache's room for one process: the others' files keep theirs. */
void procs_prime(struct procs *ps, struct fdpath_cache *paths) {
        size_t budget = PROCS_PRIME_PER_DRAIN, per_process = paths->cap / 4;
        while (budget && ps->prime_n) {
                uint32_t pid = ps->prime_queue[ps->prime_head];
                ps->prime_head = (ps->prime_head + 1) % PROCS_PRIME_QUEUE;
                ps->prime_n--;
                struct proc *p = procs_find(ps, pid);
                if (!p || !p->prime_queued)
                        continue; /* gone since */
                bool done;
                size_t n = fdpath_prime(paths, pid, &p->prime_pos,
                                        MIN(MIN(budget, (size_t) PROCS_PRIME_CHUNK), per_process - p->primed), &done);
                budget -= MIN(n, budget);
                p->primed += (uint32_t) n;
                if (done || p->primed >= per_process)
                        p->prime_queued = false;
                else
                        ps->prime_queue[(ps->prime_head + ps->prime_n++) % PROCS_PRIME_QUEUE] = pid;
        }
}
