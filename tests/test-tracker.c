/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The request tracker on calls built by hand: every request ends exactly once, as what it is; the bounds evict
 * the oldest; summaries count what the calls did; and a random mix of calls against a plain model. */
#include "aio_requests.h"
#include "tracker.h"
#include "uring_requests.h"

#include <unistd.h>

#include "file_summary.h"
#include "kernel_stuck.h"
#include "uring.h"

#include "config.h"
#include "test.h"

#define MAX_RECORDS 4096

static struct request got[MAX_RECORDS];
static size_t n_got;
static struct proc_interval sums[64];
static struct proc_summary sum_meta[64];
static uint64_t sum_lat_count[64], sum_p50[64];
static size_t n_sums;

static void on_request(void *userdata, const struct request *r) {
        if (n_got < MAX_RECORDS)
                got[n_got++] = *r; /* the path is released after this call: not kept */
}

static void on_summary(void *userdata, const struct proc_summary *s) {
        if (n_sums < 64) {
                sums[n_sums] = *s->iv;
                sum_meta[n_sums] = *s;
                sum_lat_count[n_sums] = s->latency->count;
                sum_p50[n_sums] = histogram_percentile(s->latency, 50);
                n_sums++;
        }
}

static struct file_summary files[16];
static uint64_t file_requests[16], file_abandoned[16]; /* the summary's counts are valid only in the call */
static size_t n_files;

static void on_file_summary(void *userdata, const struct file_summary *s) {
        if (n_files < 16) {
                files[n_files] = *s;
                file_abandoned[n_files] = s->iv->abandoned;
                file_requests[n_files++] = s->requests;
        }
}

static struct iocb_info iocbs[256];
static struct event_info events[256];

static struct tracker t;
static struct trace_stats stats;

static void setup(size_t max_inflight, size_t per_process, uint64_t interval) {
        struct tracker_options o = { .max_inflight = max_inflight, .max_inflight_per_process = per_process,
                                     .max_iocbs_per_call = 256, .summary_interval_ns = interval,
                                     .proc_root = "/nonexistent" };
        struct tracker_callbacks cb = { .request = on_request, .summary = on_summary, .file_summary = on_file_summary };
        stats = (struct trace_stats) {};
        n_got = n_sums = n_files = 0;
        CHECK_EQ(tracker_init(&t, &o, &cb, &stats), 0);
}

static uint64_t iocb_addr(uint32_t i) {
        return 0x10000 + 64ull * i;
}

static void submit(uint32_t pid, uint64_t ctx, uint64_t time, uint32_t first, unsigned n, uint16_t op) {
        for (unsigned k = 0; k < n; k++)
                iocbs[k] = (struct iocb_info) { .addr = iocb_addr(first + k), .addr_state = MEM_OK, .state = MEM_OK,
                                                .data = first + k, .opcode = op, .fd = 3 + (first + k) % 4,
                                                .nbytes = 4096, .offset = 4096 * (int64_t) (first + k) };
        struct aio_call c = { .syscall = AIO_IO_SUBMIT, .pid = pid, .tid = pid + 1, .comm = "proc",
                              .enter_time = time, .exit_time = time + 10, .enter_seen = true, .args_known = true,
                              .args = { ctx, n, 0x5000 }, .ret = n, .iocbs = iocbs, .n_items = n, .n_wanted = n };
        aio_requests_call(&t, &c, 0);
        tracker_flush(&t);
}

/* Reap iocbs first .. first+n-1 (data as submitted unless `data` says otherwise). */
static void reap(uint32_t pid, uint64_t ctx, uint64_t time, uint32_t first, unsigned n, int64_t res,
                 const uint64_t *data) {
        for (unsigned k = 0; k < n; k++)
                events[k] = (struct event_info) { .state = MEM_OK, .obj = iocb_addr(first + k),
                                                  .data = data ? data[k] : first + k, .res = res };
        struct aio_call c = { .syscall = AIO_IO_GETEVENTS, .pid = pid, .tid = pid + 2, .comm = "proc",
                              .enter_time = time - 5, .exit_time = time, .enter_seen = true, .args_known = true,
                              .args = { ctx, 1, n }, .ret = n, .events = events, .n_items = n, .n_wanted = n };
        aio_requests_call(&t, &c, 0);
        tracker_flush(&t);
}

static void simple_call(enum aio_syscall sc, uint32_t pid, uint64_t time, uint64_t a0, uint64_t a1, int64_t ret) {
        struct aio_call c = { .syscall = sc, .pid = pid, .tid = pid, .comm = "proc", .enter_time = time - 1,
                              .exit_time = time, .enter_seen = true, .args_known = true, .args = { a0, a1 }, .ret = ret,
                              .events = events };
        aio_requests_call(&t, &c, 0);
        tracker_flush(&t);
}

/* Completions held for a submit still to come (test_early_completion) go out, as once the hold has passed. */
static void hold_passes(void) {
        tracker_tick(&t, UINT64_MAX);
}

static size_t count_kind(enum request_kind k, enum request_end e) {
        size_t n = 0;
        for (size_t i = 0; i < n_got; i++)
                n += got[i].kind == k && (k != REQ_ABANDONED || got[i].end == e);
        return n;
}

TEST(lifecycle) {
        setup(1024, 1024, 0);
        /* two processes, two contexts each */
        submit(100, 0xa, 1000, 0, 8, 0);
        submit(100, 0xb, 1100, 8, 8, 1);
        submit(200, 0xa, 1200, 16, 8, 0);
        CHECK_EQ(tracker_inflight_total(&t), 24);
        CHECK_EQ(tracker_inflight(&t, 100), 16);

        reap(100, 0xa, 5000, 0, 4, 4096, NULL);
        CHECK_EQ(n_got, 4);
        for (size_t i = 0; i < 4; i++) {
                CHECK_EQ(got[i].kind, REQ_COMPLETED);
                CHECK_EQ(got[i].iocb, iocb_addr((uint32_t) i));
                CHECK_EQ(got[i].data, i);
                CHECK_EQ(got[i].end_time - got[i].submit_time, 4000);
                CHECK_EQ(got[i].submit_tid, 101);
                CHECK_EQ(got[i].reap_tid, 102);
                CHECK_EQ(got[i].fd, 3 + i % 4);
                CHECK_EQ(got[i].offset, 4096 * i);
                CHECK_STR(got[i].comm, "proc");
        }
        /* the same iocb in another context of the same process is another request */
        reap(100, 0xb, 5100, 0, 1, 0, NULL);
        hold_passes();
        CHECK_EQ(got[4].kind, REQ_UNMATCHED);
        CHECK_EQ(got[4].end, END_SUBMIT_UNSEEN);
        CHECK(!got[4].submit_known);

        /* data that disagrees with the submit: stale, not merged */
        uint64_t wrong = 0xdead;
        reap(100, 0xa, 5200, 4, 1, 4096, &wrong);
        CHECK_EQ(got[5].kind, REQ_STALE);
        CHECK_EQ(got[5].event_data, 0xdead);
        CHECK_EQ(got[5].data, 4);
        CHECK(events[0].data_mismatch && events[0].expected_data == 4);

        /* io_cancel in progress, then the completion: cancelled */
        simple_call(AIO_IO_CANCEL, 100, 5300, 0xa, iocb_addr(5), -115);
        reap(100, 0xa, 5400, 5, 1, -125, NULL);
        CHECK_EQ(got[6].kind, REQ_CANCELLED);
        CHECK_EQ(got[6].res, -125);

        /* io_destroy of (100, 0xa): exactly its last two requests; 0xb stays */
        n_got = 0;
        simple_call(AIO_IO_DESTROY, 100, 6000, 0xa, 0, 0);
        CHECK_EQ(n_got, 2);
        CHECK_EQ(count_kind(REQ_ABANDONED, END_DESTROY), 2);
        CHECK_EQ(got[0].end_time - got[0].submit_time, 5000);
        CHECK_EQ(tracker_inflight(&t, 100), 8);
        /* a failed io_destroy abandons nothing */
        simple_call(AIO_IO_DESTROY, 100, 6100, 0xb, 0, -22);
        CHECK_EQ(n_got, 2);

        /* the process exits: the rest of it */
        n_got = 0;
        tracker_process_end(&t, 100, 7000, END_EXIT);
        CHECK_EQ(count_kind(REQ_ABANDONED, END_EXIT), 8);
        CHECK_EQ(tracker_inflight(&t, 100), 0);
        CHECK_EQ(tracker_inflight(&t, 200), 8);
        /* exec: its contexts go, the process stays */
        n_got = 0;
        tracker_process_end(&t, 200, 7100, END_EXEC);
        CHECK_EQ(count_kind(REQ_ABANDONED, END_EXEC), 8);
        CHECK_EQ(tracker_inflight_total(&t), 0);

        /* pid 0 is no process: nothing kept, nothing ended, no hang */
        n_got = 0;
        submit(0, 0xa, 8000, 900, 2, 0);
        tracker_process_end(&t, 0, 8100, END_EXIT);
        CHECK_EQ(n_got, 0);
        CHECK_EQ(tracker_inflight(&t, 0), 0);

        CHECK_EQ(stats.completed, 5);
        CHECK_EQ(stats.cancelled, 1);
        CHECK_EQ(stats.stale, 1);
        CHECK_EQ(stats.unmatched, 1);
        CHECK_EQ(stats.abandoned, 18);
        tracker_done(&t);
}

TEST(bounds) {
        /* per process: the process's oldest goes */
        setup(1024, 4, 0);
        submit(100, 0xa, 1000, 0, 8, 0);
        submit(200, 0xa, 1000, 100, 3, 0);
        CHECK_EQ(n_got, 4);
        for (size_t i = 0; i < 4; i++) {
                CHECK_EQ(got[i].kind, REQ_ABANDONED);
                CHECK_EQ(got[i].end, END_EVICTED);
                CHECK_EQ(got[i].iocb, iocb_addr((uint32_t) i));
        }
        CHECK_EQ(tracker_inflight(&t, 100), 4);
        CHECK_EQ(tracker_inflight(&t, 200), 3);
        CHECK_EQ(stats.evicted, 4);
        /* the completion of an evicted request: unmatched, and said why */
        n_got = 0;
        reap(100, 0xa, 2000, 0, 1, 0, NULL);
        hold_passes();
        CHECK_EQ(got[0].kind, REQ_UNMATCHED);
        CHECK_EQ(got[0].end, END_SUBMIT_UNTRACKED);
        tracker_done(&t);

        /* in total: the oldest of all goes, whoever it belongs to; nodes grow up to the bound and no further */
        setup(2000, 4000, 0);
        for (uint32_t i = 0; i < 3000; i += 100)
                submit(1 + i % 7, 0xa, 1000 + i, i, 100, 0);
        CHECK_EQ(tracker_inflight_total(&t), 2000);
        CHECK_EQ(n_got, 1000);
        CHECK_EQ(got[0].iocb, iocb_addr(0));
        CHECK_EQ(got[999].iocb, iocb_addr(999));
        CHECK(t.aio.cap == 2000);
        tracker_done(&t);
}

TEST(unidentified) {
        setup(1024, 1024, 0);
        submit(100, 0xa, 1000, 0, 4, 0);
        /* two completions the reader could not read, then the context goes: two requests may have been them */
        events[0] = (struct event_info) { .state = MEM_FAULT };
        events[1] = (struct event_info) { .state = MEM_STALE };
        struct aio_call c = { .syscall = AIO_IO_GETEVENTS, .pid = 100, .tid = 100, .comm = "proc", .enter_time = 1500,
                              .exit_time = 1600, .enter_seen = true, .args_known = true, .args = { 0xa }, .ret = 2,
                              .events = events, .n_items = 2, .n_wanted = 2 };
        aio_requests_call(&t, &c, 0);
        tracker_flush(&t);
        CHECK_EQ(n_got, 0);
        simple_call(AIO_IO_DESTROY, 100, 2000, 0xa, 0, 0);
        CHECK_EQ(count_kind(REQ_UNKNOWN, 0), 2);
        CHECK_EQ(count_kind(REQ_ABANDONED, END_DESTROY), 2);

        /* an iocb submitted again while the tracker still has it: its end was not seen */
        n_got = 0;
        submit(100, 0xb, 3000, 50, 1, 1);
        submit(100, 0xb, 4000, 50, 1, 1);
        CHECK_EQ(n_got, 1);
        CHECK_EQ(got[0].kind, REQ_UNKNOWN);
        CHECK_EQ(got[0].end, END_RESUBMITTED);
        CHECK_EQ(tracker_inflight(&t, 100), 1);
        tracker_done(&t);
}

static uint32_t stuck_now;
static void add_stuck(void *userdata, const char *comm, const char *unit, uint32_t in_flight, uint32_t stuck) {
        stuck_now += stuck;
}

/* A request in flight longer than stuck_after is said stuck once, at a look (once a second), as it is then, and
 * stays in flight; it ends later as any other; the processes count those stuck now. */
TEST(stuck) {
        setup(64, 64, 0);
        const uint64_t s = 1000000000ull;
        tracker_set_stuck_after(&t, 10 * s);
        submit(100, 0xc1, 1 * s, 0, 2, IOCB_CMD_PREAD);
        submit(100, 0xc1, 5 * s, 2, 1, IOCB_CMD_PREAD);
        tracker_tick(&t, 10 * s);
        CHECK_EQ(n_got, 0); /* none 10 s old yet */
        tracker_tick(&t, 11 * s + 5);
        CHECK_EQ(n_got, 2);
        for (size_t i = 0; i < n_got; i++) {
                CHECK_EQ(got[i].kind, REQ_STUCK);
                CHECK_EQ(got[i].end_time - got[i].submit_time, 10 * s + 5);
        }
        CHECK_EQ(stats.stuck, 2);
        tracker_tick(&t, 11 * s + 500); /* within the second since the last look: not looked at */
        tracker_tick(&t, 12 * s + 10);  /* looked at: those told are not told again */
        CHECK_EQ(n_got, 2);
        stuck_now = 0;
        tracker_foreach_process(&t, add_stuck, NULL);
        CHECK_EQ(stuck_now, 2);
        reap(100, 0xc1, 13 * s, 0, 1, 4096, NULL);
        CHECK_EQ(n_got, 3);
        CHECK_EQ(got[2].kind, REQ_COMPLETED);
        CHECK_EQ(got[2].end_time - got[2].submit_time, 12 * s);
        stuck_now = 0;
        tracker_foreach_process(&t, add_stuck, NULL);
        CHECK_EQ(stuck_now, 1);
        tracker_tick(&t, 15 * s + 1); /* the third, submitted at 5 s */
        CHECK_EQ(n_got, 4);
        CHECK_EQ(got[3].kind, REQ_STUCK);
        CHECK_EQ(got[3].iocb, iocb_addr(2));
        tracker_set_stuck_after(&t, 0); /* off: nothing more said */
        submit(100, 0xc1, 16 * s, 3, 1, IOCB_CMD_PREAD);
        tracker_tick(&t, 100 * s);
        CHECK_EQ(n_got, 4);
        tracker_done(&t);
}

/* The requests summed in the kernel: at each look (the whole map), those in flight longer than stuck_after and not
 * told at the last look are told, once; one that left the map and a new one at its key is another. */
TEST(kernel_stuck) {
        setup(64, 64, 0);
        const uint64_t s = 1000000000ull;
        struct kernel_stuck k = {};
        CHECK(tracker_proc(&t, 200, "summed", 0) != NULL);
        struct sum_key keys[3] = { { .tgid = 200, .kind = SUM_AIO, .ctx = 0xc2, .id = 0x100 },
                                   { .tgid = 200, .kind = SUM_AIO, .ctx = 0xc2, .id = 0x140 },
                                   { .kind = SUM_URING, .ctx = 0xe1, .id = 0xf00 } };
        /* an AIO poll; one whose completion was seen in its ring; an io_uring read */
        struct sum_req reqs[3] = { { .submit_time = 1 * s, .data = 7, .tgid = 200, .seen_pid = 200, .opcode = 5 },
                                   { .submit_time = 1 * s, .tgid = 200, .seen_pid = 200, .flags = SUM_RING_SEEN },
                                   { .submit_time = 3 * s, .data = 9, .tgid = 200, .seen_pid = 200,
                                     .opcode = 22 /* IORING_OP_READ */ } };
        static const struct {
                uint64_t now;
                size_t in_map; /* the first n of the map */
                size_t told;   /* in all, after the look */
                uint32_t stuck_now;
        } looks[] = {
                { 5, 3, 0, 0 },  /* none in flight for 5 s yet */
                { 7, 3, 1, 1 },  /* the poll */
                { 9, 3, 2, 2 },  /* the read; the poll not again */
                { 11, 2, 2, 0 }, /* the read ended; the poll's iocb submitted again at 10 s */
                { 16, 2, 3, 1 }, /* that one: another request */
        };
        for (size_t l = 0; l < ELEMENTS(looks); l++) {
                if (looks[l].now == 11)
                        reqs[0].submit_time = 10 * s;
                kernel_stuck_begin(&k, &t, 5 * s, looks[l].now * s);
                for (size_t i = 0; i < looks[l].in_map; i++)
                        CHECK_EQ(kernel_stuck_add(&k, &t, &keys[i], &reqs[i]), 0);
                kernel_stuck_end(&k, &t);
                CHECK_EQ(n_got, looks[l].told);
                stuck_now = 0;
                tracker_foreach_process(&t, add_stuck, NULL);
                CHECK_EQ(stuck_now, looks[l].stuck_now);
        }
        CHECK(got[0].kind == REQ_STUCK && got[0].iocb == 0x100 && got[0].data == 7 && got[0].submit_tid == 0);
        CHECK_EQ(got[0].end_time - got[0].submit_time, 6 * s);
        CHECK_STR(got[0].comm, "summed");
        CHECK_STR(request_op_word(&got[0])->s, "poll");
        CHECK(got[1].interface == REQ_IO_URING && got[1].iocb == 0xf00 && got[1].data == 9);
        CHECK_STR(request_op_word(&got[1])->s, "pread");
        CHECK(got[2].iocb == 0x100 && got[2].submit_time == 10 * s);
        CHECK_EQ(stats.stuck, 3);
        kernel_stuck_done(&k);
        tracker_done(&t);
}

TEST(summaries) {
        setup(1024, 1024, 1000000); /* 1 ms intervals */
        tracker_tick(&t, 10000000);  /* starts the clock: the first interval ends at 11 ms */
        submit(100, 0xa, 10100000, 0, 4, 0);  /* 4 preads */
        submit(100, 0xa, 10200000, 4, 2, 1);  /* 2 pwrites */
        reap(100, 0xa, 10300000, 0, 4, 4096, NULL);
        reap(100, 0xa, 10400000, 4, 1, 512, NULL);
        reap(100, 0xa, 10500000, 5, 1, -28, NULL);
        submit(200, 0xa, 10600000, 100, 1, 2);
        tracker_tick(&t, 10999999);
        CHECK_EQ(n_sums, 0);
        tracker_tick(&t, 11000000);
        CHECK_EQ(n_sums, 2);
        const struct proc_interval *a = sum_meta[0].pid == 100 ? &sums[0] : &sums[1];
        size_t ia = sum_meta[0].pid == 100 ? 0 : 1;
        CHECK_EQ(a->submitted[0], 4);
        CHECK_EQ(a->submitted[1], 2);
        CHECK_EQ(a->completed[0], 4);
        CHECK_EQ(a->completed[1], 2);
        CHECK_EQ(a->bytes_read, 4 * 4096);
        CHECK_EQ(a->bytes_written, 512);
        CHECK_EQ(a->errors, 1);
        CHECK_EQ(a->inflight_max, 6);
        CHECK_EQ(sum_meta[ia].inflight, 0);
        CHECK_EQ(sum_meta[ia].end - sum_meta[ia].start, 1000000);
        CHECK_EQ(sum_lat_count[ia], 6);
        CHECK_EQ(sum_p50[ia], 200000); /* 4 x 200 us, 200 us, 300 us */
        CHECK(!sum_meta[ia].last);
        /* idle for a long time: no empty summaries on the way; the quiet process is forgotten, the one with a
         * request in flight is kept */
        n_sums = 0;
        tracker_tick(&t, 500000000);
        CHECK_EQ(n_sums, 0);
        CHECK_EQ(t.procs.table.used, 1);
        CHECK_EQ(tracker_inflight(&t, 200), 1);
        CHECK(t.next_summary > 500000000 && t.next_summary <= 501000000);
        /* its end: the last summary, for the part of the interval it lived */
        tracker_process_end(&t, 200, 500500000, END_EXIT);
        CHECK_EQ(n_sums, 1);
        CHECK(sum_meta[0].last);
        CHECK_EQ(sum_meta[0].pid, 200);
        CHECK_EQ(sums[0].abandoned, 1);
        CHECK_EQ(sum_meta[0].end - sum_meta[0].start, 500000);
        tracker_done(&t);

        /* before the first interval has begun (the daemon's first drain), a process's interval begins at its
         * first record, not at the clock's 0 */
        setup(1024, 1024, 60000000000ull);
        submit(300, 0xa, 7000000000000ull, 0, 1, 0);
        reap(300, 0xa, 7000000100000ull, 0, 1, 4096, NULL);
        tracker_tick(&t, 7000000200000ull); /* the first drain: the clock starts */
        tracker_process_end(&t, 300, 7000001000000ull, END_EXIT);
        CHECK_EQ(n_sums, 1);
        CHECK_EQ(sum_meta[0].start, 7000000000000ull);
        CHECK_EQ(sum_meta[0].end - sum_meta[0].start, 1000000);
        tracker_done(&t);
}

/* File summaries at the ends of the same intervals as the processes', at the end of tracing, and at once when a
 * reload turns them off.  No /proc here: every request is without a known file, in the other line. */
TEST(file_summaries) {
        setup(1024, 1024, 1000000);
        CHECK_EQ(tracker_set_options(&t, true, 1000000, 5, 0), 0);
        tracker_tick(&t, 10000000);
        submit(100, 0xa, 10100000, 0, 4, 0);
        submit(200, 0xa, 10200000, 8, 2, 1);
        reap(100, 0xa, 10300000, 0, 4, 4096, NULL);
        reap(200, 0xa, 10400000, 8, 1, 4096, NULL);
        tracker_tick(&t, 11000000);
        CHECK_EQ(n_sums, 2);
        CHECK_EQ(n_files, 1);
        CHECK(files[0].path == NULL);
        CHECK_EQ(file_requests[0], 5);
        CHECK_EQ(files[0].without_path, 5);
        CHECK_EQ(files[0].start, 10000000);
        CHECK_EQ(files[0].end, 11000000);
        CHECK(!files[0].last);
        /* a quiet interval says nothing; turned off in the next, what it counted is said then */
        n_files = 0;
        tracker_tick(&t, 12000000);
        CHECK_EQ(n_files, 0);
        reap(200, 0xa, 12100000, 9, 1, 4096, NULL);
        CHECK_EQ(tracker_set_options(&t, true, 1000000, 0, 12500000), 0);
        CHECK_EQ(n_files, 1);
        CHECK_EQ(file_requests[0], 1);
        CHECK_EQ(files[0].start, 12000000);
        CHECK_EQ(files[0].end, 12500000);
        CHECK(t.files == NULL);
        /* on again: from then, to the end of tracing */
        CHECK_EQ(tracker_set_options(&t, true, 1000000, 5, 12600000), 0);
        submit(100, 0xa, 12700000, 20, 1, 0);
        n_files = 0;
        tracker_finish(&t, 12800000);
        CHECK_EQ(n_files, 0); /* in flight: nothing ended */
        tracker_process_end(&t, 100, 12900000, END_EXIT);
        tracker_finish(&t, 12950000);
        CHECK_EQ(n_files, 1);
        CHECK_EQ(file_abandoned[0], 1);
        CHECK_EQ(files[0].start, 12800000);
        CHECK(files[0].last);
        tracker_done(&t);
}

/* io_uring's requests: by (process, ring, request), a multishot one's completions each a record until its
 * last, a request reused unseen, a completion of no submit, and what is in flight when the process ends. */
TEST(uring) {
        setup(1024, 1024, 0);
        struct uring_submit u = { .pid = 300, .tid = 301, .comm = "ring", .ring = 0x1a1a, .req = 0xa0, .user_data = 7,
                                  .time = 1000, .opcode = IOCB_CMD_PREAD, .details = true, .nbytes_known = true,
                                  .fd = 5, .off = 8192, .len = 4096 };
        uring_requests_submit(&t, &u, 0);
        tracker_flush(&t);
        CHECK_EQ(tracker_inflight(&t, 300), 1);
        uring_requests_complete(&t, &(struct uring_completion) { .pid = 300, .tid = 302, .ring = 0x1a1a, .req = 0xa0,
                                                               .user_data = 7, .res = 4096, .cflags = 0,
                                                               .kernel_file = NULL, .time = 3000 }, 0);
        tracker_flush(&t);
        CHECK_EQ(n_got, 1);
        CHECK_EQ(got[0].kind, REQ_COMPLETED);
        CHECK_EQ(got[0].interface, REQ_IO_URING);
        CHECK_EQ(got[0].offset, 8192);
        CHECK_EQ(got[0].nbytes, 4096);
        CHECK_EQ(got[0].res, 4096);
        CHECK_EQ(got[0].reap_tid, 302);
        CHECK_EQ(got[0].end_time - got[0].submit_time, 2000);
        CHECK(!got[0].no_offset);
        /* multishot: two completions with IORING_CQE_F_MORE, then the last */
        u.req = 0xb0, u.user_data = 8, u.opcode = URING_OPCODE_BASE + 27, u.details = false, u.time = 4000;
        uring_requests_submit(&t, &u, 0);
        for (int i = 0; i < 3; i++) {
                /* those with IORING_CQE_F_MORE come with no request (an auxiliary CQE): found by user_data */
                uring_requests_complete(&t, &(struct uring_completion) { .pid = 300, .tid = 301, .ring = 0x1a1a,
                                                                       .req = i < 2 ? 0 : 0xb0, .user_data = 8,
                                                                       .res = 100 + i, .cflags = i < 2 ? 2 : 0,
                                                                       .kernel_file = NULL,
                                                                       .time = 5000 + (uint64_t) i }, 0);
                tracker_flush(&t);
        }
        CHECK_EQ(n_got, 4);
        for (size_t i = 1; i < 4; i++) {
                CHECK_EQ(got[i].kind, REQ_COMPLETED);
                CHECK_EQ(got[i].iocb, 0xb0);
                CHECK_EQ(got[i].res, 100 + (int64_t) i - 1);
                CHECK(got[i].no_offset);
        }
        CHECK_EQ(tracker_inflight(&t, 300), 0);
        /* the same request again before its completion was seen: unknown; a completion of nothing: unmatched */
        u.req = 0xc0;
        uring_requests_submit(&t, &u, 0);
        uring_requests_submit(&t, &u, 0);
        tracker_flush(&t);
        CHECK_EQ(n_got, 5);
        CHECK_EQ(got[4].kind, REQ_UNKNOWN);
        CHECK_EQ(got[4].end, END_RESUBMITTED);
        uring_requests_complete(&t, &(struct uring_completion) { .pid = 300, .tid = 301, .ring = 0x1a1a, .req = 0xd0,
                                                               .user_data = 9, .res = 0, .cflags = 0,
                                                               .kernel_file = NULL, .time = 9000 }, 0);
        tracker_flush(&t);
        CHECK_EQ(n_got, 6);
        CHECK_EQ(got[5].kind, REQ_UNMATCHED);
        /* a completion the CQ ring had no room for: found by its ring and user_data, the oldest first */
        u.req = 0xe0, u.user_data = 42;
        uring_requests_submit(&t, &u, 0);
        u.req = 0xe8;
        uring_requests_submit(&t, &u, 0);
        uring_requests_overflow(&t, &(struct uring_completion) { .pid = 300, .tid = 301, .ring = 0x1a1a,
                                                               .user_data = 42, .res = 5, .cflags = 0, .time = 9500
                                                               }, false);
        tracker_flush(&t);
        CHECK_EQ(n_got, 7);
        CHECK_EQ(got[6].kind, REQ_COMPLETED);
        CHECK_EQ(got[6].iocb, 0xe0);
        CHECK_EQ(got[6].cq_overflow, CQ_OVERFLOW_KEPT);
        CHECK_EQ(stats.cq_overflows, 1);
        uring_requests_overflow(&t, &(struct uring_completion) { .pid = 300, .tid = 301, .ring = 0x1a1a,
                                                               .user_data = 42, .res = 6, .cflags = 0, .time = 9600
                                                               }, true);
        tracker_flush(&t);
        CHECK_EQ(n_got, 8);
        CHECK_EQ(got[7].iocb, 0xe8);
        CHECK_EQ(got[7].cq_overflow, CQ_OVERFLOW_DROPPED);
        /* io_uring turned off: what is in flight ends unknown */
        u.req = 0xf0;
        uring_requests_submit(&t, &u, 0);
        n_got = 0;
        uring_requests_stop(&t, 9700);
        CHECK_EQ(n_got, 2); /* and the one of 0xc0 */
        CHECK(got[0].kind == REQ_UNKNOWN && got[0].end == END_UNTRACED);
        CHECK(got[1].kind == REQ_UNKNOWN && got[1].end == END_UNTRACED);
        u.req = 0xc0;
        uring_requests_submit(&t, &u, 0);
        tracker_flush(&t);
        /* the process ends with one in flight */
        n_got = 6;
        n_sums = 0;
        tracker_process_end(&t, 300, 10000, END_EXIT);
        CHECK_EQ(n_got, 7);
        CHECK_EQ(got[6].kind, REQ_ABANDONED);
        CHECK_EQ(got[6].end, END_EXIT);
        tracker_done(&t);
}

/* A zero-copy send: its result comes with IORING_CQE_F_MORE, then a notification from a request of the
 * kernel's own, with the send's user_data, ends it. */
TEST(uring_zero_copy_notification) {
        setup(1024, 1024, 0);
        struct uring_submit u = { .pid = 300, .tid = 301, .comm = "ring", .ring = 0x1a1a, .req = 0x90, .user_data = 11,
                                  .time = 1000, .opcode = URING_OPCODE_BASE + 47, .fd = 6 };
        uring_requests_submit(&t, &u, 0);
        uring_requests_complete(&t, &(struct uring_completion) { .pid = 300, .tid = 301, .ring = 0x1a1a, .req = 0x90,
                                                               .user_data = 11, .res = 4096,
                                                               .cflags = IORING_CQE_F_MORE, .kernel_file = NULL,
                                                               .time = 2000 }, 0);
        tracker_flush(&t);
        CHECK_EQ(n_got, 1);
        CHECK_EQ(tracker_inflight(&t, 300), 1);
        uring_requests_complete(&t, &(struct uring_completion) { .pid = 300, .tid = 301, .ring = 0x1a1a, .req = 0x98,
                                                               .user_data = 11, .res = 0,
                                                               .cflags = IORING_CQE_F_NOTIF, .kernel_file = NULL,
                                                               .time = 3000 }, 0);
        tracker_flush(&t);
        CHECK_EQ(n_got, 2);
        CHECK_EQ(got[1].kind, REQ_COMPLETED);
        CHECK_EQ(got[1].iocb, 0x90);
        CHECK_EQ(got[1].opcode, URING_OPCODE_BASE + 47);
        CHECK_EQ(got[1].end_time - got[1].submit_time, 2000);
        CHECK_EQ(tracker_inflight(&t, 300), 0);
        CHECK_EQ(stats.unmatched, 0);
        tracker_done(&t);
}

/* IOSQE_CQE_SKIP_SUCCESS: a request that succeeds posts no CQE.  Its request reused by another submit, it
 * completed (a failure would have posted one), with no result or latency to say; one in flight at its
 * process's end may have completed or not; one that fails posts its CQE as any other. */
TEST(uring_cqe_skip_success) {
        setup(1024, 1024, 10000000); /* an interval longer than the test: the last summary at the end */
        struct uring_submit u = { .pid = 300, .tid = 301, .comm = "ring", .ring = 0x1a1a, .req = 0x90, .user_data = 11,
                                  .time = 1000, .opcode = IOCB_CMD_PWRITE, .fd = 6, .cqe_skip = true };
        uring_requests_submit(&t, &u, 0);
        u.user_data = 12, u.time = 2000, u.cqe_skip = false;
        uring_requests_submit(&t, &u, 0); /* the same request again */
        tracker_flush(&t);
        CHECK_EQ(n_got, 1);
        CHECK_EQ(got[0].kind, REQ_COMPLETED);
        CHECK_EQ(got[0].end, END_NO_CQE);
        CHECK(!got[0].has_result);
        CHECK_EQ(got[0].data, 11);
        CHECK_STR(request_end_name(got[0].end), "no CQE asked");
        uring_requests_complete(&t, &(struct uring_completion) { .pid = 300, .tid = 301, .ring = 0x1a1a, .req = 0x90,
                                                               .user_data = 12, .res = 4096, .cflags = 0,
                                                               .kernel_file = NULL, .time = 3000 }, 0);
        /* one that fails: its CQE */
        u.req = 0xa0, u.user_data = 13, u.cqe_skip = true;
        uring_requests_submit(&t, &u, 0);
        uring_requests_complete(&t, &(struct uring_completion) { .pid = 300, .tid = 301, .ring = 0x1a1a, .req = 0xa0,
                                                               .user_data = 13, .res = -5, .cflags = 0,
                                                               .kernel_file = NULL, .time = 4000 }, 0);
        tracker_flush(&t);
        CHECK_EQ(n_got, 3);
        CHECK_EQ(got[2].kind, REQ_COMPLETED);
        CHECK_EQ(got[2].res, -5);
        CHECK_EQ(got[2].end, END_REAPED);
        /* linked before another, which completes: it began only once this one had succeeded */
        u.req = 0xc0, u.user_data = 15, u.linked = true;
        uring_requests_submit(&t, &u, 0);
        u.req = 0xc8, u.user_data = 16, u.linked = false, u.cqe_skip = false;
        uring_requests_submit(&t, &u, 0);
        uring_requests_complete(&t, &(struct uring_completion) { .pid = 300, .tid = 301, .ring = 0x1a1a, .req = 0xc8,
                                                               .user_data = 16, .res = 4096, .cflags = 0,
                                                               .kernel_file = NULL, .time = 4500 }, 0);
        tracker_flush(&t);
        CHECK_EQ(n_got, 5);
        CHECK_EQ(got[3].data, 16);
        CHECK_EQ(got[4].data, 15);
        CHECK_EQ(got[4].kind, REQ_COMPLETED);
        CHECK_EQ(got[4].end, END_NO_CQE);
        /* in flight at the process's end */
        u.req = 0xb0, u.user_data = 14, u.cqe_skip = true;
        uring_requests_submit(&t, &u, 0);
        n_sums = 0;
        tracker_process_end(&t, 300, 5000, END_EXIT);
        CHECK_EQ(n_got, 6);
        CHECK_EQ(got[5].kind, REQ_UNKNOWN);
        CHECK_EQ(got[5].end, END_NO_CQE);
        /* the summary counts the reused one and the linked one as completed */
        CHECK(n_sums >= 1);
        CHECK_EQ(sums[0].completed[IOCB_CMD_PWRITE], 5);
        CHECK_EQ(sums[0].unknown, 1);
        tracker_done(&t);
}

/* A reaper on one CPU can reap a request before the submitter's io_submit, on another, returns: the completion
 * comes first in time order, and waits for the submit. */
TEST(early_completion) {
        setup(1024, 1024, 10 * TRACKER_EARLY_HOLD_NS); /* no interval ends on the way */
        tracker_tick(&t, 10000000);
        /* the io_submit began at 10.1 ms; its completion was reaped 5 ns later; the submit returns after */
        reap(100, 0xa, 10100005, 0, 1, 4096, NULL);
        CHECK_EQ(n_got, 0);
        submit(100, 0xa, 10100000, 0, 1, 0);
        CHECK_EQ(n_got, 1);
        CHECK_EQ(got[0].kind, REQ_COMPLETED);
        CHECK_EQ(got[0].end, END_REAPED);
        CHECK(got[0].submit_known);
        CHECK_EQ(got[0].fd, 3);
        CHECK_EQ(got[0].offset, 0);
        CHECK_EQ(got[0].res, 4096);
        CHECK_EQ(got[0].end_time - got[0].submit_time, 5);
        CHECK_EQ(got[0].submit_tid, 101);
        CHECK_EQ(got[0].reap_tid, 102);
        CHECK_EQ(tracker_inflight(&t, 100), 0);
        /* the same iocb submitted again, and reaped in order: nothing left over from the first */
        submit(100, 0xa, 10200000, 0, 1, 0);
        reap(100, 0xa, 10300000, 0, 1, 4096, NULL);
        CHECK_EQ(n_got, 2);
        CHECK_EQ(got[1].kind, REQ_COMPLETED);

        /* A completion of an iocb whose submit began after it cannot be that submit's: it stays unmatched, and
         * the submit is in flight. */
        reap(100, 0xa, 10400000, 7, 1, 512, NULL);
        submit(100, 0xa, 10400001, 7, 1, 1);
        CHECK_EQ(n_got, 2);
        CHECK_EQ(tracker_inflight(&t, 100), 1);
        tracker_tick(&t, 10400000 + TRACKER_EARLY_HOLD_NS);
        CHECK_EQ(n_got, 2); /* held for the whole hold */
        tracker_tick(&t, 10400001 + TRACKER_EARLY_HOLD_NS);
        CHECK_EQ(n_got, 3);
        CHECK_EQ(got[2].kind, REQ_UNMATCHED);
        CHECK_EQ(got[2].end, END_SUBMIT_UNSEEN);
        CHECK_EQ(got[2].res, 512);
        CHECK_EQ(stats.unmatched, 1);
        CHECK_EQ(stats.completed, 2);

        /* The summary counts what the records say: 2 completed (with their bytes and latencies), 1 unmatched,
         * not 3 completed. */
        tracker_finish(&t, 10400001 + TRACKER_EARLY_HOLD_NS);
        CHECK_EQ(n_sums, 1);
        CHECK_EQ(sums[0].completed[0], 2);
        CHECK_EQ(sums[0].completed[REQ_OPS - 1], 0);
        CHECK_EQ(sums[0].unmatched, 1);
        CHECK_EQ(sums[0].bytes_read, 2 * 4096);
        CHECK_EQ(sum_lat_count[0], 2);

        /* A process that ends: what it held is unmatched then, in its last summary. */
        n_got = n_sums = 0;
        reap(300, 0xa, 10500000, 9, 1, 0, NULL);
        tracker_process_end(&t, 300, 10600000, END_EXIT);
        CHECK_EQ(n_got, 1);
        CHECK_EQ(got[0].kind, REQ_UNMATCHED);
        CHECK_EQ(n_sums, 1);
        CHECK_EQ(sums[0].unmatched, 1);
        CHECK_EQ(t.n_early, 0);
        tracker_done(&t);
}

/* A random mix of submits, reaps, destroys and exits against a list of what is in flight. */
struct model_req {
        uint32_t pid;
        uint64_t ctx;
        uint32_t iocb;
};

static void ring_event(uint32_t pid, uint64_t ctx, uint32_t i, bool reaped, uint64_t time, bool want_taken) {
        struct io_event ev = { .data = i, .obj = iocb_addr(i), .res = 4096, .res2 = 0 };
        CHECK_EQ(aio_requests_ring_event(&t, pid, ctx, &ev, reaped, time), want_taken);
        tracker_flush(&t);
}

/* Completions seen in the ring: reaped by the program itself when no call reaps them (at once when the ring's
 * head has passed them and the process never reaps by a call; else at the iocb's next submit, io_destroy or the
 * process's end), with their result and a latency to when they were seen; reaped by a call, as any other. */
TEST(reaped_in_user_space) {
        setup(1024, 1024, 1000000000);
        uint64_t ctx = 0x7000;
        submit(100, ctx, 1000, 0, 4, IOCB_CMD_PREAD);
        ring_event(100, ctx, 0, false, 2000, true);  /* seen, not yet reaped: waits */
        ring_event(100, ctx, 0, false, 2500, false); /* seen again: nothing more */
        ring_event(100, ctx, 9, true, 2600, false);  /* no such request */
        CHECK_EQ(n_got, 0);
        CHECK_EQ(tracker_inflight(&t, 100), 3); /* complete, only not known reaped */
        ring_event(100, ctx, 1, true, 3000, true);   /* seen reaped, and this process never reaps by a call */
        CHECK_EQ(n_got, 1);
        CHECK(got[0].kind == REQ_COMPLETED && got[0].reaped_in_user_space && got[0].iocb == iocb_addr(1) &&
              got[0].res == 4096 && got[0].has_result && got[0].end_time == 3000 && got[0].reap_tid == 0);
        submit(100, ctx, 4000, 0, 1, IOCB_CMD_PREAD); /* iocb 0 again: the earlier request was reaped */
        CHECK_EQ(n_got, 2);
        CHECK(got[1].kind == REQ_COMPLETED && got[1].reaped_in_user_space && got[1].iocb == iocb_addr(0) &&
              got[1].end_time == 2000);
        reap(100, ctx, 5000, 2, 1, 4096, NULL); /* by a call: as ever, and the process now reaps by calls */
        CHECK(n_got == 3 && got[2].kind == REQ_COMPLETED && !got[2].reaped_in_user_space && got[2].reap_tid == 102);
        ring_event(100, ctx, 3, true, 6000, true); /* seen reaped, but a call may have it: waits */
        CHECK_EQ(n_got, 3);
        simple_call(AIO_IO_DESTROY, 100, 7000, ctx, 0, 0);
        CHECK_EQ(n_got, 5); /* iocb 3, seen: reaped in user space; iocb 0's new request: abandoned */
        CHECK_EQ(count_kind(REQ_ABANDONED, END_DESTROY), 1);
        size_t user = 0;
        for (size_t i = 0; i < n_got; i++)
                user += got[i].reaped_in_user_space;
        CHECK_EQ(user, 3);
        tracker_process_end(&t, 100, 8000, END_EXIT);
        CHECK(n_sums >= 1);
        uint64_t completed = 0, reaped_user = 0, lat = 0;
        for (size_t i = 0; i < n_sums; i++) {
                for (unsigned k = 0; k < REQ_OPS; k++)
                        completed += sums[i].completed[k];
                reaped_user += sums[i].reaped_in_user_space;
                lat += sum_lat_count[i];
        }
        CHECK_EQ(completed, 4);
        CHECK_EQ(reaped_user, 3);
        CHECK_EQ(lat, 1); /* a bound is not among the percentiles */
        CHECK_EQ(stats.completed, 4);
        tracker_done(&t);
}

TEST(model) {
        enum { LIMIT = 300, PER = 120 };
        setup(LIMIT, PER, 0);
        static struct model_req live[LIMIT + 256];
        size_t n_live = 0;
        uint32_t next_iocb = 0;
        uint64_t time = 1000;
        srand(7);
        size_t ended = 0, submitted = 0;
        for (int step = 0; step < 20000; step++) {
                time += 10;
                int what = rand() % 100;
                uint32_t pid = 1 + (uint32_t) (rand() % 3);
                uint64_t ctx = 0x10 + (uint64_t) (rand() % 2);
                size_t before = n_got;
                if (what < 50) {
                        unsigned n = 1 + (unsigned) (rand() % 16);
                        submit(pid, ctx, time, next_iocb, n, 0);
                        /* the model evicts as the tracker must: the process's oldest, else the oldest of all */
                        for (unsigned k = 0; k < n; k++) {
                                size_t mine = 0, oldest_mine = SIZE_MAX;
                                for (size_t i = 0; i < n_live; i++)
                                        if (live[i].pid == pid) {
                                                mine++;
                                                if (oldest_mine == SIZE_MAX)
                                                        oldest_mine = i;
                                        }
                                size_t victim = mine >= PER ? oldest_mine : n_live >= LIMIT ? 0 : SIZE_MAX;
                                if (victim != SIZE_MAX) {
                                        memmove(&live[victim], &live[victim + 1], (n_live - victim - 1) * sizeof(*live));
                                        n_live--;
                                }
                                live[n_live++] = (struct model_req) { pid, ctx, next_iocb + k };
                        }
                        next_iocb += n;
                        submitted += n;
                } else if (what < 90 && n_live) {
                        /* reap one live request */
                        struct model_req m = live[(size_t) rand() % n_live];
                        uint32_t first = m.iocb;
                        reap(m.pid, m.ctx, time, first, 1, 0, NULL);
                        CHECK_EQ(n_got - before, 1);
                        CHECK(n_got > before && got[n_got - 1].kind == REQ_COMPLETED);
                        for (size_t i = 0; i < n_live; i++)
                                if (live[i].pid == m.pid && live[i].ctx == m.ctx && live[i].iocb == first) {
                                        memmove(&live[i], &live[i + 1], (n_live - i - 1) * sizeof(*live));
                                        n_live--;
                                        break;
                                }
                } else if (what < 97) {
                        simple_call(AIO_IO_DESTROY, pid, time, ctx, 0, 0);
                        size_t k = 0;
                        for (size_t i = 0; i < n_live; i++)
                                if (!(live[i].pid == pid && live[i].ctx == ctx))
                                        live[k++] = live[i];
                        CHECK_EQ(n_got - before, n_live - k);
                        n_live = k;
                } else {
                        tracker_process_end(&t, pid, time, END_EXIT);
                        size_t k = 0;
                        for (size_t i = 0; i < n_live; i++)
                                if (live[i].pid != pid)
                                        live[k++] = live[i];
                        CHECK_EQ(n_got - before, n_live - k);
                        n_live = k;
                }
                ended += n_got - before;
                n_got = 0;
                CHECK_EQ(tracker_inflight_total(&t), n_live);
                for (uint32_t p = 1; p <= 3; p++) {
                        size_t mine = 0;
                        for (size_t i = 0; i < n_live; i++)
                                mine += live[i].pid == p;
                        CHECK_EQ(tracker_inflight(&t, p), mine);
                }
                if (test_failures)
                        break;
        }
        /* every request ended exactly once, or is still in flight */
        CHECK_EQ(ended + n_live, submitted);
        tracker_done(&t);
}

TEST_MAIN("test-tracker")
