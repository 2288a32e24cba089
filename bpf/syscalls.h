/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The system calls' programs: each watched call's exit record with the memory it used, and the kernel's own view
 * of a direct read or write during io_submit.
 * Part of bpf/capture.bpf.c, which includes it. */

/* io_submit: each iocb the captured pointers name, and for vectored ops the iovec array it names.  `typed`: the
 * files read through bpf_rdonly_cast. */
/* Whether the record has room for bytes more of the caller's memory, with the file table of the iocbs seen so far
 * (n of them), which comes last. */
static __always_inline int room_for(const struct scratch *s, __u32 bytes, __u32 n) {
        return s->b.off + SEG_HDR + bytes + n * sizeof(struct capture_iocb_file) <= CAPTURE_MAX_BYTES;
}

static __always_inline long iocb_step_as(__u32 i, void *ctx, const int typed) {
        struct scratch *s = scratch_of(ctx);
        if (!s || i >= s->b.n || (i + 1) * 8 > s->b.ptrs_valid)
                return 1;
        if (!room_for(s, IOCB_SIZE, i + 1)) {
                s->b.flags |= CAPTURE_F_BOUNDED; /* the rest in records of their own (send_more) */
                return 1;
        }
        __u64 ptr = *(__u64 *) (s->buf + ((s->b.ptrs_off + i * 8) & (OFF_LIMIT - 1)));
        struct capture_iocb_file *cf = &s->files[i & (CAPTURE_MAX_ITEMS - 1)];
        struct capture_file *file = &cf->file;
        file->fd = ~0u;
        file->mnt_id = 0;
        file->ino = 0;
        cf->flags = 0;
        s->b.n_files = i + 1;
        if (ptr == 0)
                return 0;
        __u32 seg_at = s->b.off;
        if (put_segment(s, ptr, IOCB_SIZE) < 0)
                return 1;
        struct capture_segment *seg = (void *) (s->buf + (seg_at & (OFF_LIMIT - 1)));
        if (!seg->valid)
                return 0;
        __u8 *cb = s->buf + ((seg_at + SEG_HDR) & (OFF_LIMIT - 1));
        file_identity(s, *(__u32 *) (cb + IOCB_FD_OFFSET), file, typed);
        /* a file whose path the daemon was not told yet: told after the loop (a callback cannot write) */
        struct file_key key = { .mnt_id = file->mnt_id, .ino = file->ino };
        __u32 k = s->n_new_files;
        int told = file->mnt_id == s->told_mnt_id && file->ino == s->told_ino;
        if (file->mnt_id && !told && k < NEW_FILES_MAX) {
                if (bpf_map_lookup_elem(&paths_sent, &key)) {
                        s->told_mnt_id = file->mnt_id;
                        s->told_ino = file->ino;
                } else if (k == 0 || s->new_files[(k - 1) & (NEW_FILES_MAX - 1)].f != s->b.last_file) {
                        s->new_files[k & (NEW_FILES_MAX - 1)] =
                                (struct new_file) { .f = s->b.last_file, .mnt_id = file->mnt_id, .ino = file->ino };
                        s->n_new_files = k + 1;
                }
        }
        __u16 opcode = *(__u16 *) (cb + IOCB_OPCODE_OFFSET);
        if (file->mnt_id && i < s->b.n_enter_files &&
            s->b.enter_files[i & (ENTER_FILES_MAX - 1)] != (__u64) s->b.last_file)
                cf->flags |= CAPTURE_IOCB_FD_MOVED;
        kernel_view(s, cf, ptr, cb, opcode <= AIO_OPCODE_MAX && aio_vectored[opcode]);
        if (opcode > AIO_OPCODE_MAX || !aio_vectored[opcode])
                return 0;
        __u64 iov = *(__u64 *) (cb + IOCB_BUF_OFFSET), n_iov = *(__u64 *) (cb + IOCB_NBYTES_OFFSET);
        if (n_iov == 0)
                return 0;
        if (n_iov * IOVEC_SIZE >= LEN_LIMIT || !room_for(s, (__u32) n_iov * IOVEC_SIZE, i + 1)) {
                s->b.flags |= CAPTURE_F_BOUNDED;
                return 0;
        }
        put_segment(s, iov, (__u32) n_iov * IOVEC_SIZE);
        return 0;
}

static long iocb_step(__u32 i, void *ctx) {
        return iocb_step_as(i, ctx, 1);
}

static long iocb_step_probed(__u32 i, void *ctx) {
        return iocb_step_as(i, ctx, 0);
}

static __always_inline __u32 bounded(struct scratch *s, __u64 n) {
        __u32 max = max_items < CAPTURE_MAX_ITEMS ? max_items : CAPTURE_MAX_ITEMS;
        if (n > max) {
                s->b.flags |= CAPTURE_F_BOUNDED;
                return max;
        }
        return (__u32) n;
}

static __always_inline void capture_submit(struct loop_ctx *l, struct scratch *s, const __u64 *args, long ret,
                                           const int typed) {
        long nr = (long) args[1];
        __u64 wanted = ret > 0 ? (__u64) ret : nr > 0 ? (__u64) nr : 0;
        __u32 n = bounded(s, wanted);
        __u32 ptrs_off = s->b.off + SEG_HDR;
        __u32 valid = put_array(l, s, args[2], n, 8);
        s = scratch_of(l);
        if (!s || valid == 0)
                return;
        s->b.n = n;
        s->b.ptrs_off = ptrs_off;
        s->b.ptrs_valid = valid;
        s->b.n_files = 0;
        s->b.last_fd = ~0u;
        bpf_loop(CAPTURE_MAX_ITEMS, typed ? iocb_step : iocb_step_probed, l, 0);
}

/* The file table io_submit's iocbs named, after every segment; without room for it, the paths are only looked up
 * afterwards. */
static __always_inline void put_files(struct scratch *s) {
        __u32 off = s->b.off, size = s->b.n_files * sizeof(struct capture_iocb_file);
        if (size == 0 || size > sizeof(s->files) || off + size > CAPTURE_MAX_BYTES) {
                s->b.n_files = 0;
                return;
        }
        opaque(off);
        opaque(size);
        bpf_probe_read_kernel(s->buf + (off & (OFF_LIMIT - 1)), size & (LEN_LIMIT - 1), s->files);
        s->b.files_off = off;
        s->b.off = off + size;
}

/* A call begun before the program was attached (a reaper already waiting in io_getevents) left no enter; its
 * arguments are still in the registers it entered the kernel with, which the kernel keeps for its return. */
static __always_inline int args_at_exit(__u64 *args) {
        struct pt_regs *regs = (struct pt_regs *) bpf_task_pt_regs(bpf_get_current_task_btf());
        if (!regs || !bpf_core_field_exists(regs->r10))
                return 0;
        args[0] = BPF_CORE_READ(regs, di);
        args[1] = BPF_CORE_READ(regs, si);
        args[2] = BPF_CORE_READ(regs, dx);
        args[3] = BPF_CORE_READ(regs, r10);
        args[4] = BPF_CORE_READ(regs, r8);
        args[5] = BPF_CORE_READ(regs, r9);
        return 1;
}

/* The memory the call used, by what it is. */
static __always_inline void capture_memory(struct loop_ctx *l, struct scratch *s, int sc, const __u64 *args, long ret,
                                           const int typed) {
        switch (sc) {
        case AIO_IO_SETUP:
                if (ret == 0)
                        put_segment(s, args[1], 8);
                break;
        case AIO_IO_SUBMIT:
                capture_submit(l, s, args, ret, typed);
                break;
        case AIO_IO_CANCEL:
                put_segment(s, args[1], IOCB_SIZE);
                if (ret == 0)
                        put_segment(s, args[2], IO_EVENT_SIZE);
                break;
        case AIO_IO_GETEVENTS:
        case AIO_IO_PGETEVENTS:
                if (args[4])
                        put_segment(s, args[4], 16);
                if (ret > 0)
                        put_array(l, s, args[3], bounded(s, (__u64) ret), IO_EVENT_SIZE);
                break;
        }
}

/* The header after the exit record: what follows, the enter, the arguments and the thread's name. */
static __always_inline void put_header(struct scratch *s, const __u64 *args, __u64 enter_time, __u32 enter_cpu,
                                       const char *comm) {
        struct capture_header *h = (void *) (s->buf + CAPTURE_EXIT_RAW_SIZE);
        h->magic = CAPTURE_MAGIC;
        h->version = CAPTURE_VERSION;
        h->flags = (__u16) s->b.flags;
        h->n_segments = s->b.n_segs;
        h->size = s->b.off - CAPTURE_EXIT_RAW_SIZE;
        h->enter_cpu = enter_cpu;
        h->reserved = 0;
        h->enter_time = enter_time;
        __builtin_memcpy(h->args, args, sizeof(h->args));
        h->n_files = s->b.n_files;
        h->files_off = s->b.n_files ? s->b.files_off - CAPTURE_EXIT_RAW_SIZE - sizeof(struct capture_header) : 0;
        if (comm) /* the name its verdict was made for, at the enter */
                __builtin_memcpy(h->comm, comm, sizeof(h->comm));
        else
                bpf_get_current_comm(h->comm, sizeof(h->comm));
}

/* The current thread's verdict, as watched() makes it: a global function, so that a call's exit program keeps
 * the matching's stack apart from its record's or its counting's. */
__noinline int thread_verdict(struct thread_state *ts) {
        struct loop_ctx l = { .cpu = bpf_get_smp_processor_id() };
        return watched(&l, ts);
}

/* A call's exit: whether its record is to be written (1), with its thread's state and whether its enter was kept;
 * 0 when it is not watched, or was summed in the kernel here. */
static __always_inline int on_exit(struct exit_ctx *ctx, int sc, struct thread_state **ret_ts, int *ret_entered) {
        if (!call_wanted(sc))
                return 0;
        struct loop_ctx l = { .cpu = bpf_get_smp_processor_id() };
        struct thread_state *ts = thread_state();
        /* a call whose enter was kept was watched then: its verdict is not made again */
        int entered = ts && ts->args_valid && ts->sc == (__u32) sc;
        int verdict = entered ? (int) ts->watched : thread_verdict(ts);
        if (!verdict)
                return 0;
        if (verdict == WATCHED_SUMMED && ts) {
                /* counted here, no record: its process's identity still names its summaries */
                __u64 enter_time = 0;
                if (entered) {
                        enter_time = ts->enter_time;
                        ts->args_valid = 0;
                } else if (!args_at_exit(ts->args))
                        return 0;
                identity_once(ctx, &l, ts);
                sum_call(ts, sc, ctx->ret, enter_time);
                return 0;
        }
        if (summed_only)
                return 0;
        *ret_ts = ts;
        *ret_entered = entered;
        return 1;
}

/* A watched call's record, written at its exit.  Each syscall's in a function of its own (EXIT()), apart from its
 * program: the program's frame stays small, and a summed call's counting has the rest of the stack.  `typed`:
 * io_submit's iocbs' files read through bpf_rdonly_cast. */
static __always_inline int exit_record(struct exit_ctx *ctx, int sc, struct thread_state *ts, int entered,
                                       const int typed) {
        struct loop_ctx l = { .cpu = bpf_get_smp_processor_id() };
        struct scratch *s = record_begin_watched(&l);
        if (!s)
                return NEUTRAL;
        long ret = ctx->ret;
        s->b.off = CAPTURE_EXIT_RAW_SIZE + sizeof(struct capture_header);
        s->b.n_segs = 0;
        s->b.flags = 0;
        s->b.n_files = 0;
        s->b.files_off = 0;
        s->n_new_files = 0;
        /* The record the kernel would have written, then what the call used. */
        put_common(s->buf, exit_tp_id[sc]);
        *(__s32 *) (s->buf + CAPTURE_EXIT_NR_OFFSET) = ctx->nr;
        *(__u32 *) (s->buf + CAPTURE_EXIT_NR_OFFSET + 4) = 0;
        *(__s64 *) (s->buf + CAPTURE_EXIT_RET_OFFSET) = ret;

        struct { __u64 args[6]; } a = {};
        __u64 enter_time = 0;
        __u32 enter_cpu = 0;
        s->b.n_enter_files = 0;
        s->b.n_kviews = 0;
        if (entered) {
                if (sc == AIO_IO_SUBMIT) {
                        s->b.n_enter_files = ts->n_enter_files;
                        if (ts->n_enter_files)
                                __builtin_memcpy(s->b.enter_files, ts->enter_files, sizeof(s->b.enter_files));
                        s->b.n_kviews = ts->n_kviews;
                        /* only the slots filled: a one-iocb call copies one, not KVIEWS_IN_THREAD */
                        for (__u32 k = 0; k < KVIEWS_IN_THREAD; k++) {
                                if (k >= ts->n_kviews)
                                        break;
                                s->b.kviews[k] = ts->kviews[k];
                        }
                }
                __builtin_memcpy(a.args, ts->args, sizeof(a.args));
                enter_time = ts->enter_time;
                enter_cpu = ts->enter_cpu;
                ts->args_valid = 0;
                s->b.flags |= CAPTURE_F_ENTER;
        } else if (args_at_exit(a.args))
                s->b.flags |= CAPTURE_F_ARGS_AT_EXIT;
        else
                s->b.flags |= CAPTURE_F_NO_ARGS;
        if (!(s->b.flags & CAPTURE_F_NO_ARGS))
                capture_memory(&l, s, sc, a.args, ret, typed);
        /* the paths of files new to the daemon, before the record that names them */
        for (__u32 k = 0; k < NEW_FILES_MAX; k++) {
                s = scratch_of(&l);
                if (!s || k >= s->n_new_files)
                        break;
                struct new_file nf = s->new_files[k];
                send_path(ctx, &l, nf.f, nf.mnt_id, nf.ino);
        }
        identity_once(ctx, &l, ts);
        s = scratch_of(&l);
        if (!s)
                return NEUTRAL;
        if (!(s->b.flags & CAPTURE_F_NO_ARGS) &&
            (sc == AIO_IO_SUBMIT || sc == AIO_IO_GETEVENTS || sc == AIO_IO_PGETEVENTS))
                capture_ring(s, a.args[0], sc != AIO_IO_SUBMIT && ret > 0 ? (__u32) ret : 0);
        /* the iocbs the record holds (their file table has room: each took it), or its events */
        __u32 held = sc == AIO_IO_SUBMIT ? s->b.n_files : ret > 0 ? bounded(s, (__u64) ret) : 0;
        if (sc == AIO_IO_SUBMIT)
                put_files(s);
        put_header(s, a.args, enter_time, enter_cpu, entered ? ts->comm : 0);
        output(ctx, s->buf, s->b.off & (OFF_LIMIT - 1));
        /* what the record could not hold, in records of their own */
        if (ret > held && !(s->b.flags & CAPTURE_F_NO_ARGS) &&
            (sc == AIO_IO_SUBMIT || sc == AIO_IO_GETEVENTS || sc == AIO_IO_PGETEVENTS)) {
                l.ctx = ctx;
                send_more(&l, sc, a.args, ret, held, enter_time);
        }
        return NEUTRAL;
}

/* The completions written in a ring since the last look, in a record of their own: an io_destroy enter's
 * (CAPTURE_F_RING_ONLY), whatever the program runs on; none new, no record.  The ring is forgotten: io_destroy
 * unmaps it before it returns, and a process's end takes it along. */
static __always_inline void ring_record(void *ctx, struct loop_ctx *l, __u64 ring, __s32 nr) {
        struct scratch *s = scratch_of(l);
        if (!s)
                return;
        __u32 raw = 16 + 8; /* the enter's record: common, nr, padding, ctx */
        s->b.off = raw + sizeof(struct capture_header);
        s->b.n_segs = 0;
        s->b.flags = CAPTURE_F_RING_ONLY;
        s->b.n_files = 0;
        capture_ring(s, ring, 0);
        struct ring_key key = { .tgid = (__u32) (bpf_get_current_pid_tgid() >> 32), .ctx = ring };
        bpf_map_delete_elem(&ring_tails, &key);
        if (!(s->b.flags & CAPTURE_F_RING))
                return;
        count(CAPTURE_CNT_RECORDS);
        put_common(s->buf, enter_tp_id[AIO_IO_DESTROY]);
        *(__s32 *) (s->buf + 8) = nr;
        *(__u32 *) (s->buf + 12) = 0;
        *(__u64 *) (s->buf + 16) = ring;
        struct capture_header *h = (void *) (s->buf + raw);
        __u32 size = s->b.off;
        h->magic = CAPTURE_MAGIC;
        h->version = CAPTURE_VERSION;
        h->flags = (__u16) s->b.flags;
        h->n_segments = s->b.n_segs;
        h->size = size - raw;
        h->n_files = 0;
        h->files_off = 0;
        h->enter_cpu = 0;
        h->reserved = 0;
        h->enter_time = 0;
        __builtin_memset(h->args, 0, sizeof(h->args));
        bpf_get_current_comm(h->comm, sizeof(h->comm));
        output(ctx, s->buf, size & (OFF_LIMIT - 1));
}

static __always_inline void ring_at_destroy(struct enter_ctx *ctx, struct loop_ctx *l) {
        ring_record(ctx, l, ctx->args[0], ctx->nr);
}

#define ENTER(name, sc, n_args)                                             \
        SEC("tracepoint/syscalls/sys_enter_" #name)                         \
        int enter_##name(struct enter_ctx *ctx) {                           \
                return in_force() ? on_enter(ctx, sc, n_args) : NEUTRAL;    \
        }
#define EXIT_AS(name, prog, sc, typed)                                      \
        static __noinline int prog##_record(struct exit_ctx *ctx, struct thread_state *ts, int entered) { \
                return exit_record(ctx, sc, ts, entered, typed);           \
        }                                                                   \
        SEC("tracepoint/syscalls/sys_exit_" #name)                          \
        int prog(struct exit_ctx *ctx) {                                    \
                struct thread_state *ts = 0;                                \
                int entered = 0;                                            \
                if (in_force() && on_exit(ctx, sc, &ts, &entered))          \
                        prog##_record(ctx, ts, entered);                    \
                return NEUTRAL;                                             \
        }
#define EXIT(name, sc) EXIT_AS(name, exit_##name, sc, 1)

ENTER(io_setup, AIO_IO_SETUP, 2)
ENTER(io_destroy, AIO_IO_DESTROY, 1)
ENTER(io_submit, AIO_IO_SUBMIT, 3)
ENTER(io_cancel, AIO_IO_CANCEL, 3)
ENTER(io_getevents, AIO_IO_GETEVENTS, 5)
ENTER(io_pgetevents, AIO_IO_PGETEVENTS, 6)
ENTER(io_uring_setup, AIO_IO_URING_SETUP, 2)
ENTER(io_uring_enter, AIO_IO_URING_ENTER, 6)
ENTER(io_uring_register, AIO_IO_URING_REGISTER, 4)
EXIT(io_setup, AIO_IO_SETUP)
EXIT(io_submit, AIO_IO_SUBMIT)
EXIT(io_cancel, AIO_IO_CANCEL)
EXIT(io_getevents, AIO_IO_GETEVENTS)
EXIT(io_pgetevents, AIO_IO_PGETEVENTS)
EXIT(io_destroy, AIO_IO_DESTROY) /* nothing of memory: a capture with no segment */
EXIT(io_uring_setup, AIO_IO_URING_SETUP)
EXIT(io_uring_enter, AIO_IO_URING_ENTER)
EXIT(io_uring_register, AIO_IO_URING_REGISTER)

/* io_submit's exit for kernels without bpf_rdonly_cast: its iocbs' files' identities through helper calls. */
EXIT_AS(io_submit, exit_io_submit_probed, AIO_IO_SUBMIT, 0)

/* A direct read or write through iomap (ext4, xfs, btrfs...) begins: if it is one of an io_submit of a
 * watched thread (the kiocb an aio_kiocb's), what the kernel took of the iocb, for the exit to check. */
SEC("tp_btf/iomap_dio_rw_begin")
int aio_dio_begin(__u64 *ctx) {
        /* The tracepoint's arguments are the kernel's own pointers: read directly (a load each), not through
         * bpf_probe_read_kernel (a helper call each), except beyond the kiocb, which the verifier cannot check
         * against the type it knows the pointer by. */
        struct kiocb *k = (struct kiocb *) ctx[0];
        struct iov_iter *iter = (struct iov_iter *) ctx[1];
        /* a synchronous one (pread on O_DIRECT) has no completion: it returns before the storage lookup */
        if (!k->ki_complete || !in_force())
                return 0;
        struct thread_state *ts = thread_state_if_any();
        if (!ts || !ts->args_valid || ts->sc != AIO_IO_SUBMIT || ts->watched == WATCHED_SUMMED)
                return 0; /* a summed submit's iocbs are not checked */
        struct aio_kiocb *req = (struct aio_kiocb *) k; /* its kiocb is its first member */
        __u64 iocb = BPF_CORE_READ(req, ki_res.obj);
        struct kview v = { .pos = k->ki_pos, .count = iter->count };
        if (!identity_of_btf(k->ki_filp, &v.mnt_id, &v.ino))
                return 0;
        __u32 n = ts->n_kviews;
        if (n < KVIEWS_IN_THREAD) {
                ts->kviews[n & (KVIEWS_IN_THREAD - 1)] = (struct kview_slot) { .iocb = iocb, .v = v };
        } else {
                struct kview_key key = { .tid = (__u32) bpf_get_current_pid_tgid(), .iocb = iocb };
                bpf_map_update_elem(&kviews, &key, &v, BPF_ANY);
        }
        ts->n_kviews = n + 1;
        return 0;
}
