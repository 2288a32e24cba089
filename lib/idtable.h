/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Entries of a fixed size keyed by a nonzero 32-bit id (a tid, a pid), or a key's hash, stored as their first
 * member: open
 * addressing, linear probing, grown by doubling at three quarters full, and deletion by backward shift (no
 * tombstones).  An entry's address stays valid until the next insertion or removal. */
struct id_table {
        uint8_t *slots;
        size_t entry_size;
        size_t cap; /* a power of two */
        size_t used;
};

int id_table_init(struct id_table *t, size_t entry_size, size_t cap);
void id_table_done(struct id_table *t);
void *id_table_find(const struct id_table *t, uint32_t id);
/* The entry of id, inserted zeroed (but for its id) when there is none, which *ret_new then says; NULL only when
 * growing failed (id 0 is no id: NULL). */
void *id_table_get(struct id_table *t, uint32_t id, bool *ret_new);
void id_table_remove(struct id_table *t, void *entry);
/* Twice the room, now: for a table that stays more than half full. */
int id_table_grow(struct id_table *t);
/* Entries keyed by more than an id (a path): their first member is the key's hash (never 0), and same() tells
 * apart two of one hash; the rest as above. */
void *id_table_find_keyed(const struct id_table *t, uint32_t hash, bool (*same)(const void *entry, const void *key),
                          const void *key);
void *id_table_get_keyed(struct id_table *t, uint32_t hash, bool (*same)(const void *entry, const void *key),
                         const void *key, bool *ret_new);
/* fn for every entry, each exactly once; an entry for which it returns true is removed (after fn). */
void id_table_filter(struct id_table *t, bool (*fn)(void *entry, void *userdata), void *userdata);
