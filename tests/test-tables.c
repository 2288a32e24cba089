/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The thread table against a plain model: open addressing with deletions is easy to get wrong. */
#include "threads.h"

#include "test.h"

static void test_threads(void) {
        struct thread_table t;
        CHECK_EQ(thread_table_init(&t, 64), 0);
        for (uint32_t tid = 1; tid <= 1000; tid++) {
                struct thread *th = thread_get(&t, tid);
                CHECK(th && th->tid == tid);
                th->newest_seen = tid;
        }
        CHECK_EQ(t.used, 1000);
        CHECK(t.used * 4 <= t.cap * 3);
        for (uint32_t tid = 1; tid <= 1000; tid++)
                CHECK(thread_find(&t, tid) && thread_find(&t, tid)->newest_seen == tid);
        CHECK(thread_find(&t, 1001) == NULL);

        /* A pending call keeps a thread; so does a record not processed yet.  The rest goes. */
        static const struct event_desc enter;
        thread_find(&t, 10)->enter = &enter;
        thread_table_sweep(&t, 500);
        CHECK_EQ(t.used, 501); /* 501..1000, and 10 */
        CHECK(thread_find(&t, 10) != NULL);
        CHECK(thread_find(&t, 11) == NULL);
        CHECK(thread_find(&t, 777) != NULL);

        /* Nothing to drop and more than half used: the sweep grows the table, so the next drain need not sweep. */
        size_t cap = t.cap;
        while (t.used * 2 <= t.cap)
                thread_get(&t, (uint32_t) (5000 + t.used))->newest_seen = UINT64_MAX;
        thread_table_sweep(&t, 0);
        CHECK(t.cap > cap || t.used * 2 <= t.cap);
        CHECK(t.used * 2 <= t.cap);
        thread_table_done(&t);
}

int main(void) {
        test_threads();
        return test_result("test-tables");
}
