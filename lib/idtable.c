/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "idtable.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static uint32_t id_at(const struct id_table *t, size_t i) {
        return load_u32(t->slots + i * t->entry_size);
}

static size_t home(const struct id_table *t, uint32_t id) {
        return hash_u64(id) & (t->cap - 1);
}

/* Where id is, or the empty slot where it would go. */
static size_t probe(const struct id_table *t, uint32_t id) {
        size_t i = home(t, id);
        while (id_at(t, i) != id && id_at(t, i) != 0)
                i = (i + 1) & (t->cap - 1);
        return i;
}

/* The first empty slot of id's run: where an entry goes that is known not to be there. */
static size_t probe_empty(const struct id_table *t, uint32_t id) {
        size_t i = home(t, id);
        while (id_at(t, i) != 0)
                i = (i + 1) & (t->cap - 1);
        return i;
}

/* Where the entry of hash and key is, or the empty slot where it would go. */
static size_t probe_keyed(const struct id_table *t, uint32_t hash, bool (*same)(const void *entry, const void *key),
                          const void *key) {
        size_t i = home(t, hash);
        while (id_at(t, i) != 0 && !(id_at(t, i) == hash && same(t->slots + i * t->entry_size, key)))
                i = (i + 1) & (t->cap - 1);
        return i;
}

int id_table_init(struct id_table *t, size_t entry_size, size_t cap) {
        size_t c = 64;
        while (c < cap)
                c *= 2;
        uint8_t *slots = calloc(c, entry_size);
        if (!slots)
                return -ENOMEM;
        *t = (struct id_table) { .slots = slots, .entry_size = entry_size, .cap = c };
        return 0;
}

void id_table_done(struct id_table *t) {
        free(t->slots);
        t->slots = NULL;
        t->cap = t->used = 0;
}

void *id_table_find(const struct id_table *t, uint32_t id) {
        if (id == 0)
                return NULL;
        size_t i = probe(t, id);
        return id_at(t, i) == id ? t->slots + i * t->entry_size : NULL;
}

int id_table_grow(struct id_table *t) {
        struct id_table bigger;
        if (id_table_init(&bigger, t->entry_size, t->cap * 2) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < t->cap; i++) {
                uint32_t id = id_at(t, i);
                if (id)
                        memcpy(bigger.slots + probe_empty(&bigger, id) * t->entry_size, t->slots + i * t->entry_size,
                               t->entry_size);
        }
        bigger.used = t->used;
        free(t->slots);
        *t = bigger;
        return 0;
}

/* The entry at slot i (id's place, found by a probe), inserted zeroed but for id when the slot is empty. */
static void *get_at(struct id_table *t, size_t i, uint32_t id, bool *ret_new) {
        if (id_at(t, i) != 0) {
                if (ret_new)
                        *ret_new = false;
                return t->slots + i * t->entry_size;
        }
        if ((t->used + 1) * 4 > t->cap * 3) {
                if (id_table_grow(t) < 0)
                        return NULL;
                i = probe_empty(t, id);
        }
        uint8_t *e = t->slots + i * t->entry_size;
        memset(e, 0, t->entry_size);
        memcpy(e, &id, sizeof(id));
        t->used++;
        if (ret_new)
                *ret_new = true;
        return e;
}

void *id_table_get(struct id_table *t, uint32_t id, bool *ret_new) {
        return id == 0 ? NULL : get_at(t, probe(t, id), id, ret_new);
}

void *id_table_find_keyed(const struct id_table *t, uint32_t hash, bool (*same)(const void *entry, const void *key),
                          const void *key) {
        size_t i = probe_keyed(t, hash, same, key);
        return hash && id_at(t, i) == hash ? t->slots + i * t->entry_size : NULL;
}

void *id_table_get_keyed(struct id_table *t, uint32_t hash, bool (*same)(const void *entry, const void *key),
                         const void *key, bool *ret_new) {
        return hash == 0 ? NULL : get_at(t, probe_keyed(t, hash, same, key), hash, ret_new);
}

/* Empty slot i, and move back into it whatever later entry of its run would no longer be found. */
static void remove_at(struct id_table *t, size_t i) {
        size_t mask = t->cap - 1;
        for (size_t j = (i + 1) & mask; id_at(t, j) != 0; j = (j + 1) & mask) {
                size_t h = home(t, id_at(t, j));
                bool stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
                if (!stays) {
                        memcpy(t->slots + i * t->entry_size, t->slots + j * t->entry_size, t->entry_size);
                        i = j;
                }
        }
        memset(t->slots + i * t->entry_size, 0, t->entry_size);
        t->used--;
}

void id_table_remove(struct id_table *t, void *entry) {
        remove_at(t, (size_t) ((uint8_t *) entry - t->slots) / t->entry_size);
}

void id_table_filter(struct id_table *t, bool (*fn)(void *entry, void *userdata), void *userdata) {
        /* From an empty slot on: no run crosses it, so an entry only ever moves back into the slot just looked
         * at (looked at again), never into one already passed. */
        size_t start = 0;
        while (start < t->cap && id_at(t, start) != 0)
                start++;
        if (start == t->cap)
                return; /* never: the table is at most three quarters full */
        for (size_t n = 1; n <= t->cap;) {
                size_t i = (start + n) & (t->cap - 1);
                if (id_at(t, i) == 0 || !fn(t->slots + i * t->entry_size, userdata)) {
                        n++;
                        continue;
                }
                remove_at(t, i); /* the slot may hold a later entry now: looked at next */
        }
}
