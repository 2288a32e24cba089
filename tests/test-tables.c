/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The thread and in-flight tables against a plain model: open addressing with deletions is easy to get wrong. */
#include "inflight.h"
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

static void test_inflight(void) {
        struct inflight_table t;
        CHECK_EQ(inflight_table_init(&t, 300), 0);
        /* Two processes, two contexts, iocbs that collide a lot: take every other one, then check the rest. */
        for (uint64_t i = 0; i < 300; i++) {
                struct inflight r = { .pid = 1 + (uint32_t) (i % 2), .ctx = 0x1000 + (i % 3), .iocb = 0x5000 + 64 * i,
                                      .data = i, .fd = (uint32_t) i };
                CHECK_EQ(inflight_add(&t, &r), 0);
        }
        struct inflight extra = { .pid = 9, .ctx = 1, .iocb = 1 };
        CHECK_EQ(inflight_add(&t, &extra), -ENOSPC);
        /* the same key again overwrites, it does not need room */
        struct inflight again = { .pid = 1, .ctx = 0x1000, .iocb = 0x5000, .data = 77 };
        CHECK_EQ(inflight_add(&t, &again), 0);
        CHECK_EQ(t.used, 300);

        struct inflight got;
        for (uint64_t i = 0; i < 300; i += 2) {
                CHECK(inflight_take(&t, 1 + (uint32_t) (i % 2), 0x1000 + (i % 3), 0x5000 + 64 * i, &got));
                CHECK_EQ(got.data, i == 0 ? 77 : i);
        }
        CHECK_EQ(t.used, 150);
        for (uint64_t i = 1; i < 300; i += 2)
                CHECK(inflight_take(&t, 1 + (uint32_t) (i % 2), 0x1000 + (i % 3), 0x5000 + 64 * i, &got) &&
                      got.fd == i);
        CHECK_EQ(t.used, 0);
        CHECK(!inflight_take(&t, 1, 0x1000, 0x5000, &got));

        /* io_destroy of one context of one process forgets exactly its requests. */
        size_t want = 0;
        for (uint64_t i = 0; i < 300; i++) {
                struct inflight r = { .pid = 1 + (uint32_t) (i % 2), .ctx = 0x1000 + (i % 3), .iocb = 0x9000 + 64 * i };
                inflight_add(&t, &r);
                want += r.pid == 2 && r.ctx == 0x1001;
        }
        CHECK_EQ(inflight_drop(&t, 2, 0x1001), want);
        CHECK_EQ(t.used, 300 - want);
        for (uint64_t i = 0; i < 300; i++) {
                uint32_t pid = 1 + (uint32_t) (i % 2);
                uint64_t ctx = 0x1000 + (i % 3);
                bool there = inflight_take(&t, pid, ctx, 0x9000 + 64 * i, &got);
                CHECK(there == !(pid == 2 && ctx == 0x1001));
        }
        CHECK_EQ(t.used, 0);
        inflight_table_done(&t);
}

int main(void) {
        test_threads();
        test_inflight();
        return test_result("test-tables");
}
