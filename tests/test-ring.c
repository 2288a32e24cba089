/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "ring.h"

#include "ringbuf.h"
#include "test.h"

static void scan_count(void *userdata, uint32_t tid, uint64_t time) {
        uint64_t *sum = userdata;
        sum[0]++;
        sum[1] += tid;
        sum[2] = time;
}

TEST(samples_in_order) {
        struct fake_ring f;
        fake_ring_init(&f, 4096, 0);
        uint8_t rec[256], raw[20];
        for (int i = 0; i < 3; i++) {
                memset(raw, 'a' + i, sizeof(raw));
                fake_ring_put(&f, rec, build_sample(rec, 7, 100, 200 + (uint32_t) i, 1000 + (uint64_t) i, 1, raw, sizeof(raw)));
        }
        struct ring r;
        CHECK_EQ(ring_init(&r, f.base, FAKE_PAGE, 4096, 1), 0);
        CHECK(ring_refresh(&r));

        uint64_t sum[3] = {};
        ring_scan(&r, scan_count, sum);
        CHECK_EQ(sum[0], 3);
        CHECK_EQ(sum[1], 200 + 201 + 202);
        CHECK_EQ(sum[2], 1002);

        for (int i = 0; i < 3; i++) {
                const struct perf_event_header *h;
                CHECK_EQ(ring_peek(&r, &h), 1);
                struct sample s;
                CHECK_EQ(sample_parse(h, &s), 0);
                CHECK_EQ(s.id, 7);
                CHECK_EQ(s.pid, 100);
                CHECK_EQ(s.tid, 200 + i);
                CHECK_EQ(s.time, 1000 + i);
                CHECK_EQ(s.cpu, 1);
                CHECK_EQ(s.raw_size, sizeof(raw));
                CHECK(s.raw[0] == 'a' + i && s.raw[19] == 'a' + i);
                uint64_t t;
                CHECK(record_time(h, &t) && t == 1000 + (uint64_t) i);
                ring_advance(&r, h);
        }
        const struct perf_event_header *h;
        CHECK_EQ(ring_peek(&r, &h), 0);
        ring_commit(&r);
        CHECK_EQ(fake_meta(&f)->data_tail, fake_meta(&f)->data_head);
        ring_done(&r);
        fake_ring_free(&f);
}

/* A record that runs past the end of the ring comes out whole and contiguous. */
TEST(wrapped_record) {
        struct fake_ring f;
        uint64_t start = 4096 - 24; /* the next record begins 24 bytes before the end */
        fake_ring_init(&f, 4096, start);
        uint8_t rec[256], raw[60];
        for (size_t i = 0; i < sizeof(raw); i++)
                raw[i] = (uint8_t) i;
        size_t size = build_sample(rec, 9, 1, 2, 5555, 0, raw, sizeof(raw));
        fake_ring_put(&f, rec, size);
        struct ring r;
        CHECK_EQ(ring_init(&r, f.base, FAKE_PAGE, 4096, 0), 0);
        CHECK(ring_refresh(&r));
        const struct perf_event_header *h;
        CHECK_EQ(ring_peek(&r, &h), 1);
        CHECK_EQ(h->size, size);
        CHECK(memcmp(h, rec, size) == 0);
        struct sample s;
        CHECK_EQ(sample_parse(h, &s), 0);
        CHECK_EQ(s.time, 5555);
        CHECK(memcmp(s.raw, raw, sizeof(raw)) == 0);
        uint64_t sum[3] = {};
        ring_scan(&r, scan_count, sum); /* the scan reads the wrapped fixed part too */
        CHECK_EQ(sum[1], 2);
        CHECK_EQ(sum[2], 5555);
        ring_advance(&r, h);
        ring_commit(&r);
        CHECK_EQ(fake_meta(&f)->data_tail, start + size);
        ring_done(&r);
        fake_ring_free(&f);
}

TEST(lost_and_garbage) {
        struct fake_ring f;
        fake_ring_init(&f, 4096, 0);
        uint8_t rec[256];
        fake_ring_put(&f, rec, build_lost(rec, 3, 42, 777, 1));
        struct perf_event_header bad = { .type = PERF_RECORD_SAMPLE, .size = 3 };
        memset(rec, 0, 16);
        memcpy(rec, &bad, sizeof(bad));
        fake_ring_put(&f, rec, 16);

        struct ring r;
        CHECK_EQ(ring_init(&r, f.base, FAKE_PAGE, 4096, 1), 0);
        ring_refresh(&r);
        const struct perf_event_header *h;
        CHECK_EQ(ring_peek(&r, &h), 1);
        struct lost_record l;
        CHECK_EQ(lost_parse(h, &l), 0);
        CHECK_EQ(l.id, 3);
        CHECK_EQ(l.lost, 42);
        CHECK_EQ(l.time, 777);
        uint64_t t;
        CHECK(record_time(h, &t) && t == 777);
        CHECK(sample_parse(h, &(struct sample) {}) < 0);
        ring_advance(&r, h);
        CHECK_EQ(ring_peek(&r, &h), -EBADMSG);
        CHECK_EQ(ring_skip_to_head(&r), 16);
        CHECK_EQ(ring_peek(&r, &h), 0);
        ring_done(&r);
        fake_ring_free(&f);
}

TEST(bad_sizes) {
        struct ring r;
        uint8_t page[FAKE_PAGE * 2] __attribute__((aligned(8))) = {};
        CHECK_EQ(ring_init(&r, page, FAKE_PAGE, 3000, 0), -EINVAL); /* not a power of two */
        uint8_t rec[64] = {};
        struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = 64 };
        memcpy(rec, &h, sizeof(h));
        put32(rec + 40, 1000); /* raw size larger than the record */
        CHECK(sample_parse((const struct perf_event_header *) rec, &(struct sample) {}) < 0);
}

/* A CPU offline at start has an absent ring: empty whatever is asked of it, then a real one in its place. */
TEST(absent_then_present) {
        struct ring r;
        CHECK_EQ(ring_init_absent(&r, 3), 0);
        CHECK(!ring_refresh(&r));
        uint64_t sum[3] = {};
        ring_scan(&r, scan_count, sum);
        CHECK_EQ(sum[0], 0);
        const struct perf_event_header *h;
        CHECK_EQ(ring_peek(&r, &h), 0);
        CHECK_EQ(ring_skip_to_head(&r), 0);
        ring_commit(&r);
        ring_done(&r);

        struct fake_ring f;
        fake_ring_init(&f, 4096, 0);
        uint8_t rec[256], raw[8] = "present";
        fake_ring_put(&f, rec, build_sample(rec, 7, 100, 200, 1000, 3, raw, sizeof(raw)));
        CHECK_EQ(ring_init(&r, f.base, FAKE_PAGE, 4096, 3), 0);
        CHECK(ring_refresh(&r));
        CHECK_EQ(ring_peek(&r, &h), 1);
        struct sample s;
        CHECK_EQ(sample_parse(h, &s), 0);
        CHECK_EQ(s.cpu, 3);
        CHECK(memcmp(s.raw, "present", 8) == 0);
        ring_done(&r);
        fake_ring_free(&f);
}

TEST_MAIN("test-ring")
