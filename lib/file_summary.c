/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "file_summary.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct file_tally {
        struct path_str *path; /* NULL: an empty slot */
        uint32_t hash;
        uint64_t requests;
        uint64_t unverified;
        struct proc_interval iv;
        struct histogram *latency; /* allocated at the slot's first file, kept for the next intervals */
};

static uint32_t path_hash(const char *s, size_t len) {
        uint64_t h = len;
        for (size_t i = 0; i < len; i += 8) {
                uint64_t w = 0;
                memcpy(&w, s + i, MIN(len - i, (size_t) 8));
                h = hash_u64(h ^ w);
        }
        return (uint32_t) h;
}

static int tally_prepare(struct file_tally *x) {
        if (!x->latency) {
                x->latency = malloc(sizeof(*x->latency));
                if (!x->latency)
                        return -ENOMEM;
        }
        histogram_reset(x->latency);
        x->requests = 0;
        x->unverified = 0;
        x->iv = (struct proc_interval) {};
        return 0;
}

int file_tallies_init(struct file_tallies *f) {
        *f = (struct file_tallies) { .cap = 64 };
        f->slots = calloc(f->cap, sizeof(*f->slots));
        f->other = calloc(1, sizeof(*f->other));
        f->order = calloc(FILE_TALLIES_MAX, sizeof(*f->order));
        if (!f->slots || !f->other || !f->order || tally_prepare(f->other) < 0) {
                file_tallies_done(f);
                return -ENOMEM;
        }
        return 0;
}

void file_tallies_done(struct file_tallies *f) {
        for (size_t i = 0; f->slots && i < f->cap; i++) {
                path_str_unref(f->slots[i].path);
                free(f->slots[i].latency);
        }
        if (f->other)
                free(f->other->latency);
        free(f->other);
        free(f->slots);
        free(f->order);
        *f = (struct file_tallies) {};
}

static struct file_tally *probe(struct file_tally *slots, size_t cap, uint32_t hash, const char *s, size_t len) {
        for (size_t i = hash & (cap - 1);; i = (i + 1) & (cap - 1)) {
                struct file_tally *x = &slots[i];
                if (!x->path || (x->hash == hash && x->path->len == len && memcmp(x->path->s, s, len) == 0))
                        return x;
        }
}

/* Twice the slots: at half full, so that a probe stays short.  Slots' histograms go along; the new ones get
 * theirs when first used. */
static int grow(struct file_tallies *f) {
        size_t cap = f->cap * 2;
        struct file_tally *slots = calloc(cap, sizeof(*slots));
        if (!slots)
                return -ENOMEM;
        for (size_t i = 0; i < f->cap; i++) {
                struct file_tally *x = &f->slots[i];
                if (x->path)
                        *probe(slots, cap, x->hash, x->path->s, x->path->len) = *x;
                else
                        free(x->latency);
        }
        free(f->slots);
        f->slots = slots;
        f->cap = cap;
        f->last = NULL;
        return 0;
}

static struct file_tally *tally_of(struct file_tallies *f, struct path_str *path) {
        if (f->last && f->last->path == path) /* the table's reference keeps it from being another's */
                return f->last;
        uint32_t hash = path_hash(path->s, path->len);
        struct file_tally *x = probe(f->slots, f->cap, hash, path->s, path->len);
        if (!x->path) {
                if (f->used >= FILE_TALLIES_MAX)
                        return f->other;
                if (2 * (f->used + 1) > f->cap) {
                        if (grow(f) < 0)
                                return f->other;
                        x = probe(f->slots, f->cap, hash, path->s, path->len);
                }
                if (tally_prepare(x) < 0)
                        return f->other;
                x->path = path_str_ref(path);
                x->hash = hash;
                f->used++;
        }
        f->last = x;
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

void file_tallies_emit(struct file_tallies *f, unsigned top, uint64_t start, uint64_t end, bool last,
                       uint64_t records_lost, void (*fn)(void *userdata, const struct file_summary *s), void *userdata) {
        if (!f->active)
                return;
        size_t n = 0;
        for (size_t i = 0; i < f->cap; i++)
                if (f->slots[i].path)
                        f->order[n++] = &f->slots[i];
        qsort(f->order, n, sizeof(*f->order), by_requests);
        struct file_summary base = { .start = start, .end = end, .last = last, .records_lost = records_lost };
        struct file_tally *other = f->other;
        for (size_t i = 0; i < n; i++) {
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
                path_str_unref(x->path);
                x->path = NULL;
        }
        base.without_path = f->without_path;
        if (other->requests)
                emit_one(other, &base, fn, userdata);
        (void) tally_prepare(other); /* its histogram is there: cannot fail */
        f->used = 0;
        f->without_path = 0;
        f->active = false;
        f->last = NULL;
}
