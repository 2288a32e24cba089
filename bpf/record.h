/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A record's making: the syscall tracepoints' contexts, a record begun and written, its segments of the caller's
 * memory, and the enter of every call.
 * Part of bpf/capture.bpf.c, which includes it. */

/* The tracepoint context a program gets for syscall events: the first 8 bytes are not the record's. */
struct enter_ctx {
        __u64 regs;
        int nr;
        __u64 args[6];
};

struct exit_ctx {
        __u64 regs;
        int nr;
        long ret;
};

/* Every program returns 1: the kernel ANDs the verdicts of all programs on a tracepoint, and 0 would take the
 * record away from every other perf user of it.  Ours come through bpf_perf_event_output alone (the daemon's
 * own tracepoint events sample nothing). */
#define NEUTRAL 1

static __always_inline void output(void *ctx, void *data, __u32 size) {
        if (bpf_perf_event_output(ctx, &rings, BPF_F_CURRENT_CPU, data, size) != 0)
                count(CAPTURE_CNT_OUTPUT_FAILED);
}

/* The common fields of a record, as the kernel writes them: type, flags, preempt count, pid. */
static __always_inline void put_common(__u8 *buf, __u16 type) {
        *(__u16 *) buf = type;
        buf[2] = 0;
        buf[3] = 0;
        *(__s32 *) (buf + 4) = (__s32) bpf_get_current_pid_tgid();
}

/* The buffer to build a record of the current thread in; NULL when it is not watched (or, counted, when the
 * CPU has no buffer). */
static __always_inline struct scratch *record_begin(struct loop_ctx *l, struct thread_state *ts) {
        if (!watched(l, ts))
                return 0;
        count(CAPTURE_CNT_RECORDS);
        struct scratch *s = scratch_of(l);
        if (!s)
                count(CAPTURE_CNT_NO_SCRATCH);
        return s;
}

/* The same for a thread whose verdict is known. */
static __always_inline struct scratch *record_begin_watched(struct loop_ctx *l) {
        count(CAPTURE_CNT_RECORDS);
        struct scratch *s = scratch_of(l);
        if (!s)
                count(CAPTURE_CNT_NO_SCRATCH);
        return s;
}

/* n_args: the syscall's own count.  The kernel refuses to attach a program that reads past the record. */
/* The enter is kept in the thread's storage and travels in the exit's record: one record per call.  Only a
 * thread without storage has its enter written as a record of its own. */
static __always_inline void ring_at_destroy(struct enter_ctx *ctx, struct loop_ctx *l);
static __always_inline void ring_reaped_by_call(__u64 ctx);
__noinline int sum_ring_last(__u64 ctx);

/* io_uring's calls are written only when asked for (records = "syscalls"): they are many, and the requests
 * say what they did. */
static __always_inline int call_wanted(int sc) {
        if (sc < AIO_URING_SYSCALL_FIRST)
                return 1;
        __u32 zero = 0;
        struct capture_watch *w = bpf_map_lookup_elem(&watch, &zero);
        return w && w->uring_calls;
}

static __always_inline struct file *file_of_fd(__u32 fd);

/* io_submit's enter: the files its first iocbs' fds name, for its exit to see whether an fd named another
 * during the call (another thread's dup2 or close and open): the file the kernel read is then not known. */
static __always_inline void files_at_enter(struct thread_state *ts, __u64 iocbpp, long nr) {
        /* A table no other task shares changes only by this thread's own calls: not during this one. */
        if (bpf_get_current_task_btf()->files->count.counter <= 1)
                return;
        __u64 ptrs[ENTER_FILES_MAX] = {};
        __u32 n = nr <= 0 ? 0 : nr < ENTER_FILES_MAX ? (__u32) nr : ENTER_FILES_MAX;
        if (n == 0 || n > ENTER_FILES_MAX || bpf_probe_read_user(ptrs, n * 8, (const void *) iocbpp) != 0)
                return;
        for (__u32 i = 0; i < n && i < ENTER_FILES_MAX; i++) {
                __u32 fd = 0;
                if (bpf_probe_read_user(&fd, sizeof(fd), (const void *) (ptrs[i] + IOCB_FD_OFFSET)) != 0)
                        return;
                ts->enter_files[i] = (__u64) file_of_fd(fd);
                ts->n_enter_files = i + 1;
        }
}

static __always_inline int on_enter(struct enter_ctx *ctx, int sc, int n_args) {
        if (!call_wanted(sc))
                return NEUTRAL;
        struct loop_ctx l = { .cpu = bpf_get_smp_processor_id() };
        struct thread_state *ts = thread_state();
        if (ts) {
                int verdict = watched(&l, ts);
                if (!verdict)
                        return NEUTRAL;
                if (sc == AIO_IO_DESTROY && verdict == WATCHED_SUMMED)
                        sum_ring_last(ctx->args[0]);
                else if (sc == AIO_IO_DESTROY)
                        ring_at_destroy(ctx, &l);
                else if ((sc == AIO_IO_GETEVENTS || sc == AIO_IO_PGETEVENTS) && ts->by_call_ctx != ctx->args[0]) {
                        ring_reaped_by_call(ctx->args[0]);
                        ts->by_call_ctx = ctx->args[0]; /* the ring this thread reaps from is marked already */
                }
                for (int i = 0; i < 6; i++)
                        ts->args[i] = i < n_args ? ctx->args[i] : 0;
                /* a summed call's counts need the time of an io_submit's enter alone (a clock read costs as much
                 * as a hash lookup here); its iocbs' files are not checked */
                int summed = verdict == WATCHED_SUMMED;
                ts->enter_time = !summed || sc == AIO_IO_SUBMIT ? bpf_ktime_get_ns() : 0;
                ts->enter_cpu = l.cpu;
                ts->args_valid = 1;
                ts->sc = (__u32) sc;
                ts->n_enter_files = 0;
                ts->n_kviews = 0;
                if (sc == AIO_IO_SUBMIT && !summed)
                        files_at_enter(ts, ctx->args[2], (long) ctx->args[1]);
                return NEUTRAL;
        }
        if (summed_only) {
                count(CAPTURE_CNT_ARGS_FULL); /* no storage for the thread: the call goes uncounted */
                return NEUTRAL;
        }
        struct scratch *s = record_begin(&l, ts);
        if (!s)
                return NEUTRAL;
        count(CAPTURE_CNT_ARGS_FULL);
        put_common(s->buf, enter_tp_id[sc]);
        *(__s32 *) (s->buf + 8) = ctx->nr;
        *(__u32 *) (s->buf + 12) = 0;
        for (int i = 0; i < 6 && i < n_args; i++)
                *(__u64 *) (s->buf + 16 + 8 * i) = ctx->args[i];
        output(ctx, s->buf, 16 + 8 * n_args);
        return NEUTRAL;
}

/* Append one segment of len bytes read at addr; 0, or -1 when the record has no room left for it. */
static __always_inline int put_segment(struct scratch *s, __u64 addr, __u32 len) {
        __u32 off = s->b.off;
        __u32 padded = (len + 7) & ~7u;
        if (len >= LEN_LIMIT || off + SEG_HDR + padded > CAPTURE_MAX_BYTES) {
                s->b.flags |= CAPTURE_F_BOUNDED;
                return -1;
        }
        struct capture_segment *seg = (void *) (s->buf + (off & (OFF_LIMIT - 1)));
        seg->addr = addr;
        seg->len = len;
        __u32 dst = off + SEG_HDR, size = len;
        opaque(dst);
        opaque(size);
        long err = bpf_probe_read_user(s->buf + (dst & (OFF_LIMIT - 1)), size & (LEN_LIMIT - 1), (const void *) addr);
        seg->valid = err ? 0 : len;
        s->b.off = off + SEG_HDR + padded;
        s->b.n_segs++;
        return 0;
}

/* n events of a ring at addr: 0, or -1 when they could not be read (or had no room). */
static __always_inline int put_events(struct scratch *s, __u64 addr, __u32 n) {
        __u32 off = s->b.off;
        if (put_segment(s, addr, n * IO_EVENT_SIZE) < 0)
                return -1;
        struct capture_segment *seg = (void *) (s->buf + (off & (OFF_LIMIT - 1)));
        return seg->valid == n * IO_EVENT_SIZE ? 0 : -1;
}
