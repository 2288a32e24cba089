/* SPDX-License-Identifier: GPL-2.0-or-later */
/* io_uring's records replayed through the whole engine, without root: tests/fuzz/seeds-engine/uring.bin (made by
 * tests/fuzz/make-seeds.py, records laid out as the capture writes them, with the fixtures' tracepoint ids) on
 * two rings.  A read punted to an io-wq worker, a multishot poll armed, its auxiliary completion and its last, a
 * request with no CQE asked whose failure overflowed the CQ ring, and a completion of a request never seen
 * submitted: each request as it ended. */
#include <stdio.h>
#include <unistd.h>

#include "engine.h"
#include "ringbuf.h"
#include "test.h"

static struct request got[16];
static size_t n_got;

static void collect(void *userdata, const struct entry *e) {
        (void) userdata;
        if (e->kind == ENTRY_REQUEST && n_got < ELEMENTS(got)) {
                got[n_got] = *e->request;
                got[n_got++].path = NULL; /* not kept past the call */
        }
}

static const struct request *by_data(uint64_t data, size_t nth) {
        for (size_t i = 0; i < n_got; i++)
                if (got[i].data == data && nth-- == 0)
                        return &got[i];
        return NULL;
}

static size_t read_seed(uint8_t *buf, size_t size) {
        char path[4096];
        const char *src = getenv("top_srcdir");
        snprintf(path, sizeof(path), "%s/tests/fuzz/seeds-engine/uring.bin", src ? src : ".");
        FILE *f = fopen(path, "re");
        if (!f)
                return 0;
        size_t n = fread(buf, 1, size, f);
        fclose(f);
        return n;
}

TEST(uring_seed_replayed) {
        struct event_table *t = NULL;
        char error[512];
        CHECK_EQ(event_table_load(fixture_dir(), EVENTS_URING, &t, error, sizeof(error)), 0);
        static uint8_t data[65536];
        size_t size = read_seed(data, sizeof(data));
        CHECK(t && size > 1);
        if (!t || size <= 1)
                return;
        /* as fuzz-engine splits it: the first byte says where the second ring's bytes begin */
        size_t split = (size_t) data[0] * size / 256;
        struct fake_ring f[2];
        struct ring rings[2];
        const uint8_t *part[2] = { data + 1, data + split };
        size_t len[2] = { split - 1, size - split };
        for (int i = 0; i < 2; i++) {
                /* the records, not the zeros that pad each ring's half of the seed */
                size_t whole = 0;
                while (whole + sizeof(struct perf_event_header) <= len[i]) {
                        struct perf_event_header h; /* the seed's bytes are not aligned */
                        memcpy(&h, part[i] + whole, sizeof(h));
                        if (h.size == 0 || whole + h.size > len[i])
                                break;
                        whole += h.size;
                }
                fake_ring_init(&f[i], 65536, 0);
                fake_ring_put(&f[i], part[i], whole);
                CHECK_EQ(ring_init(&rings[i], f[i].base, FAKE_PAGE, 65536, i), 0);
        }
        struct engine e;
        struct engine_options opt = { .max_iocbs_per_call = 16, .max_inflight = 64, .read_memory = false,
                                      .proc_root = "/nonexistent", .records = RECORD_REQUESTS, .captured = true };
        struct engine_callbacks cb = { .emit = collect };
        CHECK_EQ(engine_init(&e, rings, 2, t, &opt, &cb), 0);
        engine_drain(&e, UINT64_MAX);
        CHECK_EQ(e.stats.bad_records, 0);
        CHECK_EQ(e.stats.foreign, 0);

        const struct request *r = by_data(0x71, 0); /* a read, punted */
        CHECK(r && r->kind == REQ_COMPLETED && r->res == 4096 && r->async == REQ_ASYNC_IO_WQ &&
              r->end_time - r->submit_time == 10);
        r = by_data(0x72, 0); /* a multishot poll, armed: its auxiliary completion, then its last */
        CHECK(r && r->kind == REQ_COMPLETED && r->async == REQ_ASYNC_POLL && r->end_time - r->submit_time == 9);
        r = by_data(0x72, 1);
        CHECK(r && r->kind == REQ_COMPLETED && r->async == REQ_ASYNC_POLL && r->end_time - r->submit_time == 10);
        r = by_data(0x73, 0); /* no CQE asked; it failed, and its CQE found the ring full (dropped: no ocqe) */
        CHECK(r && r->res == -11 && r->cq_overflow == CQ_OVERFLOW_DROPPED && !r->async);
        r = by_data(0x74, 0); /* never seen submitted */
        CHECK(r && r->kind == REQ_UNMATCHED);
        CHECK_EQ(n_got, 5);

        engine_finish(&e, UINT64_MAX / 2);
        engine_done(&e);
        for (int i = 0; i < 2; i++) {
                ring_done(&rings[i]);
                fake_ring_free(&f[i]);
        }
        event_table_free(t);
}

TEST_MAIN("test-uring-replay")
