/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The whole pipeline without root: records written into two fake CPU rings (enter on one CPU, exit on the
 * other), real formats from the fixtures, the memory reader pointed at this very process, text out. */
#include "engine.h"

#include <linux/aio_abi.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "format_text.h"
#include "pipeline.h"
#include "ringbuf.h"
#include "test.h"


static uint32_t self_pid, self_tid;

/* Write a sys_enter/sys_exit record of `name` with the given fields into ring f. */
static void put_event(struct fake_ring *f, const struct event_desc *d, uint64_t id, uint64_t time, uint32_t cpu,
                      const uint64_t *values) {
        uint8_t raw[64] = {}, rec[128];
        uint16_t type = (uint16_t) d->tp_id;
        memcpy(raw, &type, 2);
        memcpy(raw + 4, &self_tid, 4);
        unsigned end = 8;
        for (unsigned i = 0; i < d->n_args; i++) {
                memcpy(raw + d->args[i].offset, &values[i], d->args[i].size);
                end = d->args[i].offset + d->args[i].size;
        }
        fake_ring_put(f, rec, build_sample(rec, id, self_pid, self_tid, time, cpu, raw, end));
}

static int64_t merged[4096];
static size_t n_merged;

static void collect_order(void *userdata, const struct entry *e) {
        if (e->kind == ENTRY_CALL && n_merged < ELEMENTSOF(merged))
                merged[n_merged++] = e->call->ret;
}

/* Records dealt at random over many rings, written in stages as the kernel would (each ring in time order) and
 * drained in between up to a moment before the newest: every call comes out once, in time order. */
static void merge_many_rings(const struct event_table *t) {
        CASE("64 rings, records dealt at random, drained in stages: all out, in time order");
        enum { N_RINGS = 64, N_RECORDS = 4096, STAGE = 300 };
        static struct fake_ring f[N_RINGS];
        static struct ring rings[N_RINGS];
        for (size_t i = 0; i < N_RINGS; i++) {
                fake_ring_init(&f[i], 16384, 0);
                CHECK_EQ(ring_init(&rings[i], f[i].base, FAKE_PAGE, 16384, (int) i), 0);
        }
        struct engine e;
        struct engine_options opt = { .max_iocbs_per_call = 256, .max_inflight = 1024, .records = RECORD_SYSCALLS };
        struct engine_callbacks cb = { .emit = collect_order };
        CHECK_EQ(engine_init(&e, rings, N_RINGS, t, &opt, &cb), 0);
        const struct event_desc *exit_destroy = find(t, "sys_exit_io_destroy");
        unsigned seed = 1;
        for (uint64_t i = 0; i < N_RECORDS; i++) {
                uint64_t ret[] = { i };
                seed = seed * 1103515245u + 12345u;
                put_event(&f[(seed >> 16) % N_RINGS], exit_destroy, 5, 1000 + 10 * i, 0, ret);
                if (i % STAGE == STAGE - 1) /* the last 50 records are too recent: held */
                        CHECK(engine_drain(&e, 1000 + 10 * (i - 50)));
        }
        CHECK(!engine_drain(&e, UINT64_MAX));
        CHECK_EQ(n_merged, N_RECORDS);
        size_t in_order = 0;
        for (size_t i = 0; i < n_merged; i++)
                in_order += merged[i] == (int64_t) i;
        CHECK_EQ(in_order, N_RECORDS);
        engine_done(&e);
        for (size_t i = 0; i < N_RINGS; i++) {
                ring_done(&rings[i]);
                fake_ring_free(&f[i]);
        }
}

static int select_answer, select_asked;

static int answer_select(void *userdata, uint32_t pid, uint32_t tid, const char *comm) {
        (void) userdata, (void) comm;
        CHECK_EQ(pid, self_pid);
        CHECK_EQ(tid, self_tid);
        select_asked++;
        return select_answer;
}

/* Decided in user space: a thread is asked about once; a reload asks again; one that cannot be told about is
 * counted and asked again at its next record. */
static void select_in_user_space(const struct event_table *t) {
        CASE("the select callback: asked once a thread, again after engine_reselect, unselectable counted");
        struct fake_ring f;
        fake_ring_init(&f, 16384, 0);
        struct ring ring;
        CHECK_EQ(ring_init(&ring, f.base, FAKE_PAGE, 16384, 0), 0);
        struct engine e;
        struct engine_options opt = { .max_iocbs_per_call = 256, .max_inflight = 1024, .records = RECORD_SYSCALLS };
        struct engine_callbacks cb = { .emit = collect_order, .select = answer_select };
        CHECK_EQ(engine_init(&e, &ring, 1, t, &opt, &cb), 0);
        const struct event_desc *exit_destroy = find(t, "sys_exit_io_destroy");
        n_merged = 0;
        uint64_t time = 1000;
        select_answer = 0;
        for (uint64_t i = 0; i < 3; i++)
                put_event(&f, exit_destroy, 5, time++, 0, (uint64_t[]) { 100 + i });
        CHECK(!engine_drain(&e, UINT64_MAX));
        CHECK_EQ(n_merged, 0);
        CHECK_EQ(select_asked, 1);
        select_answer = 1; /* the same thread, not asked again until the selection changes */
        put_event(&f, exit_destroy, 5, time++, 0, (uint64_t[]) { 103 });
        CHECK(!engine_drain(&e, UINT64_MAX));
        CHECK_EQ(n_merged, 0);
        engine_reselect(&e);
        put_event(&f, exit_destroy, 5, time++, 0, (uint64_t[]) { 104 });
        put_event(&f, exit_destroy, 5, time++, 0, (uint64_t[]) { 105 });
        CHECK(!engine_drain(&e, UINT64_MAX));
        CHECK_EQ(select_asked, 2);
        CHECK_EQ(n_merged, 2);
        CHECK(merged[0] == 104 && merged[1] == 105);
        engine_reselect(&e);
        select_answer = -ENOENT;
        put_event(&f, exit_destroy, 5, time++, 0, (uint64_t[]) { 106 });
        put_event(&f, exit_destroy, 5, time++, 0, (uint64_t[]) { 107 });
        CHECK(!engine_drain(&e, UINT64_MAX));
        CHECK_EQ(select_asked, 4);
        CHECK_EQ(e.stats.unselectable, 2);
        CHECK_EQ(n_merged, 2);
        engine_done(&e);
        ring_done(&ring);
        fake_ring_free(&f);
}

int main(void) {
        self_pid = (uint32_t) getpid();
        self_tid = (uint32_t) syscall(SYS_gettid);
        CASE("two rings merged in time order, calls paired across CPUs, golden text");
        struct event_table *t = NULL;
        char error[512];
        if (event_table_load(fixture_dir(), 0, &t, error, sizeof(error)) < 0) {
                fprintf(stderr, "%s\n", error);
                return 1;
        }
        struct fake_ring f0, f1;
        fake_ring_init(&f0, 8192, 0);
        fake_ring_init(&f1, 8192, 8192 - 40); /* the first record of CPU 1 wraps */
        struct ring rings[2];
        CHECK_EQ(ring_init(&rings[0], f0.base, FAKE_PAGE, 8192, 0), 0);
        CHECK_EQ(ring_init(&rings[1], f1.base, FAKE_PAGE, 8192, 1), 0);

        /* What this process "submitted": two iocbs, and two completions, the second with the wrong data. */
        static struct iocb cbs[2];
        static struct iocb *pp[2] = { &cbs[0], &cbs[1] };
        static struct io_event evs[2];
        static struct { int64_t tv_sec, tv_nsec; } timeout = { .tv_sec = 1, .tv_nsec = 5 }; /* __kernel_timespec */
        static char buf[8192];
        cbs[0] = (struct iocb) { .aio_data = 0x1111, .aio_lio_opcode = IOCB_CMD_PREAD, .aio_fildes = 997,
                                 .aio_buf = (uint64_t) (uintptr_t) buf, .aio_nbytes = 4096, .aio_offset = 8192 };
        cbs[1] = (struct iocb) { .aio_data = 0x2222, .aio_lio_opcode = IOCB_CMD_PWRITE, .aio_fildes = 998,
                                 .aio_buf = (uint64_t) (uintptr_t) (buf + 4096), .aio_nbytes = 512,
                                 .aio_rw_flags = 0x02, .aio_offset = -1 };
        evs[0] = (struct io_event) { .data = 0x1111, .obj = (uint64_t) (uintptr_t) &cbs[0], .res = 4096 };
        evs[1] = (struct io_event) { .data = 0x9999, .obj = (uint64_t) (uintptr_t) &cbs[1], .res = -5 };

        uint64_t ctx = 0x7f0000000000;
        uint64_t submit_args[] = { ctx, 2, (uint64_t) (uintptr_t) pp };
        uint64_t ret2[] = { 2 };
        uint64_t getev_args[] = { ctx, 1, 2, (uint64_t) (uintptr_t) evs, (uint64_t) (uintptr_t) &timeout };
        struct engine e;
        struct engine_options opt = { .max_iocbs_per_call = 256, .max_inflight = 1024, .read_memory = true,
                                     .replaced_sets = true, .records = RECORD_SYSCALLS | RECORD_REQUESTS };
        struct engine_callbacks cb = { .emit = collect };
        CHECK_EQ(engine_init(&e, rings, 2, t, &opt, &cb), 0);

        /* Fed in stages, as a live trace arrives: each call is decoded before the thread's next record exists. */
        put_event(&f1, find(t, "sys_exit_io_submit"), 2, 2000, 1, ret2); /* on CPU 1, written first */
        put_event(&f0, find(t, "sys_enter_io_submit"), 1, 1000, 0, submit_args);
        uint8_t rec[128];
        fake_ring_put(&f0, rec, build_lost(rec, 1, 5, 2500, 0));
        CHECK(!engine_drain(&e, UINT64_MAX));
        put_event(&f1, find(t, "sys_enter_io_getevents"), 3, 3000, 1, getev_args);
        put_event(&f0, find(t, "sys_exit_io_getevents"), 4, 4000, 0, ret2);
        CHECK(!engine_drain(&e, UINT64_MAX));
        /* an exit whose enter came before tracing began; newer than `until`, so it waits for the next drain */
        uint64_t ret0[] = { 0 };
        put_event(&f1, find(t, "sys_exit_io_destroy"), 5, 5000, 1, ret0);
        CHECK(engine_drain(&e, 4500));
        CHECK(!engine_drain(&e, UINT64_MAX));
        outbuf_putc(&out, 0);

        char comm[32] = "";
        FILE *cf = fopen("/proc/self/comm", "re");
        if (cf && fgets(comm, sizeof(comm), cf))
                comm[strcspn(comm, "\n")] = 0;
        if (cf)
                fclose(cf);
        char want[4096];
        snprintf(want, sizeof(want),
                 "[%s - %u - %u] io_submit(0x00007f0000000000, 2, 0x%016lx) [retval = 2] (1000 ns)\n"
                 "    iocb[   0] = 0x%016lx, op = pread, fd = 997, data = 0x0000000000001111, buf = 0x%016lx, "
                 "nbytes = 4096, offset = 8192\n"
                 "    iocb[   1] = 0x%016lx, op = pwrite, fd = 998, data = 0x0000000000002222, buf = 0x%016lx, "
                 "nbytes = 512, offset = -1, rw_flags = RWF_DSYNC\n"
                 "[lost] cpu 0: 5 records lost (ring full)\n"
                 "[%s - %u - %u] io_getevents(0x00007f0000000000, 1, 2, 0x%016lx, 0x%016lx) [retval = 2] (1000 ns)\n"
                 "    timeout = 1.000000005\n"
                 "    event[   0] = 0x%016lx\n"
                 "      iocb = 0x%016lx, fd = 997, data = 0x0000000000001111, res = 4096, res2 = 0\n"
                 "    event[   1] = 0x%016lx\n"
                 "      iocb = 0x%016lx, fd = 998, data = 0x0000000000009999, res = -5 (EIO), res2 = 0 "
                 "[stale: submitted with data 0x0000000000002222]\n"
                 /* the requests it ended, after it: one completed, one whose completion disagrees */
                 "[%s - %u] request completed: op = pread, fd = 997, path = <unknown: fd closed>, offset = 8192, "
                 "nbytes = 4096, res = 4096, res2 = 0, latency = 3000 ns, ctx = 0x00007f0000000000, iocb = 0x%016lx, "
                 "data = 0x0000000000001111, submitted by %u, reaped by %u\n"
                 "[%s - %u] request stale: op = pwrite, fd = 998, path = <unknown: fd closed>, offset = -1, "
                 "nbytes = 512, rw_flags = RWF_DSYNC, res = -5 (EIO), res2 = 0, ctx = 0x00007f0000000000, "
                 "iocb = 0x%016lx, data = 0x0000000000002222 [stale: completed with data 0x0000000000009999], "
                 "submitted by %u, reaped by %u\n"
                 "[%s - %u - %u] io_destroy(?) [retval = 0] (enter not seen)\n",
                 comm, self_pid, self_tid, (unsigned long) (uintptr_t) pp, (unsigned long) (uintptr_t) &cbs[0],
                 (unsigned long) (uintptr_t) buf, (unsigned long) (uintptr_t) &cbs[1],
                 (unsigned long) (uintptr_t) (buf + 4096), comm, self_pid, self_tid,
                 (unsigned long) (uintptr_t) evs, (unsigned long) (uintptr_t) &timeout,
                 (unsigned long) (uintptr_t) &evs[0], (unsigned long) (uintptr_t) &cbs[0],
                 (unsigned long) (uintptr_t) &evs[1], (unsigned long) (uintptr_t) &cbs[1], comm, self_pid,
                 (unsigned long) (uintptr_t) &cbs[0], self_tid, self_tid, comm, self_pid,
                 (unsigned long) (uintptr_t) &cbs[1], self_tid, self_tid, comm, self_pid, self_tid);
        CHECK_STR(out.data, want);
        CHECK_EQ(e.stats.calls, 3);
        CHECK_EQ(e.stats.lost, 5);
        CHECK_EQ(e.lost_per_ring[0], 5);
        CHECK_EQ(e.stats.stale, 1);
        CHECK_EQ(e.stats.unpaired_exit, 1);
        CHECK_EQ(e.stats.unmatched, 0);

        CASE("a later record of the thread marks what was read stale");
        /* The thread has a later record in the rings by the time its submit is decoded: the memory may have
         * been reused, so every value read is marked. */
        outbuf_reset(&out);
        put_event(&f0, find(t, "sys_enter_io_submit"), 1, 6000, 0, submit_args);
        put_event(&f0, find(t, "sys_exit_io_submit"), 2, 7000, 0, ret2);
        uint64_t destroy_args[] = { ctx };
        put_event(&f1, find(t, "sys_enter_io_destroy"), 6, 8000, 1, destroy_args);
        CHECK(engine_drain(&e, 7500));
        outbuf_putc(&out, 0);
        CHECK_CONTAINS(out.data, "nbytes = 4096, offset = 8192 [stale]\n");
        CHECK_CONTAINS(out.data, "rw_flags = RWF_DSYNC [stale]\n");
        CHECK_EQ(e.stats.stale, 1 + 4); /* two pointers and two iocbs */

        CASE("a hit recorded by two event sets counts once");
        /* The same hit recorded by two event sets (a set being replaced): counted once. */
        outbuf_reset(&out);
        uint64_t ret_destroy[] = { 0 };
        put_event(&f1, find(t, "sys_exit_io_destroy"), 6, 9000, 1, ret_destroy);
        put_event(&f1, find(t, "sys_exit_io_destroy"), 66, 9001, 1, ret_destroy);
        CHECK(!engine_drain(&e, UINT64_MAX));
        CHECK_EQ(e.stats.duplicates, 1);
        CHECK_EQ(e.stats.calls, 5);

        CASE("a ring over half full: the memory is not read, and the call says so");
        /* A read costs system calls: with over half the ring waiting behind a call, its records go first. */
        outbuf_reset(&out);
        uint64_t reads_before = e.stats.remote_reads;
        put_event(&f0, find(t, "sys_enter_io_submit"), 1, 10000, 0, submit_args);
        put_event(&f0, find(t, "sys_exit_io_submit"), 2, 10100, 0, ret2);
        for (uint64_t i = 0; i < 64; i++) /* 72 bytes each: more than half the 8 KiB ring */
                put_event(&f0, find(t, "sys_exit_io_destroy"), 6, 10200 + i, 0, ret_destroy);
        CHECK(!engine_drain(&e, UINT64_MAX));
        outbuf_putc(&out, 0);
        CHECK_CONTAINS(out.data, "[retval = 2] (100 ns)\n"
                                 "    iocb[   0] = <unreadable: tracer behind>\n"
                                 "    iocb[   1] = <unreadable: tracer behind>\n");
        CHECK_EQ(e.stats.skipped_reads, 1);
        CHECK_EQ(e.stats.remote_reads, reads_before);
        /* the ring emptied, the next call is read again */
        put_event(&f0, find(t, "sys_enter_io_submit"), 1, 20000, 0, submit_args);
        put_event(&f0, find(t, "sys_exit_io_submit"), 2, 20100, 0, ret2);
        outbuf_reset(&out);
        CHECK(!engine_drain(&e, UINT64_MAX));
        outbuf_putc(&out, 0);
        CHECK_CONTAINS(out.data, "op = pread, fd = 997");
        CHECK_EQ(e.stats.skipped_reads, 1);
        CHECK(e.stats.remote_reads > reads_before);

        CASE("at the end, what the kernel counted and nobody read is a loss");
        /* At the end: what the kernel counted beyond what was read or reported is a loss, said once. */
        outbuf_reset(&out);
        uint64_t lost_before = e.stats.lost;
        engine_account_lost(&e, 1, e.samples_per_ring[1] + e.lost_per_ring[1] + 3);
        engine_account_lost(&e, 0, e.samples_per_ring[0] + e.lost_per_ring[0]); /* nothing missing: nothing said */
        outbuf_putc(&out, 0);
        CHECK_STR(out.data, "[lost] cpu 1: 3 records lost (counted, never written to the ring)\n");
        CHECK_EQ(e.stats.lost, lost_before + 3);

        engine_done(&e);
        ring_done(&rings[0]);
        ring_done(&rings[1]);
        fake_ring_free(&f0);
        fake_ring_free(&f1);

        merge_many_rings(t);
        select_in_user_space(t);

        event_table_free(t);
        outbuf_free(&out);
        return test_result("test-engine");
}
