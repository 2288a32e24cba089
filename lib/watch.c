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
        w->tids = NULL;
        w->n = w->cap = 0;
}

static int add_tid(struct watch_threads *w, uint32_t tid) {
        for (size_t i = 0; i < w->n; i++)
                if (w->tids[i] == tid)
                        return 0;
        if (w->n == w->cap) {
                size_t cap = w->cap ? 2 * w->cap : 64;
                uint32_t *p = realloc(w->tids, cap * sizeof(*p));
                if (!p)
                        return -ENOMEM;
                w->tids = p;
                w->cap = cap;
        }
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

void watch_threads_collect(struct watch_threads *w, const struct config *c,
                           void (*report)(void *userdata, const struct watch *entry, int error), void *userdata) {
        w->n = 0;
        for (size_t i = 0; i < c->n_watch; i++) {
                if (c->watch[i].kind != WATCH_PID)
                        continue;
                int r = add_threads_of(w, c->watch[i].pid);
                if (r < 0 && report)
                        report(userdata, &c->watch[i], r);
        }
}

static uint32_t tgid_of(const char *proc_root, uint32_t tid) {
        char path[128], buf[2048];
        snprintf(path, sizeof(path), "%s/%u/status", proc_root, tid);
        if (read_small_file(path, buf, sizeof(buf)) <= 0)
                return 0;
        const char *t = strstr(buf, "\nTgid:");
        return t ? (uint32_t) strtoul(t + 6, NULL, 10) : 0;
}

int watch_threads_fork(struct watch_threads *w, const struct config *c, uint32_t child_tid) {
        uint32_t tgid = tgid_of(w->proc_root, child_tid);
        for (size_t i = 0; tgid && i < c->n_watch; i++)
                if (c->watch[i].kind == WATCH_PID && (uint32_t) c->watch[i].pid == tgid)
                        return add_tid(w, child_tid);
        return 0;
}

static int cmp_u32(const void *a, const void *b) {
        uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
        return x < y ? -1 : x > y;
}

static void put_or(struct outbuf *b) {
        if (b->len)
                outbuf_puts(b, " || ");
}

int watch_filter(const struct config *c, const uint32_t *tids, size_t n_tids, const char *tid_field, bool with_comm,
                 char **ret) {
        if (c->n_watch == 0) {
                *ret = NULL;
                return 0;
        }
        struct outbuf b = {};
        for (size_t i = 0; with_comm && i < c->n_watch; i++) {
                const struct watch *w = &c->watch[i];
                if (w->kind == WATCH_PID)
                        continue;
                put_or(&b);
                outbuf_puts(&b, w->kind == WATCH_COMM ? "comm == \"" : "comm ~ \"");
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

static bool has_pid_watch(const struct config *c) {
        for (size_t i = 0; i < c->n_watch; i++)
                if (c->watch[i].kind == WATCH_PID)
                        return true;
        return false;
}

int watch_filters_build(const struct config *c, const struct watch_threads *w, struct watch_filters *ret) {
        struct watch_filters f = {};
        int r = watch_filter(c, w->tids, w->n, "common_pid", true, &f.syscalls);
        /* The fork event is always there, so that a reload can start watching pids; it matches nothing until. */
        if (r >= 0 && has_pid_watch(c))
                r = watch_filter(c, w->tids, w->n, "parent_pid", false, &f.fork);
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

bool watch_comms_fit_filter(const struct config *c) {
        char *f = NULL;
        int r = watch_filter(c, NULL, 0, "common_pid", true, &f);
        free(f);
        return r != -E2BIG;
}

void watch_describe(const struct config *c, char *buf, size_t size) {
        size_t n = 0;
        buf[0] = 0;
        if (c->n_watch == 0)
                snprintf(buf, size, "every process");
        for (size_t i = 0; i < c->n_watch && n < size; i++) {
                const struct watch *w = &c->watch[i];
                if (w->kind == WATCH_PID)
                        n += (size_t) snprintf(buf + n, size - n, "%spid %d", i ? ", " : "", w->pid);
                else
                        n += (size_t) snprintf(buf + n, size - n, "%scomm %s \"%s\"", i ? ", " : "",
                                               w->kind == WATCH_COMM ? "==" : "~", w->comm);
        }
}
