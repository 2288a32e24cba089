/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Records of more items than one record holds: the rest of a call's iocbs or io_events, in records of their own.
 * Part of bpf/capture.bpf.c, which includes it. */

#define MORE_HEAD (CAPTURE_EXIT_RAW_SIZE + sizeof(struct capture_more))
_Static_assert(MORE_HEAD + CAPTURE_MORE_ITEMS * sizeof(struct capture_more_iocb) <= CAPTURE_MAX_BYTES,
               "a record of more iocbs fits");

/* The record of more items filled so far, written. */
static __always_inline void more_output(struct loop_ctx *l, struct scratch *s, __u32 item_size) {
        struct more_walk *m = &s->more;
        put_common(s->buf, exit_tp_id[AIO_IO_SUBMIT]);
        *(__s32 *) (s->buf + CAPTURE_EXIT_NR_OFFSET) = -1;
        *(__u32 *) (s->buf + CAPTURE_EXIT_NR_OFFSET + 4) = 0;
        *(__s64 *) (s->buf + CAPTURE_EXIT_RET_OFFSET) = 0;
        struct capture_more *h = (void *) (s->buf + CAPTURE_EXIT_RAW_SIZE);
        h->magic = CAPTURE_MORE_MAGIC;
        h->kind = m->kind;
        h->syscall = m->syscall;
        h->first = m->first;
        h->n = m->n;
        h->ctx = m->ctx;
        h->enter_time = m->enter_time;
        __u32 size = MORE_HEAD + (m->n & (CAPTURE_MORE_ITEMS * 2 - 1)) * item_size;
        count(CAPTURE_CNT_RECORDS);
        output(l->ctx, s->buf, size & (OFF_LIMIT - 1));
        m->first += m->n;
        m->n = 0;
}

/* One more item: an iocb (with the file its fd names) or an io_event, into the record being filled. */
static long more_step(__u32 i __attribute__((unused)), void *ctx) {
        struct loop_ctx *l = ctx;
        struct scratch *s = scratch_of(l);
        if (!s)
                return 1;
        struct more_walk *m = &s->more;
        __u32 index = m->first + m->n, n = m->n & (CAPTURE_MORE_ITEMS - 1);
        if (index >= m->total)
                return 1;
        if (m->kind == CAPTURE_MORE_IOCBS) {
                struct capture_more_iocb *it =
                        (void *) (s->buf + ((MORE_HEAD + n * sizeof(struct capture_more_iocb)) & (OFF_LIMIT - 1)));
                it->valid = 0;
                it->reserved = 0;
                it->file.fd = ~0u;
                it->file.mnt_id = 0;
                it->file.ino = 0;
                if (bpf_probe_read_user(&it->ptr, 8, (const void *) (m->base + (__u64) index * 8)) != 0)
                        it->ptr = 0;
                else if (bpf_probe_read_user(it->iocb, IOCB_SIZE, (const void *) it->ptr) == 0) {
                        it->valid = IOCB_SIZE;
                        file_identity(s, *(__u32 *) (it->iocb + IOCB_FD_OFFSET), &it->file, 0);
                }
        } else {
                __u8 *ev = s->buf + ((MORE_HEAD + n * IO_EVENT_SIZE) & (OFF_LIMIT - 1));
                if (bpf_probe_read_user(ev, IO_EVENT_SIZE, (const void *) (m->base + (__u64) index * IO_EVENT_SIZE)))
                        m->total = index; /* the rest cannot be read either: the call's record said as many */
        }
        if (index < m->total)
                m->n++;
        if (m->n && (m->n == CAPTURE_MORE_ITEMS || index + 1 >= m->total))
                more_output(l, s, m->kind == CAPTURE_MORE_IOCBS ? sizeof(struct capture_more_iocb) : IO_EVENT_SIZE);
        return 0;
}

static __noinline int more_walk(struct loop_ctx *l) {
        bpf_loop(65536, more_step, l, 0);
        return 0;
}

/* The iocbs or io_events of a call past the `first` its record holds, after it, in records of their own (a call's
 * items are at most its context's size, which aio-max-nr bounds). */
static __always_inline void send_more(struct loop_ctx *l, int sc, const __u64 *args, long ret, __u32 first,
                                      __u64 enter_time) {
        struct scratch *s = scratch_of(l);
        if (!s || ret <= first)
                return;
        int submit = sc == AIO_IO_SUBMIT;
        s->more = (struct more_walk) { .base = submit ? args[2] : args[3], .total = (__u32) ret, .first = first,
                                       .kind = submit ? CAPTURE_MORE_IOCBS : CAPTURE_MORE_EVENTS,
                                       .syscall = (__u16) sc, .ctx = args[0], .enter_time = enter_time };
        s->b.last_fd = ~0u;
        more_walk(l);
}
