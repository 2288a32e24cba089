/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "watch.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "outbuf.h"
#include "util.h"

void watch_threads_done(struct watch_threads *w) {
        free(w->tids);
        free(w->followed);
        w->tids = NULL;
        w->followed = NULL;
        w->n = w->cap = w->n_followed = w->cap_followed = 0;
}

static int add_tid(struct watch_threads *w, uint32_t tid) {
        for (size_t i = 0; i < w->n; i++)
                if (w->tids[i] == tid)
                        return 0;
        if (ARRAY_ROOM(w->tids, w->cap, w->n, 64) < 0)
                return -ENOMEM;
        w->tids[w->n++] = tid;
        return 1;
}

static int add_threads_of(struct watch_threads *w, pid_t pid) {
        char path[128];
        snprintf(path, sizeof(path), "%s/%d/task", w->proc_root, pid);
        DIR *dir = opendir(path);
        if (!dir)
                return -errno;
        struct dirent *de;
        int r = 0;
        while (r >= 0 && (de = readdir(dir)))
                if (de->d_name[0] != '.')
                        r = add_tid(w, (uint32_t) strtoul(de->d_name, NULL, 10));
        closedir(dir);
        return r < 0 ? r : 0;
}

void watch_threads_collect(struct watch_threads *w, const struct watch *entries, size_t n_entries,
                           void (*report)(void *userdata, const struct watch *entry, int error), void *userdata) {
        w->n = 0;
        for (size_t i = 0; i < n_entries; i++) {
                if (!(entries[i].keys & WATCH_KEY_PID))
                        continue;
                int r = add_threads_of(w, entries[i].pid);
                if (r < 0 && report)
                        report(userdata, &entries[i], r);
        }
        /* the followed processes that are still there */
        size_t kept = 0;
        for (size_t i = 0; i < w->n_followed; i++)
                if (add_threads_of(w, (pid_t) w->followed[i].tgid) >= 0)
                        w->followed[kept++] = w->followed[i];
        w->n_followed = kept;
}

static uint32_t field_of(const char *status, const char *key) {
        const char *t = strstr(status, key);
        return t ? (uint32_t) strtoul(t + strlen(key), NULL, 10) : 0;
}

/* Tgid and PPid of PROC_ROOT/PID/status; 0 when it cannot be read. */
static uint32_t status_ids(const char *proc_root, uint32_t pid, uint32_t *ret_ppid) {
        char path[128], buf[2048];
        snprintf(path, sizeof(path), "%s/%u/status", proc_root, pid);
        if (read_small_file(path, buf, sizeof(buf)) <= 0)
                return 0;
        if (ret_ppid)
                *ret_ppid = field_of(buf, "\nPPid:");
        return field_of(buf, "\nTgid:");
}

uint32_t watch_threads_root_of(const struct watch_threads *w, uint32_t tgid) {
        for (size_t i = 0; i < w->n_followed; i++)
                if (w->followed[i].tgid == tgid)
                        return w->followed[i].root;
        return 0;
}

static int add_followed(struct watch_threads *w, uint32_t tgid, uint32_t root) {
        if (watch_threads_root_of(w, tgid))
                return 0;
        if (ARRAY_ROOM(w->followed, w->cap_followed, w->n_followed, 16) < 0)
                return -ENOMEM;
        w->followed[w->n_followed++] = (struct watch_followed) { tgid, root };
        return 1;
}

/* The watched pid whose children the process's children are: itself, or the one it was followed from. */
static uint32_t follow_root(const struct watch_threads *w, const struct watch *entries, size_t n_entries, uint32_t tgid) {
        for (size_t i = 0; i < n_entries; i++)
                if (entries[i].children && (uint32_t) entries[i].pid == tgid)
                        return tgid;
        uint32_t root = watch_threads_root_of(w, tgid);
        for (size_t i = 0; root && i < n_entries; i++)
                if (entries[i].children && (uint32_t) entries[i].pid == root)
                        return root;
        return 0;
}

int watch_threads_find_children(struct watch_threads *w, const struct watch *entries, size_t n_entries) {
        bool any = false;
        for (size_t i = 0; i < n_entries; i++)
                any = any || entries[i].children;
        if (!any) {
                w->n_followed = 0;
                return 0;
        }
        DIR *dir = opendir(w->proc_root);
        if (!dir)
                return -errno;
        struct { uint32_t pid, ppid; } *procs = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        int r = 0;
        while (r >= 0 && (de = readdir(dir))) {
                char *end;
                unsigned long pid = strtoul(de->d_name, &end, 10);
                if (*end || pid == 0)
                        continue;
                uint32_t ppid = 0;
                if (status_ids(w->proc_root, (uint32_t) pid, &ppid) != pid)
                        continue; /* gone, or a thread */
                if (ARRAY_ROOM(procs, cap, n, 256) < 0) {
                        r = -ENOMEM;
                        break;
                }
                procs[n].pid = (uint32_t) pid;
                procs[n++].ppid = ppid;
        }
        closedir(dir);
        /* until nothing new: each process whose parent is a root or followed */
        for (bool grew = true; r >= 0 && grew;) {
                grew = false;
                for (size_t i = 0; r >= 0 && i < n; i++) {
                        uint32_t root = procs[i].ppid ? follow_root(w, entries, n_entries, procs[i].ppid) : 0;
                        if (root && !watch_threads_root_of(w, procs[i].pid) && follow_root(w, entries, n_entries, procs[i].pid) != procs[i].pid) {
                                r = add_followed(w, procs[i].pid, root);
                                grew = grew || r > 0;
                        }
                }
        }
        free(procs);
        return r < 0 ? r : 0;
}

int watch_threads_fork(struct watch_threads *w, const struct watch *entries, size_t n_entries, uint32_t parent_tid, uint32_t child_tid) {
        uint32_t tgid = status_ids(w->proc_root, child_tid, NULL);
        if (!tgid)
                return 0;
        for (size_t i = 0; i < n_entries; i++)
                if ((entries[i].keys & WATCH_KEY_PID) && (uint32_t) entries[i].pid == tgid)
                        return add_tid(w, child_tid);
        if (watch_threads_root_of(w, tgid))
                return add_tid(w, child_tid);
        if (tgid != child_tid)
                return 0; /* a thread of a process not watched by pid */
        uint32_t parent = status_ids(w->proc_root, parent_tid, NULL);
        uint32_t root = parent ? follow_root(w, entries, n_entries, parent) : 0;
        if (!root)
                return 0;
        int r = add_followed(w, tgid, root);
        if (r >= 0)
                r = add_tid(w, child_tid);
        return r > 0 ? 2 : r;
}

static int cmp_u32(const void *a, const void *b) {
        uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
        return x < y ? -1 : x > y;
}

static void put_or(struct outbuf *b) {
        if (b->len)
                outbuf_puts(b, " || ");
}

int watch_filter(const struct watch *entries, size_t n_entries, const uint32_t *tids, size_t n_tids, const char *tid_field, bool with_comm,
                 char **ret) {
        bool every = n_entries == 0;
        for (size_t i = 0; i < n_entries; i++)
                every = every || !(entries[i].keys & (WATCH_KEY_COMM | WATCH_KEY_PID));
        if (every) {
                /* an entry of units, cgroups, executables or users alone: the kernel's filter cannot say it, and
                 * user space decides */
                *ret = NULL;
                return 0;
        }
        struct outbuf b = {};
        for (size_t i = 0; with_comm && i < n_entries; i++) {
                const struct watch *w = &entries[i];
                if (!(w->keys & WATCH_KEY_COMM))
                        continue;
                put_or(&b);
                outbuf_puts(&b, w->comm_glob ? "comm ~ \"" : "comm == \"");
                outbuf_puts(&b, w->comm);
                outbuf_putc(&b, '"');
        }

        _cleanup_(freep) uint32_t *sorted = NULL;
        if (n_tids) {
                sorted = malloc(n_tids * sizeof(*sorted));
                if (!sorted) {
                        outbuf_free(&b);
                        return -ENOMEM;
                }
                memcpy(sorted, tids, n_tids * sizeof(*sorted));
                qsort(sorted, n_tids, sizeof(*sorted), cmp_u32);
        }
        for (size_t i = 0; i < n_tids;) {
                size_t j = i;
                while (j + 1 < n_tids && sorted[j + 1] <= sorted[j] + 1)
                        j++;
                put_or(&b);
                if (sorted[j] == sorted[i]) {
                        outbuf_puts(&b, tid_field);
                        outbuf_puts(&b, " == ");
                        outbuf_u64(&b, sorted[i]);
                } else {
                        outbuf_putc(&b, '(');
                        outbuf_puts(&b, tid_field);
                        outbuf_puts(&b, " >= ");
                        outbuf_u64(&b, sorted[i]);
                        outbuf_puts(&b, " && ");
                        outbuf_puts(&b, tid_field);
                        outbuf_puts(&b, " <= ");
                        outbuf_u64(&b, sorted[j]);
                        outbuf_putc(&b, ')');
                }
                i = j + 1;
        }
        if (b.len == 0)
                /* watched pids that are all gone: nothing may match, which is not the same as no filter */
                outbuf_puts(&b, "common_pid < 0");
        outbuf_putc(&b, 0);
        if (b.failed) {
                outbuf_free(&b);
                return -ENOMEM;
        }
        if (b.len > FILTER_MAX) {
                outbuf_free(&b);
                return -E2BIG;
        }
        *ret = b.data;
        return 0;
}

static bool has_pid_watch(const struct watch *entries, size_t n_entries) {
        for (size_t i = 0; i < n_entries; i++)
                if (entries[i].keys & WATCH_KEY_PID)
                        return true;
        return false;
}

int watch_filters_build(const struct watch *entries, size_t n_entries, const struct watch_threads *w, struct watch_filters *ret) {
        struct watch_filters f = {};
        int r = watch_filter(entries, n_entries, w->tids, w->n, "common_pid", true, &f.syscalls);
        /* The fork event is always there, so that a reload can start watching pids; it matches nothing until. */
        if (r >= 0 && has_pid_watch(entries, n_entries))
                r = watch_filter(entries, n_entries, w->tids, w->n, "parent_pid", false, &f.fork);
        else if (r >= 0 && !(f.fork = strdup("common_pid < 0")))
                r = -ENOMEM;
        /* A watched process's end: the exit of its last thread (the filter's fields are in that event too). */
        if (r >= 0 && asprintf(&f.process_exit, f.syscalls ? "group_dead == 1 && (%s)" : "group_dead == 1",
                               f.syscalls) < 0) {
                f.process_exit = NULL;
                r = -ENOMEM;
        }
        if (r >= 0 && f.process_exit && strlen(f.process_exit) >= FILTER_MAX)
                r = -E2BIG;
        if (r < 0) {
                watch_filters_done(&f);
                return r;
        }
        *ret = f;
        return 0;
}

void watch_filters_done(struct watch_filters *f) {
        free(f->syscalls);
        free(f->fork);
        free(f->process_exit);
        *f = (struct watch_filters) {};
}

bool watch_comms_fit_filter(const struct watch *entries, size_t n_entries) {
        char *f = NULL;
        int r = watch_filter(entries, n_entries, NULL, 0, "common_pid", true, &f);
        free(f);
        return r != -E2BIG;
}

void watch_describe(const struct watch *entries, size_t n_entries, char *buf, size_t size) {
        size_t n = 0;
        buf[0] = 0;
        if (n_entries == 0)
                snprintf(buf, size, "every process");
        for (size_t i = 0; i < n_entries && n < size; i++) {
                if (i)
                        n += (size_t) snprintf(buf + n, size - n, ", ");
                if (n < size)
                        n += watch_entry_describe(&entries[i], buf + n, size - n);
        }
}

int watch_plan_build(const struct watch *entries, size_t n_entries, struct watch_plan *ret) {
        if (watch_combined_entries(entries, n_entries) > CAPTURE_MAX_COMBINED)
                return -E2BIG;
        struct watch_plan p = { .n = n_entries };
        if (n_entries && !(p.bits = calloc(n_entries, sizeof(*p.bits))))
                return -ENOMEM;
        unsigned next = _CAPTURE_CLASS_MAX;
        for (size_t i = 0; i < n_entries; i++) {
                const struct watch *w = &entries[i];
                uint64_t bit = watch_entry_combined(w) ? UINT64_C(1) << next++
                                                       : UINT64_C(1) << watch_key_of(w->keys)->class;
                p.bits[i] = bit;
                p.all |= bit;
                for (size_t k = 0; k < watch_n_keys; k++)
                        if (watch_keys[k].matches && (w->keys & watch_keys[k].flag))
                                p.need[watch_keys[k].class] |= bit;
                if (w->children)
                        p.follow |= bit;
        }
        p.n_combined = next - _CAPTURE_CLASS_MAX;
        *ret = p;
        return 0;
}

void watch_plan_done(struct watch_plan *p) {
        free(p->bits);
        *p = (struct watch_plan) {};
}

uint64_t watch_plan_follow_of(const struct watch_plan *p, const struct watch *entries, size_t n_entries, pid_t pid) {
        uint64_t bits = 0;
        for (size_t i = 0; i < p->n && i < n_entries; i++)
                if (entries[i].children && entries[i].pid == pid)
                        bits |= p->bits[i];
        return bits;
}
