/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The id table (threads by tid, processes by pid) against a plain model: open addressing with backward-shift
 * deletion is easy to get wrong, and so is removing while walking it. */
#include "idtable.h"

#include "test.h"
#include "threads.h"

struct entry {
        uint32_t id;
        uint32_t value;
};

/* A model: value by id, 0 when absent. */
#define MODEL_IDS 4096
static uint32_t model[MODEL_IDS];

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next_random(void) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return (uint32_t) rng;
}

static void check_against_model(struct id_table *t) {
        size_t present = 0;
        for (uint32_t id = 1; id < MODEL_IDS; id++) {
                struct entry *e = id_table_find(t, id);
                if (model[id]) {
                        present++;
                        if (!e || e->value != model[id]) {
                                fprintf(stderr, "%s: id %u: %s\n", test_case, id, e ? "wrong value" : "missing");
                                test_failures++;
                                return;
                        }
                } else if (e) {
                        fprintf(stderr, "%s: id %u found, never inserted or removed\n", test_case, id);
                        test_failures++;
                        return;
                }
        }
        CHECK_EQ(t->used, present);
        CHECK(t->used * 4 <= t->cap * 3);
}

/* Random inserts, updates and removes, ids from a small range so that runs collide and wrap around the end. */
TEST(random_against_model) {
        struct id_table t;
        CHECK_EQ(id_table_init(&t, sizeof(struct entry), 64), 0);
        memset(model, 0, sizeof(model));
        for (unsigned round = 0; round < 200000; round++) {
                uint32_t id = 1 + next_random() % (MODEL_IDS - 1), op = next_random() % 3;
                if (op < 2) {
                        bool fresh;
                        struct entry *e = id_table_get(&t, id, &fresh);
                        CHECK(e && e->id == id);
                        CHECK(fresh == (model[id] == 0));
                        CHECK(!fresh || e->value == 0);
                        e->value = model[id] = next_random() | 1;
                } else if (model[id]) {
                        id_table_remove(&t, id_table_find(&t, id));
                        model[id] = 0;
                }
                if (round % 20000 == 0)
                        check_against_model(&t);
        }
        check_against_model(&t);
        CHECK(id_table_find(&t, 0) == NULL && id_table_get(&t, 0, NULL) == NULL);
        id_table_done(&t);
}

static bool drop_odd(void *entry, void *userdata) {
        struct entry *e = entry;
        unsigned *visits = userdata;
        visits[e->id]++;
        return e->id % 2 == 1;
}

/* Removing while walking: every entry seen exactly once, the removed gone, the rest found. */
TEST(filter_visits_each_once) {
        for (unsigned trial = 0; trial < 200; trial++) {
                struct id_table t;
                CHECK_EQ(id_table_init(&t, sizeof(struct entry), 64), 0);
                memset(model, 0, sizeof(model));
                unsigned n = 10 + next_random() % 38; /* up to three quarters of 64: runs that wrap the end */
                for (unsigned i = 0; i < n; i++) {
                        uint32_t id = 1 + next_random() % 300;
                        id_table_get(&t, id, NULL);
                        model[id] = 1;
                }
                static unsigned visits[MODEL_IDS];
                memset(visits, 0, sizeof(visits));
                id_table_filter(&t, drop_odd, visits);
                for (uint32_t id = 1; id < 300; id++) {
                        if (visits[id] != model[id]) {
                                fprintf(stderr, "%s: trial %u: id %u visited %u times\n", test_case, trial, id,
                                        visits[id]);
                                test_failures++;
                        }
                        CHECK((id_table_find(&t, id) != NULL) == (model[id] && id % 2 == 0));
                }
                id_table_done(&t);
        }
}

/* A pending call keeps a thread; so does a record not processed yet.  The rest goes, and a table still more than
 * half full grows, so the next drain need not sweep again. */
/* Entries keyed by more than an id, with a hash that collides on purpose (only 8 values): each found by its
 * key, through growth and removal, as a model says. */
struct keyed {
        uint32_t hash;
        uint32_t key;
        uint32_t value;
};

static bool same_key(const void *entry, const void *key) {
        return ((const struct keyed *) entry)->key == *(const uint32_t *) key;
}

TEST(keyed_with_colliding_hashes) {
        struct id_table t;
        CHECK_EQ(id_table_init(&t, sizeof(struct keyed), 4), 0);
        uint32_t values[1000] = {};
        for (unsigned round = 0; round < 20000; round++) {
                uint32_t key = next_random() % 1000, hash = 1 + key % 8;
                if (next_random() % 3) {
                        bool fresh;
                        struct keyed *e = id_table_get_keyed(&t, hash, same_key, &key, &fresh);
                        CHECK(e && fresh == (values[key] == 0));
                        if (!e)
                                break;
                        e->key = key;
                        e->value = values[key] = round + 1;
                } else {
                        struct keyed *e = id_table_find_keyed(&t, hash, same_key, &key);
                        CHECK((e != NULL) == (values[key] != 0));
                        if (e) {
                                id_table_remove(&t, e);
                                values[key] = 0;
                        }
                }
        }
        size_t present = 0;
        for (uint32_t key = 0; key < 1000; key++) {
                const struct keyed *e = id_table_find_keyed(&t, 1 + key % 8, same_key, &key);
                CHECK((e ? e->value : 0) == values[key]);
                present += values[key] != 0;
        }
        CHECK_EQ(t.used, present);
        id_table_done(&t);
}

TEST(thread_sweep) {
        struct id_table t;
        CHECK_EQ(thread_table_init(&t, 64), 0);
        for (uint32_t tid = 1; tid <= 1000; tid++) {
                struct thread *th = thread_get(&t, tid);
                CHECK(th && th->tid == tid && !th->enter);
                th->newest_seen = tid;
        }
        static const struct event_desc enter;
        thread_find(&t, 10)->enter = &enter;
        thread_table_sweep(&t, 500);
        CHECK_EQ(t.used, 501); /* 501..1000, and 10 */
        CHECK(thread_find(&t, 10) != NULL);
        CHECK(thread_find(&t, 11) == NULL);
        CHECK(thread_find(&t, 777) != NULL && thread_find(&t, 777)->newest_seen == 777);
        size_t cap = t.cap;
        while (t.used * 2 <= t.cap)
                thread_get(&t, (uint32_t) (5000 + t.used))->newest_seen = UINT64_MAX;
        thread_table_sweep(&t, 0);
        CHECK(t.cap > cap);
        CHECK(t.used * 2 <= t.cap);
        id_table_done(&t);
}

TEST_MAIN("test-idtable")
