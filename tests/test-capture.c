/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The captured records the BPF program writes (capture.h), decoded without root: the view's checks and lookups,
 * then whole calls through the engine with addresses that exist in no process, so only the capture can answer. */
#include "capture_view.h"

#include <linux/aio_abi.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine.h"
#include "format_text.h"
#include "pipeline.h"
#include "ringbuf.h"
#include "test.h"

/* A record as the program lays it out: raw exit record, header, segments. */
struct capbuf {
        uint8_t data[4096];
        size_t len;
        struct capture_header *h;
};

static void cap_start(struct capbuf *b, uint16_t tp_id, uint32_t tid, int64_t ret, uint16_t flags) {
        memset(b, 0, sizeof(*b));
        memcpy(b->data, &tp_id, 2);
        memcpy(b->data + 4, &tid, 4);
        memcpy(b->data + CAPTURE_EXIT_RET_OFFSET, &ret, 8);
        b->h = (struct capture_header *) (b->data + CAPTURE_EXIT_RAW_SIZE);
        *b->h = (struct capture_header) { .magic = CAPTURE_MAGIC, .version = CAPTURE_VERSION, .flags = flags,
                                          .comm = "captured" };
        b->len = CAPTURE_EXIT_RAW_SIZE + sizeof(*b->h);
}

static void cap_segment(struct capbuf *b, uint64_t addr, const void *bytes, uint32_t len, uint32_t valid) {
        struct capture_segment s = { .addr = addr, .len = len, .valid = valid };
        memcpy(b->data + b->len, &s, sizeof(s));
        memcpy(b->data + b->len + sizeof(s), bytes, len);
        b->len += sizeof(s) + ((len + 7) & ~7u);
        b->h->n_segments++;
}

static void cap_end(struct capbuf *b) {
        b->h->size = (uint32_t) (b->len - CAPTURE_EXIT_RAW_SIZE);
}

TEST(view) {
        struct capbuf b;
        struct capture_view v;
        uint64_t ptrs[3] = { 0x1000, 0x2000, 0x3000 };
        uint8_t iocb[64];
        memset(iocb, 0xab, sizeof(iocb));

        /* The kernel's own record (28 bytes of raw, no header): no capture. */
        uint8_t plain[28] = {};
        CHECK_EQ(capture_view_parse(plain, sizeof(plain), CAPTURE_EXIT_RAW_SIZE, &v), -ENOENT);

        cap_start(&b, 1, 1, 3, 0);
        cap_segment(&b, 0x500, ptrs, sizeof(ptrs), 16); /* the third pointer faulted */
        cap_segment(&b, 0x1000, iocb, sizeof(iocb), 64);
        cap_segment(&b, 0x2000, iocb, sizeof(iocb), 0); /* an iocb that faulted */
        cap_end(&b);
        CHECK_EQ(capture_view_parse(b.data, b.len, CAPTURE_EXIT_RAW_SIZE, &v), 0);
        CHECK_EQ(v.n_segments, 3);

        uint64_t p[4] = {};
        uint8_t cb[3][64];
        struct remote_chunk c[8] = {
                { .addr = 0x500, .buf = &p[0], .len = 8 },  { .addr = 0x508, .buf = &p[1], .len = 8 },
                { .addr = 0x510, .buf = &p[2], .len = 8 },  { .addr = 0x518, .buf = &p[3], .len = 8 },
                { .addr = 0x1000, .buf = cb[0], .len = 64 }, { .addr = 0x2000, .buf = cb[1], .len = 64 },
                { .addr = 0x3000, .buf = cb[2], .len = 64 }, { .addr = 0x1010, .buf = cb[2], .len = 60 },
        };
        capture_view_fill(&v, c, 8);
        CHECK_EQ(c[0].state, MEM_OK);
        CHECK_EQ(p[0], 0x1000);
        CHECK_EQ(c[1].state, MEM_OK);
        CHECK_EQ(p[1], 0x2000);
        CHECK_EQ(c[2].state, MEM_FAULT);       /* inside the segment, past its valid prefix */
        CHECK_EQ(c[3].state, MEM_NOT_CAPTURED); /* past the array: never captured */
        CHECK_EQ(c[4].state, MEM_OK);
        CHECK_EQ(cb[0][63], 0xab);
        CHECK_EQ(c[5].state, MEM_FAULT);
        CHECK_EQ(c[6].state, MEM_NOT_CAPTURED);
        CHECK_EQ(c[7].state, MEM_NOT_CAPTURED); /* runs past the segment's end */

        /* Asked for out of order: the search wraps around. */
        struct remote_chunk again[2] = { { .addr = 0x508, .buf = &p[1], .len = 8 },
                                         { .addr = 0x1000, .buf = cb[0], .len = 64 } };
        capture_view_fill(&v, &again[1], 1);
        capture_view_fill(&v, &again[0], 1);
        CHECK_EQ(again[0].state, MEM_OK);
        CHECK_EQ(again[1].state, MEM_OK);

        /* The file table after the segments: by iocb index, apart from any address lookup. */
        cap_start(&b, 1, 1, 2, 0);
        cap_segment(&b, 0x1000, iocb, sizeof(iocb), 64);
        struct capture_iocb_file files[2] = {
                { .file = { .fd = 5, .mnt_id = 24, .ino = 777 }, .flags = CAPTURE_IOCB_KERNEL_OTHER, .kernel_pos = 4096,
                  .kernel_count = 512 },
                { .file = { .fd = ~0u } },
        };
        b.h->n_files = 2;
        b.h->files_off = (uint32_t) (b.len - CAPTURE_EXIT_RAW_SIZE - sizeof(*b.h));
        memcpy(b.data + b.len, files, sizeof(files));
        b.len += sizeof(files);
        cap_end(&b);
        CHECK_EQ(capture_view_parse(b.data, b.len, CAPTURE_EXIT_RAW_SIZE, &v), 0);
        struct capture_iocb_file f;
        CHECK(capture_view_file(&v, 0, &f) && f.file.fd == 5 && f.file.mnt_id == 24 && f.file.ino == 777);
        CHECK(f.flags == CAPTURE_IOCB_KERNEL_OTHER && f.kernel_pos == 4096 && f.kernel_count == 512);
        CHECK(!capture_view_file(&v, 1, &f)); /* not known */
        CHECK(!capture_view_file(&v, 2, &f)); /* beyond the table */
        struct remote_chunk table_addr = { .addr = 0x1040, .buf = cb[0], .len = 16 };
        capture_view_fill(&v, &table_addr, 1);
        CHECK(table_addr.state != MEM_OK);
        b.h->files_off -= 8; /* overlapping the last segment */
        CHECK_EQ(capture_view_parse(b.data, b.len, CAPTURE_EXIT_RAW_SIZE, &v), -EBADMSG);
        b.h->files_off += 16; /* running past the end */
        CHECK_EQ(capture_view_parse(b.data, b.len, CAPTURE_EXIT_RAW_SIZE, &v), -EBADMSG);

        /* What a bound stopped is "not read", like the user-space bound. */
        cap_start(&b, 1, 1, 3, CAPTURE_F_BOUNDED);
        cap_end(&b);
        CHECK_EQ(capture_view_parse(b.data, b.len, CAPTURE_EXIT_RAW_SIZE, &v), 0);
        capture_view_fill(&v, c, 1);
        CHECK_EQ(c[0].state, MEM_NOT_READ);

        /* The enter's arguments were not kept: nothing of the call is there, and it says so. */
        cap_start(&b, 1, 1, 3, CAPTURE_F_NO_ARGS);
        cap_end(&b);
        CHECK_EQ(capture_view_parse(b.data, b.len, CAPTURE_EXIT_RAW_SIZE, &v), 0);
        capture_view_fill(&v, c, 1);
        CHECK_EQ(c[0].state, MEM_NOT_CAPTURED);

        /* Records that do not hold together are refused, never half-read. */
        cap_start(&b, 1, 1, 3, 0);
        cap_segment(&b, 0x1000, iocb, sizeof(iocb), 64);
        cap_end(&b);
        b.h->size += 8; /* past the sample */
        CHECK_EQ(capture_view_parse(b.data, b.len, CAPTURE_EXIT_RAW_SIZE, &v), -EBADMSG);
        cap_end(&b);
        b.h->n_segments = 2; /* a segment header beyond the end */
        CHECK_EQ(capture_view_parse(b.data, b.len, CAPTURE_EXIT_RAW_SIZE, &v), -EBADMSG);
        b.h->n_segments = 1;
        ((struct capture_segment *) (b.data + CAPTURE_EXIT_RAW_SIZE + sizeof(*b.h)))->valid = 65;
        CHECK_EQ(capture_view_parse(b.data, b.len, CAPTURE_EXIT_RAW_SIZE, &v), -EBADMSG);
        ((struct capture_segment *) (b.data + CAPTURE_EXIT_RAW_SIZE + sizeof(*b.h)))->valid = 64;
        ((struct capture_segment *) (b.data + CAPTURE_EXIT_RAW_SIZE + sizeof(*b.h)))->len = 4000;
        CHECK_EQ(capture_view_parse(b.data, b.len, CAPTURE_EXIT_RAW_SIZE, &v), -EBADMSG);
        ((struct capture_segment *) (b.data + CAPTURE_EXIT_RAW_SIZE + sizeof(*b.h)))->len = 64;
        CHECK_EQ(capture_view_parse(b.data, b.len, CAPTURE_EXIT_RAW_SIZE, &v), 0);
        b.h->version = CAPTURE_VERSION + 1;
        CHECK_EQ(capture_view_parse(b.data, b.len, CAPTURE_EXIT_RAW_SIZE, &v), -EBADMSG);
        CHECK_EQ(capture_view_parse(b.data, 30, CAPTURE_EXIT_RAW_SIZE, &v), -ENOENT);
}


static void put_raw(struct fake_ring *f, uint64_t time, uint32_t tid, const void *raw, size_t len) {
        static uint8_t rec[8192];
        fake_ring_put(f, rec, build_sample(rec, 9, tid, tid, time, 0, raw, (uint32_t) len));
}

/* The ring's completions after the call's own segments: in ring order across the wrap, each with whether the
 * ring's head had passed it; events of a segment that faulted are not given. */
TEST(ring) {
        struct capbuf b;
        struct capture_view v;
        uint64_t ctx = 0x7f0000000000;
        uint32_t header[8] = { 0, 8, 7, 2, AIO_RING_MAGIC, 1, 0, AIO_RING_HEADER }; /* nr 8, head 7, tail 2 */
        struct io_event ev[8];
        for (unsigned i = 0; i < 8; i++)
                ev[i] = (struct io_event) { .data = i, .obj = 0x1000 + i, .res = 100 + i };
        uint8_t iocb[64] = {};
        cap_start(&b, 1, 1, 1, CAPTURE_F_RING);
        cap_segment(&b, 0x1000, iocb, sizeof(iocb), 64); /* the call's own */
        cap_segment(&b, ctx, header, sizeof(header), sizeof(header));
        cap_segment(&b, ctx + AIO_RING_HEADER + 6 * IO_EVENT_SIZE, &ev[6], 2 * IO_EVENT_SIZE, 2 * IO_EVENT_SIZE);
        cap_segment(&b, ctx + AIO_RING_HEADER, &ev[0], 2 * IO_EVENT_SIZE, 2 * IO_EVENT_SIZE);
        cap_end(&b);
        CHECK_EQ(capture_view_parse(b.data, b.len, CAPTURE_EXIT_RAW_SIZE, &v), 0);
        struct io_event got[8];
        bool reaped[8];
        CHECK_EQ(capture_view_ring(&v, ctx, got, reaped, 8), 4);
        CHECK(got[0].data == 6 && got[1].data == 7 && got[2].data == 0 && got[3].data == 1 && got[3].res == 101);
        CHECK(reaped[0] && !reaped[1] && !reaped[2] && !reaped[3]); /* head 7: index 6 is behind it */
        CHECK_EQ(capture_view_ring(&v, ctx, got, reaped, 3), 3);
        CHECK_EQ(capture_view_ring(&v, ctx + 4096, got, reaped, 8), 0); /* another context's ring: none */

        cap_start(&b, 1, 1, 1, CAPTURE_F_RING);
        cap_segment(&b, ctx, header, sizeof(header), sizeof(header));
        cap_segment(&b, ctx + AIO_RING_HEADER + 6 * IO_EVENT_SIZE, &ev[6], 2 * IO_EVENT_SIZE, 0); /* faulted */
        cap_end(&b);
        CHECK_EQ(capture_view_parse(b.data, b.len, CAPTURE_EXIT_RAW_SIZE, &v), 0);
        CHECK_EQ(capture_view_ring(&v, ctx, got, reaped, 8), 0);
        cap_start(&b, 1, 1, 1, 0); /* not looked at */
        cap_end(&b);
        CHECK_EQ(capture_view_parse(b.data, b.len, CAPTURE_EXIT_RAW_SIZE, &v), 0);
        CHECK_EQ(capture_view_ring(&v, ctx, got, reaped, 8), 0);
}

TEST(engine) {
        struct event_table *t = NULL;
        char error[512];
        if (event_table_load(fixture_dir(), 0, &t, error, sizeof(error)) < 0) {
                fprintf(stderr, "%s\n", error);
                CHECK(false);
                return;
        }
        CHECK_EQ(find(t, "sys_exit_io_submit")->record_size, CAPTURE_EXIT_RAW_SIZE);
        CHECK_EQ(find(t, "sys_enter_io_submit")->record_size, 40);

        struct fake_ring f;
        fake_ring_init(&f, 65536, 0);
        struct ring ring;
        CHECK_EQ(ring_init(&ring, f.base, FAKE_PAGE, 65536, 0), 0);
        struct engine e;
        struct engine_options opt = { .max_iocbs_per_call = 256, .max_inflight = 1024, .read_memory = true,
                                     .proc_root = "/nonexistent", .records = RECORD_SYSCALLS };
        struct engine_callbacks cb = { .emit = collect };
        CHECK_EQ(engine_init(&e, &ring, 1, t, &opt, &cb), 0);

        /* A thread id no process has: a read afterwards would fail; the capture answers. */
        const uint32_t tid = 0x3ffffff0;
        const uint64_t ctx = 0x7f0000000000, iocbpp = 0x10000, events = 0x20000;
        struct iocb cbs[2] = {
                { .aio_data = 0x11, .aio_lio_opcode = IOCB_CMD_PREAD, .aio_fildes = 3, .aio_buf = 0x40000,
                  .aio_nbytes = 4096, .aio_offset = 4096 },
                { .aio_data = 0x22, .aio_lio_opcode = IOCB_CMD_PREADV, .aio_fildes = 4, .aio_buf = 0x50000,
                  .aio_nbytes = 2 },
        };
        uint64_t ptrs[2] = { 0x30000, 0x30040 };
        uint64_t iov[4] = { 0x60000, 100, 0x61000, 23 };

        uint8_t enter[40] = {};
        const struct event_desc *de = find(t, "sys_enter_io_submit");
        uint16_t type = (uint16_t) de->tp_id;
        uint64_t args[3] = { ctx, 2, iocbpp };
        memcpy(enter, &type, 2);
        for (unsigned i = 0; i < 3; i++)
                memcpy(enter + de->args[i].offset, &args[i], 8);
        put_raw(&f, 1000, tid, enter, sizeof(enter));

        struct capbuf b;
        cap_start(&b, (uint16_t) find(t, "sys_exit_io_submit")->tp_id, tid, 2, 0);
        cap_segment(&b, iocbpp, ptrs, sizeof(ptrs), sizeof(ptrs));
        cap_segment(&b, ptrs[0], &cbs[0], 64, 64);
        cap_segment(&b, ptrs[1], &cbs[1], 64, 64);
        cap_segment(&b, 0x50000, iov, sizeof(iov), sizeof(iov));
        cap_end(&b);
        put_raw(&f, 2000, tid, b.data, b.len);

        /* io_getevents: the timeout and the events.  The thread's next call is already in the ring, which would
         * make a read afterwards stale; a capture made during the call is not. */
        const struct event_desc *dg = find(t, "sys_enter_io_getevents");
        uint8_t genter[56] = {};
        uint64_t gargs[5] = { ctx, 2, 2, events, 0x70000 };
        type = (uint16_t) dg->tp_id;
        memcpy(genter, &type, 2);
        for (unsigned i = 0; i < 5; i++)
                memcpy(genter + dg->args[i].offset, &gargs[i], 8);
        put_raw(&f, 3000, tid, genter, sizeof(genter));
        struct io_event ev[2] = { { .data = 0x11, .obj = ptrs[0], .res = 4096 },
                                  { .data = 0x22, .obj = ptrs[1], .res = 123 } };
        int64_t ts[2] = { 0, 5000 };
        cap_start(&b, (uint16_t) find(t, "sys_exit_io_getevents")->tp_id, tid, 2, 0);
        cap_segment(&b, 0x70000, ts, sizeof(ts), sizeof(ts));
        cap_segment(&b, events, ev, sizeof(ev), sizeof(ev));
        cap_end(&b);
        put_raw(&f, 4000, tid, b.data, b.len);
        put_raw(&f, 5000, tid, genter, sizeof(genter)); /* the thread's next call, already in the ring */

        CHECK(engine_drain(&e, 4500)); /* the next call waits, but is already indexed */
        outbuf_putc(&out, 0);
        CHECK_STR(out.data,
                  "[captured - 1073741808 - 1073741808] io_submit(0x00007f0000000000, 2, 0x0000000000010000) [retval = 2] (1000 ns)\n"
                  "    iocb[   0] = 0x0000000000030000, op = pread, fd = 3, data = 0x0000000000000011, "
                  "buf = 0x0000000000040000, nbytes = 4096, offset = 4096\n"
                  "    iocb[   1] = 0x0000000000030040, op = preadv, fd = 4, data = 0x0000000000000022, "
                  "buf = 0x0000000000050000, nbytes = 2, offset = 0, iov_total = 123\n"
                  "[captured - 1073741808 - 1073741808] io_getevents(0x00007f0000000000, 2, 2, 0x0000000000020000, "
                  "0x0000000000070000) [retval = 2] (1000 ns)\n"
                  "    timeout = 0.000005000\n"
                  "    event[   0] = 0x0000000000020000\n"
                  "      iocb = 0x0000000000030000, fd = 3, data = 0x0000000000000011, res = 4096, res2 = 0\n"
                  "    event[   1] = 0x0000000000020020\n"
                  "      iocb = 0x0000000000030040, fd = 4, data = 0x0000000000000022, res = 123, res2 = 0\n");
        CHECK_EQ(e.stats.captured, 2);
        CHECK_EQ(e.stats.remote_reads, 0);
        CHECK_EQ(e.stats.stale, 0);
        CHECK_EQ(e.stats.unmatched, 0);

        /* A capture that does not hold together is counted, and the call read the old way (here: nothing). */
        outbuf_reset(&out);
        cap_start(&b, (uint16_t) find(t, "sys_exit_io_getevents")->tp_id, tid, 0, 0);
        cap_end(&b);
        b.h->size = 4000;
        put_raw(&f, 6000, tid, b.data, b.len);
        CHECK(!engine_drain(&e, UINT64_MAX));
        CHECK_EQ(e.stats.bad_captures, 1);
        CHECK_EQ(e.stats.captured, 2);

        /* The program kept the enter: its time, CPU and arguments come in the exit's record, and no enter does. */
        outbuf_reset(&out);
        uint64_t unpaired = e.stats.unpaired_exit;
        cap_start(&b, (uint16_t) find(t, "sys_exit_io_destroy")->tp_id, tid, 0, CAPTURE_F_ENTER);
        b.h->enter_time = 6500;
        b.h->enter_cpu = 1;
        b.h->args[0] = ctx;
        cap_end(&b);
        put_raw(&f, 7000, tid, b.data, b.len);
        CHECK(!engine_drain(&e, UINT64_MAX));
        outbuf_putc(&out, 0);
        CHECK_STR(out.data, "[captured - 1073741808 - 1073741808] io_destroy(0x00007f0000000000) [retval = 0] (500 ns)\n");
        CHECK_EQ(e.stats.unpaired_exit, unpaired);

        engine_done(&e);
        ring_done(&ring);
        fake_ring_free(&f);
        event_table_free(t);
        outbuf_free(&out);
}

TEST_MAIN("test-capture")
