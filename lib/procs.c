/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "procs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
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

void procs_identify(struct proc *p, const struct proc_identity *id) {
        p->start_time = id->start_time;
        p->ns_pid = id->ns_pid == p->pid ? 0 : id->ns_pid;
        p->cgroup[0] = p->unit[0] = 0;
        if (id->cgroup && id->cgroup_len < CGROUP_PATH_MAX) {
                memcpy(p->cgroup, id->cgroup, id->cgroup_len);
                p->cgroup[id->cgroup_len] = 0;
                (void) cgroup_path_unit(p->cgroup, p->unit);
        }
}

/* A process's start, in clock ticks since boot (which count the time suspended), from PROC_ROOT/PID/stat. */
static int proc_start_ticks(const char *proc_root, uint32_t pid, uint64_t *ret) {
        char path[128], buf[1024];
        snprintf(path, sizeof(path), "%s/%u/stat", proc_root, pid);
        if (read_small_file(path, buf, sizeof(buf)) <= 0)
                return -ENOENT;
        const char *s = strrchr(buf, ')'); /* past the name, which may hold anything */
        unsigned long long ticks;
        /* the 22nd field, starttime; the 3rd (the state) follows the name */
        if (!s || sscanf(s + 1, " %*c" "%*s%*s%*s%*s%*s%*s" "%*s%*s%*s%*s%*s%*s" "%*s%*s%*s%*s%*s%*s" " %llu",
                         &ticks) != 1)
                return -EBADMSG;
        *ret = ticks;
        return 0;
}

/* The latest CLOCK_MONOTONIC time at which a process that started in tick `ticks` may have started. */
static uint64_t start_at_most(uint64_t ticks) {
        long hz = sysconf(_SC_CLK_TCK);
        uint64_t tick = 1000000000ull / (uint64_t) (hz > 0 ? hz : 100);
        struct timespec boot, mono;
        clock_gettime(CLOCK_BOOTTIME, &boot);
        clock_gettime(CLOCK_MONOTONIC, &mono);
        int64_t suspended = (boot.tv_sec - mono.tv_sec) * 1000000000ll + (boot.tv_nsec - mono.tv_nsec);
        return (ticks + 1) * tick - (uint64_t) MAX(suspended, 0);
}

/* Read from /proc, what names a process is its own only if the process there now started before the record
 * that asked (one started since took the pid of one gone) and was still there once read. */
static bool identity_from_proc(struct procs *ps, struct proc *p, uint64_t record_time) {
        uint64_t ticks, ticks_after;
        if (proc_start_ticks(ps->proc_root, p->pid, &ticks) < 0 || start_at_most(ticks) > record_time)
                return false;
        if (proc_cgroup(ps->proc_root, p->pid, p->cgroup) >= 0)
                (void) cgroup_path_unit(p->cgroup, p->unit);
        if (proc_ns_pid(ps->proc_root, p->pid, &p->ns_pid) >= 0 && p->ns_pid == p->pid)
                p->ns_pid = 0;
        if (proc_start_ticks(ps->proc_root, p->pid, &ticks_after) < 0 || ticks_after != ticks) {
                p->cgroup[0] = p->unit[0] = 0;
                p->ns_pid = 0;
                return false;
        }
        return true;
}

struct proc *procs_get(struct procs *ps, uint32_t pid, const char *comm, uint64_t interval_start, bool prime,
                       const struct proc_identity *id, uint64_t record_time) {
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
        if (id)
                procs_identify(p, id);
        else if (ps->proc_root && !identity_from_proc(ps, p, record_time))
                ps->unidentified++;
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
