/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "file_summary.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "idtable.h"
#include "util.h"

struct file_tally {
        uint32_t hash;         /* of the path, never 0: the id table's key */
        struct path_str *path; /* NULL: the other line */
        uint64_t requests;
        uint64_t unverified;
        struct proc_interval iv;
        struct histogram *latency; /* from the pool: kept for the next intervals */
};

static uint32_t path_hash(const char *s, size_t len) {
        uint64_t h = len;
        for (size_t i = 0; i < len; i += 8) {
                uint64_t w = 0;
                memcpy(&w, s + i, MIN(len - i, (size_t) 8));
                h = hash_u64(h ^ w);
        }
        return (uint32_t) h ? (uint32_t) h : 1;
}

static bool same_path(const void *entry, const void *key) {
        const struct path_str *a = ((const struct file_tally *) entry)->path, *b = key;
        return a->len == b->len && memcmp(a->s, b->s, a->len) == 0;
}

/* A histogram for a file: from the pool of the files of earlier intervals, or new. */
static int tally_prepare(struct file_tallies *f, struct file_tally *x) {
        if (!x->latency)
                x->latency = f->n_pool ? f->pool[--f->n_pool] : malloc(sizeof(*x->latency));
        if (!x->latency)
                return -ENOMEM;
        histogram_reset(x->latency);
        x->requests = 0;
        x->unverified = 0;
        x->iv = (struct proc_interval) {};
        return 0;
}

int file_tallies_init(struct file_tallies *f) {
        *f = (struct file_tallies) {};
        f->other = calloc(1, sizeof(*f->other));
        f->order = calloc(FILE_TALLIES_MAX, sizeof(*f->order));
        f->pool = calloc(FILE_TALLIES_MAX, sizeof(*f->pool));
        if (!f->other || !f->order || !f->pool || id_table_init(&f->files, sizeof(struct file_tally), 64) < 0 ||
            tally_prepare(f, f->other) < 0) {
                file_tallies_done(f);
                return -ENOMEM;
        }
        return 0;
}

static bool drop_tally(void *entry, void *userdata) {
        struct file_tally *x = entry;
        struct file_tallies *f = userdata;
        path_str_unref(x->path);
        if (f->pool && f->n_pool < FILE_TALLIES_MAX)
                f->pool[f->n_pool++] = x->latency;
        else
                free(x->latency);
        return true;
}

void file_tallies_done(struct file_tallies *f) {
        if (f->files.slots)
                id_table_filter(&f->files, drop_tally, f);
        id_table_done(&f->files);
        for (size_t i = 0; f->pool && i < f->n_pool; i++)
                free(f->pool[i]);
        if (f->other)
                free(f->other->latency);
        free(f->other);
        free(f->order);
        free(f->pool);
        *f = (struct file_tallies) {};
}

static struct file_tally *tally_of(struct file_tallies *f, struct path_str *path) {
        if (f->last && f->last->path == path) /* the table's reference keeps it from being another's */
                return f->last;
        uint32_t hash = path_hash(path->s, path->len);
        struct file_tally *x = id_table_find_keyed(&f->files, hash, same_path, path);
        if (!x) {
                bool fresh;
                if (f->files.used >= FILE_TALLIES_MAX ||
                    !(x = id_table_get_keyed(&f->files, hash, same_path, path, &fresh)))
                        return f->other;
                x->path = path_str_ref(path);
                if (tally_prepare(f, x) < 0) {
                        path_str_unref(x->path);
                        id_table_remove(&f->files, x);
                        f->last = NULL;
                        return f->other;
                }
        }
        f->last = x; /* valid until the next insertion, which sets it again */
        return x;
}

void file_tallies_add(struct file_tallies *f, const struct request *r) {
        struct file_tally *x;
        f->active = true;
        if (r->path && (r->path_state == PATH_OK || r->path_state == PATH_UNVERIFIED))
                x = tally_of(f, r->path);
        else {
                x = f->other;
                f->without_path++;
        }
        x->requests++;
        x->unverified += r->path_state == PATH_UNVERIFIED;
        proc_interval_count_end(&x->iv, x->latency, r);
}

static int by_requests(const void *a, const void *b) {
        const struct file_tally *x = *(struct file_tally *const *) a, *y = *(struct file_tally *const *) b;
        if (x->requests != y->requests)
                return x->requests > y->requests ? -1 : 1;
        size_t n = MIN(x->path->len, y->path->len);
        int c = memcmp(x->path->s, y->path->s, n);
        return c ? c : x->path->len < y->path->len ? -1 : x->path->len > y->path->len;
}

static void emit_one(const struct file_tally *x, const struct file_summary *base,
                     void (*fn)(void *userdata, const struct file_summary *s), void *userdata) {
        struct file_summary s = *base;
        if (x->path) {
                s.path = x->path->s;
                s.path_len = x->path->len;
        }
        s.requests = x->requests;
        s.unverified = x->unverified;
        s.iv = &x->iv;
        s.latency = x->latency;
        fn(userdata, &s);
}

struct gather {
        struct file_tallies *f;
        size_t n;
};

static bool gather_one(void *entry, void *userdata) {
        struct gather *g = userdata;
        g->f->order[g->n++] = entry;
        return false;
}

void file_tallies_emit(struct file_tallies *f, unsigned top, uint64_t start, uint64_t end, bool last,
                       uint64_t records_lost, void (*fn)(void *userdata, const struct file_summary *s), void *userdata) {
        if (!f->active)
                return;
        struct gather g = { .f = f };
        id_table_filter(&f->files, gather_one, &g);
        qsort(f->order, g.n, sizeof(*f->order), by_requests);
        struct file_summary base = { .start = start, .end = end, .last = last, .records_lost = records_lost };
        struct file_tally *other = f->other;
        for (size_t i = 0; i < g.n; i++) {
                struct file_tally *x = f->order[i];
                if (i < top)
                        emit_one(x, &base, fn, userdata);
                else {
                        other->requests += x->requests;
                        other->unverified += x->unverified;
                        proc_interval_merge(&other->iv, &x->iv);
                        histogram_merge(other->latency, x->latency);
                        base.other_files++;
                }
        }
        base.without_path = f->without_path;
        if (other->requests)
                emit_one(other, &base, fn, userdata);
        id_table_filter(&f->files, drop_tally, f); /* their histograms back to the pool */
        (void) tally_prepare(f, other); /* its histogram is there: cannot fail */
        f->without_path = 0;
        f->active = false;
        f->last = NULL;
}
