/* SPDX-License-Identifier: GPL-2.0-or-later */
/* io_uring: requests with no system call each, from the io_uring tracepoints.
 * Part of bpf/capture.bpf.c, which includes it. */

#define PF_IO_WORKER 0x10
#define REQ_F_FIXED_FILE 0x1

/* The owner of each ring a watched process submitted to: a completion may be posted by any task.  A ring's
 * address is the kernel's to give again once the ring is freed: a ring made there forgets the owner
 * (uring_created), and a completion is the owner's only from the ring it submitted to, the one whose maker's
 * memory it holds (mm: a ring holds it as long as it lives, so no other ring's can be that one). */
struct uring_owner {
        __u32 tgid;      /* the kernel's */
        __u32 seen_tgid; /* the daemon's pid namespace's */
        __u64 mm;        /* the ring's mm_account */
        __u64 start_time; /* the owner's start, for its summaries' key */
        __u32 summed;     /* its requests are summed in the kernel, no record written */
        __u32 reserved;
};

struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, CAPTURE_MAX_URING_RINGS);
        __type(key, __u64);
        __type(value, struct uring_owner);
} uring_owners SEC(".maps");

/* The processes with a ring in uring_owners: what a process's end looks up before it walks that map (a walk
 * visits every bucket, some 20 us, which every process of the host would pay at its end). */
struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, CAPTURE_MAX_URING_RINGS);
        __type(key, __u32);
        __type(value, __u8);
} uring_owner_tgids SEC(".maps");

/* A process's end: its requests in flight are abandoned then, so the cancellations its rings' teardown posts
 * afterwards (from a kernel worker) are not written. */
#define URING_RINGS_AT_EXIT 8
struct uring_walk {
        __u32 tgid;
        __u32 n;
        __u64 ring[URING_RINGS_AT_EXIT];
};

static long collect_uring(void *map, __u64 *ring, struct uring_owner *owner, struct uring_walk *w) {
        (void) map;
        if (owner->tgid == w->tgid && w->n < URING_RINGS_AT_EXIT)
                w->ring[w->n++ & (URING_RINGS_AT_EXIT - 1)] = *ring;
        return 0;
}

static __always_inline void uring_forget(__u32 tgid) {
        /* looked up before the delete: most processes own no ring, and a delete that misses still takes the
         * bucket's lock (measured: exit_group's twin, 60 ns a process more) */
        if (!bpf_map_lookup_elem(&uring_owner_tgids, &tgid))
                return;
        bpf_map_delete_elem(&uring_owner_tgids, &tgid);
        struct uring_walk w = { .tgid = tgid };
        bpf_for_each_map_elem(&uring_owners, collect_uring, &w, 0);
        for (__u32 i = 0; i < URING_RINGS_AT_EXIT && i < w.n; i++)
                bpf_map_delete_elem(&uring_owners, &w.ring[i]);
}

/* With io_uring off: the processes whose first request was noted. */
struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, CAPTURE_MAX_URING_RINGS);
        __type(key, __u32);
        __type(value, __u32);
} uring_noted SEC(".maps");

/* The ring's owner, for its completions: written only when it is new (an update of an LRU map costs more than
 * a lookup, and this runs at every request). */
static __always_inline void uring_own(__u64 ring, __u32 tgid, __u32 seen_tgid, __u64 mm, int summed) {
        struct uring_owner *owner = bpf_map_lookup_elem(&uring_owners, &ring);
        if (!owner || owner->tgid != tgid || owner->mm != mm || owner->summed != (__u32) summed) {
                struct uring_owner o = { .tgid = tgid, .seen_tgid = seen_tgid, .mm = mm,
                                         .start_time = sum_key_now().start_time, .summed = (__u32) summed };
                __u8 one = 1;
                bpf_map_update_elem(&uring_owner_tgids, &tgid, &one, BPF_ANY);
                bpf_map_update_elem(&uring_owners, &ring, &o, BPF_ANY);
        }
}

/* The memory a ring holds of its maker, 0 where the kernel has no such field. */
static __always_inline __u64 ring_mm(struct io_ring_ctx *ring) {
        return bpf_core_field_exists(ring->mm_account) ? (__u64) BPF_CORE_READ(ring, mm_account) : 0;
}

/* The owner of the ring, when it is the ring the owner submitted to: NULL for another's at the same address. */
static __always_inline struct uring_owner *uring_owner_of(__u64 ring) {
        struct uring_owner *owner = bpf_map_lookup_elem(&uring_owners, &ring);
        if (owner && owner->mm != ring_mm((struct io_ring_ctx *) ring))
                return 0;
        return owner;
}

/* A ring made where another was: whoever owned that one owns nothing here. */
SEC("tp_btf/io_uring_create")
int uring_created(__u64 *ctx) {
        if (!in_force())
                return 0;
        __u64 ring = ctx[1];
        bpf_map_delete_elem(&uring_owners, &ring);
        return 0;
}

/* Whether io_uring's requests are traced (io_uring = true in the config). */
static __always_inline int uring_traced(void) {
        __u32 zero = 0;
        struct capture_watch *w = bpf_map_lookup_elem(&watch, &zero);
        return !w || w->uring;
}

/* Whether this is the process's first request since io_uring was off: to be noted. */
static __always_inline int uring_first(__u32 tgid) {
        __u32 one = 1;
        return bpf_map_update_elem(&uring_noted, &tgid, &one, BPF_NOEXIST) == 0;
}

/* The fixed part of the two records, as their format files lay it out (checked by the daemon). */
struct uring_submit_ctx {
        __u64 common;
        __u64 ctx;
        __u64 req;
        __u64 user_data;
        __u8 opcode;
        __u8 pad[7];
        __u64 flags;
        __u8 sq_thread;
        __u8 pad2[3];
        __u32 op_str_loc;
};

struct uring_complete_ctx {
        __u64 common;
        __u64 ctx;
        __u64 req;
        __u64 user_data;
        int res;
        __u32 cflags;
        __u64 extra1;
        __u64 extra2;
};

struct uring_record {
        union {
                __u8 raw[CAPTURE_URING_RAW_SIZE];
                struct uring_submit_ctx submit;
                struct uring_complete_ctx complete;
        };
        struct capture_uring u;
};
_Static_assert(sizeof(struct uring_submit_ctx) == CAPTURE_URING_RAW_SIZE, "io_uring_submit_req's layout");
_Static_assert(sizeof(struct uring_complete_ctx) == CAPTURE_URING_RAW_SIZE, "io_uring_complete's layout");

#define REQ_F_BUFFER_SELECT 0x20 /* IOSQE_BUFFER_SELECT: the buffer is picked at issue */

/* What the op's prep read from the SQE: offset, length, buffer and flags; for a vectored read or write, the
 * bytes its iovecs add up to. */
static __always_inline void uring_details(struct io_kiocb *req, __u8 req_flags, __u8 opcode,
                                          struct capture_uring *u) {
        __u8 layout = opcode < URING_OP_COUNT ? uring_layout[opcode] : URING_LAYOUT_NONE;
        /* The op's part is io_kiocb_to_cmd(): the request's first bytes, which the verifier knows as the bytes of
         * the request's io_cmd_data, and lets a program load as it likes. */
        if (layout == URING_LAYOUT_RW) {
                struct io_rw *rw = (struct io_rw *) req;
                u->off = (__u64) rw->kiocb.ki_pos;
                u->addr = rw->addr;
                u->len = rw->len;
                u->rw_flags = (__u32) rw->flags;
                u->flags |= CAPTURE_URING_F_DETAILS;
                if (uring_vectored[opcode] && !(req_flags & REQ_F_BUFFER_SELECT) &&
                    bpf_core_field_exists(struct io_async_rw, iter)) {
                        struct io_async_rw *io = req->async_data;
                        if (io) {
                                u->bytes = (__u32) io->iter.count;
                                u->flags |= CAPTURE_URING_F_BYTES;
                        }
                }
        } else if (layout == URING_LAYOUT_SYNC) {
                struct io_sync *sync = (struct io_sync *) req;
                u->off = (__u64) sync->off;
                u->len = (__u32) sync->len;
                u->rw_flags = (__u32) sync->flags;
                u->flags |= CAPTURE_URING_F_DETAILS;
        }
}

/* Whether the submitting thread is watched.  An SQPOLL thread or a worker ("iou-sqp-PID") submits for its
 * process: it is watched by the process's name, which comm gets (NUL-padded, as the names' map keys are). */
static __always_inline int uring_watched(struct loop_ctx *l, char comm[GLOB_COMM_SIZE], struct thread_state **ret_ts) {
        struct task_struct *task = bpf_get_current_task_btf();
        if (task->flags & PF_IO_WORKER)
                BPF_CORE_READ_STR_INTO((char(*)[GLOB_COMM_SIZE]) comm, task, group_leader, comm);
        else
                bpf_get_current_comm(comm, GLOB_COMM_SIZE);
        *ret_ts = thread_state();
        __u32 zero = 0;
        return watched_as(l, bpf_map_lookup_elem(&watch, &zero), *ret_ts, comm);
}

/* A submit record of the current thread, as io_uring_submit_req's format file lays it out (the daemon reads it
 * so): the common fields, the request, and who submitted it. */
static __always_inline void uring_submit_begin(struct uring_record *r, __u64 ring, __u64 req, __u64 user_data,
                                               __u8 opcode, const char *comm, __u64 id) {
        put_common(r->raw, tp_id_of[EVENT_URING_SUBMIT]);
        r->submit.ctx = ring;
        r->submit.req = req;
        r->submit.user_data = user_data;
        r->submit.opcode = opcode;
        r->u.magic = CAPTURE_URING_MAGIC;
        r->u.pid = (__u32) (id >> 32);
        r->u.tid = (__u32) id;
        __builtin_memcpy(r->u.comm, comm, sizeof(r->u.comm));
}

#define IORING_SETUP_SQPOLL (1u << 1)

/* A request submitted, after its prep.  A tp_btf program: its argument is the request itself, whose fields the
 * verifier lets it load directly (a classic tracepoint's program gets a record the kernel builds first, and
 * reads through the request's address with a helper call a field); the record the tracepoint would have
 * written is made from them.  `typed`: the file the fd names read through bpf_rdonly_cast. */
static __always_inline int uring_submission(__u64 *ctx, const int typed) {
        struct io_kiocb *req = (struct io_kiocb *) ctx[0];
        struct loop_ctx l = { .cpu = bpf_get_smp_processor_id() };
        char comm[GLOB_COMM_SIZE] = {};
        struct thread_state *ts;
        int verdict = uring_watched(&l, comm, &ts);
        if (!verdict)
                return NEUTRAL;
        __u64 id = bpf_get_current_pid_tgid();
        __u32 tgid = (__u32) (id >> 32);
        int note = !uring_traced();
        if (note && !uring_first(tgid))
                return NEUTRAL;
        identity_once(ctx, &l, ts);
        if (verdict == WATCHED_SUMMED && !note) {
                struct io_ring_ctx *sring = req->ctx;
                struct capture_sum_key pk = sum_key_now();
                __u8 op = req->opcode;
                __u32 op_flags = 0;
                if ((op < URING_OP_COUNT ? uring_layout[op] : URING_LAYOUT_NONE) == URING_LAYOUT_SYNC)
                        op_flags = (__u32) ((struct io_sync *) req)->flags;
                struct sum_uring_args a = { .ring = (__u64) sring, .req = (__u64) req, .user_data = req->cqe.user_data,
                                            .req_flags = req->flags, .time = bpf_ktime_get_ns(), .pk = pk,
                                            .tgid = tgid, .op_flags = op_flags, .opcode = op };
                sum_uring_submit(&a);
                uring_own((__u64) sring, tgid, pk.pid,
                          bpf_core_field_exists(sring->mm_account) ? (__u64) sring->mm_account : 0, 1);
                return NEUTRAL;
        }
        if (summed_only)
                return NEUTRAL;
        count(CAPTURE_CNT_RECORDS);
        struct uring_record r = {};
        __u64 seen = seen_pid_tgid();
        struct io_ring_ctx *ring = req->ctx;
        __u8 opcode = req->opcode;
        __u64 req_flags = req->flags;
        uring_submit_begin(&r, (__u64) ring, (__u64) req, req->cqe.user_data, opcode, comm, seen);
        r.submit.flags = req_flags;
        r.submit.sq_thread = (ring->flags & IORING_SETUP_SQPOLL) != 0;
        struct capture_uring *u = &r.u;
        if (note) {
                u->flags = CAPTURE_URING_F_NOTE;
                output(ctx, &r, sizeof(r));
                return NEUTRAL;
        }
        if (r.submit.sq_thread)
                u->flags |= CAPTURE_URING_F_SQ_THREAD;
        u->fd = (__u32) req->cqe.fd;
        uring_details(req, (__u8) req_flags, opcode, u);
        if (req_flags & REQ_F_FIXED_FILE)
                u->flags |= CAPTURE_URING_F_FIXED_FILE;
        else {
                struct scratch *s = scratch_of(&l);
                if (s) {
                        s->b.last_fd = ~0u; /* no file identity of another record's */
                        file_identity(s, u->fd, &u->file, typed);
                        if (u->file.mnt_id)
                                send_path(ctx, &l, s->b.last_file, u->file.mnt_id, u->file.ino);
                }
        }
        uring_own((__u64) ring, tgid, (__u32) (seen >> 32),
                  bpf_core_field_exists(ring->mm_account) ? (__u64) ring->mm_account : 0, 0);
        output(ctx, &r, sizeof(r));
        return NEUTRAL;
}

TP_BTF_TWINS(io_uring_submit_req, uring_submit, uring_submission)

/* Who posted a completion (any task: the owner, an io worker, a kernel worker), for the ring's owner. */
static __always_inline void uring_completer(struct capture_uring *u, const struct uring_owner *owner) {
        u->magic = CAPTURE_URING_MAGIC;
        u->pid = owner->seen_tgid;
        u->tid = (__u32) seen_pid_tgid();
        bpf_get_current_comm(u->comm, sizeof(u->comm));
}

/* The ABI's struct io_uring_cqe */
struct io_uring_cqe_head {
        __u64 user_data;
        __s32 res;
        __u32 flags;
};

/* A completion: the tracepoint's arguments (tp_btf), the ring, the request and the CQE, so that the file the
 * kernel used (the request's, taken at issue, when the fd may name another since the submit) comes with it,
 * and its path if the daemon was not told it yet.  The tracepoint gives the request as a `void *`; `typed`: it
 * is read through bpf_rdonly_cast. */
static __always_inline int uring_completion(__u64 *ctx, const int typed) {
        __u64 ring = ctx[0];
        struct uring_owner *owner = bpf_map_lookup_elem(&uring_owners, &ring);
        if (!owner || !uring_traced())
                return NEUTRAL;
        /* the tracepoint's ring is a pointer the verifier knows: its field is a load */
        struct io_ring_ctx *typed_ring = (struct io_ring_ctx *) ctx[0];
        if (bpf_core_field_exists(typed_ring->mm_account) && owner->mm != (__u64) typed_ring->mm_account)
                return NEUTRAL; /* another ring at the address of the owner's */
        if (owner->summed) {
                struct io_uring_cqe_head scqe;
                if (bpf_probe_read_kernel(&scqe, sizeof(scqe), (const void *) ctx[2]) != 0)
                        return NEUTRAL;
                struct capture_sum_key pk = { .pid = owner->seen_tgid, .start_time = owner->start_time };
                struct sum_uring_args a = { .ring = ring, .req = ctx[1], .user_data = scqe.user_data, .res = scqe.res,
                                            .cflags = scqe.flags, .time = bpf_ktime_get_ns(), .pk = pk,
                                            .tgid = owner->tgid };
                sum_uring_complete(&a);
                return NEUTRAL;
        }
        if (summed_only)
                return NEUTRAL;
        struct io_uring_cqe_head cqe;
        if (bpf_probe_read_kernel(&cqe, sizeof(cqe), (const void *) ctx[2]) != 0)
                return NEUTRAL;
        count(CAPTURE_CNT_RECORDS);
        struct uring_record r = {};
        put_common(r.raw, tp_id_of[EVENT_URING_COMPLETE]);
        r.complete.ctx = ring;
        r.complete.req = ctx[1];
        r.complete.user_data = cqe.user_data;
        r.complete.res = cqe.res;
        r.complete.cflags = cqe.flags;
        uring_completer(&r.u, owner);
        /* a registered file's too: the request holds the file itself, not the table's tagged slot */
        struct file *f = 0;
        if (typed) {
                struct io_kiocb *req = bpf_rdonly_cast((void *) ctx[1], bpf_core_type_id_kernel(struct io_kiocb));
                f = req->file;
        } else if (ctx[1])
                f = BPF_CORE_READ((struct io_kiocb *) ctx[1], file);
        if (f && identity_of_as(f, &r.u.file.mnt_id, &r.u.file.ino, typed)) {
                struct loop_ctx l = { .cpu = bpf_get_smp_processor_id() };
                r.u.flags |= CAPTURE_URING_F_FILE;
                send_path(ctx, &l, f, r.u.file.mnt_id, r.u.file.ino);
        }
        output(ctx, &r, sizeof(r));
        return NEUTRAL;
}

TP_BTF_TWINS(io_uring_complete, uring_complete, uring_completion)

/* A request that failed before it was submitted (a bad opcode, bad flags, a prep that refused it): written as
 * a submit whose details are the SQE's, as the kernel has it (its own mapping of the ring's SQEs; the
 * tracepoint's arguments: the SQE, the request, the error), so that its completion, which follows, has a
 * request to end.  The fd is the SQE's, as the program wrote it. */
struct io_uring_sqe_head { /* the ABI's struct io_uring_sqe, to user_data */
        __u8 opcode;
        __u8 flags;
        __u16 ioprio;
        __s32 fd;
        __u64 off;
        __u64 addr;
        __u32 len;
        __u32 op_flags;
        __u64 user_data;
};
_Static_assert(sizeof(struct io_uring_sqe_head) == 40, "struct io_uring_sqe's head");

#define IOSQE_FIXED_FILE 0x1

SEC("tp_btf/io_uring_req_failed")
int uring_failed(__u64 *ctx) {
        if (!in_force())
                return 0;
        const void *sqe_at = (const void *) ctx[0];
        struct io_kiocb *req = (struct io_kiocb *) ctx[1];
        struct loop_ctx l = { .cpu = bpf_get_smp_processor_id() };
        char comm[GLOB_COMM_SIZE] = {};
        struct thread_state *ts;
        int verdict = uring_watched(&l, comm, &ts);
        if (!verdict || !uring_traced())
                return NEUTRAL;
        identity_once(ctx, &l, ts);
        struct io_uring_sqe_head sqe;
        if (bpf_probe_read_kernel(&sqe, sizeof(sqe), sqe_at) != 0) {
                count(CAPTURE_CNT_SQE_UNREADABLE);
                return NEUTRAL;
        }
        __u64 ring = (__u64) BPF_CORE_READ(req, ctx);
        __u64 id = bpf_get_current_pid_tgid();
        __u32 tgid = (__u32) (id >> 32);
        if (verdict == WATCHED_SUMMED) {
                /* submitted, and its completion follows */
                struct capture_sum_key pk = sum_key_now();
                struct sum_uring_args a = { .ring = ring, .req = (__u64) req, .user_data = sqe.user_data,
                                            .req_flags = sqe.flags, .time = bpf_ktime_get_ns(), .pk = pk,
                                            .tgid = tgid, .op_flags = sqe.op_flags, .opcode = sqe.opcode };
                sum_uring_submit(&a);
                uring_own(ring, tgid, pk.pid, ring_mm((struct io_ring_ctx *) ring), 1);
                return NEUTRAL;
        }
        if (summed_only)
                return NEUTRAL;
        count(CAPTURE_CNT_RECORDS);
        struct uring_record r = {};
        __u64 seen = seen_pid_tgid();
        uring_submit_begin(&r, ring, (__u64) req, sqe.user_data, sqe.opcode, comm, seen);
        struct capture_uring *u = &r.u;
        u->flags = CAPTURE_URING_F_FAILED | CAPTURE_URING_F_DETAILS;
        u->fd = (__u32) sqe.fd;
        u->off = sqe.off;
        u->addr = sqe.addr;
        u->len = sqe.len;
        u->rw_flags = sqe.op_flags;
        if (sqe.flags & IOSQE_FIXED_FILE)
                u->flags |= CAPTURE_URING_F_FIXED_FILE;
        else {
                struct scratch *s = scratch_of(&l);
                if (s) {
                        s->b.last_fd = ~0u;
                        file_identity(s, u->fd, &u->file, 0); /* rare: no twin for it */
                }
        }
        uring_own(ring, tgid, (__u32) (seen >> 32), ring_mm((struct io_ring_ctx *) ring), 0);
        output(ctx, &r, sizeof(r));
        return NEUTRAL;
}

/* A request handed to an io-wq worker (it would have blocked, or IOSQE_ASYNC asked for it), or armed for poll
 * (its file not ready): the tracepoint's arguments (tp_btf), the request and the tracepoint's own; written as
 * the tracepoint would have written its record, for the daemon to mark the request in flight.  A summed
 * process's are counted. */
struct uring_async_ctx {
        __u64 common;
        __u64 ctx;
        __u64 req;
        __u64 user_data;
        __u8 opcode;
        __u8 pad[7];
        __u64 flags;
        __u64 work;
        __s32 rw;
        __u32 op_str;
};
_Static_assert(sizeof(struct uring_async_ctx) == CAPTURE_URING_ASYNC_RAW_SIZE, "io_uring_queue_async_work's layout");

struct uring_poll_ctx {
        __u64 common;
        __u64 ctx;
        __u64 req;
        __u64 user_data;
        __u8 opcode;
        __u8 pad[3];
        __s32 mask;
        __s32 events;
        __u32 op_str;
};
_Static_assert(sizeof(struct uring_poll_ctx) == CAPTURE_URING_POLL_RAW_SIZE, "io_uring_poll_arm's layout");

static __always_inline int uring_async(__u64 *ctx, const int polled) {
        if (!in_force())
                return NEUTRAL;
        struct io_kiocb *req = (struct io_kiocb *) ctx[0];
        struct io_ring_ctx *ring = req->ctx;
        __u64 r_ring = (__u64) ring;
        struct uring_owner *owner = bpf_map_lookup_elem(&uring_owners, &r_ring);
        if (!owner || !uring_traced())
                return NEUTRAL;
        if (bpf_core_field_exists(ring->mm_account) && owner->mm != (__u64) ring->mm_account)
                return NEUTRAL; /* another ring at the address of the owner's */
        __u8 opcode = req->opcode;
        if (owner->summed) {
                struct capture_sum_key pk = { .pid = owner->seen_tgid, .start_time = owner->start_time };
                sum_uring_async(&pk, opcode, polled);
                return NEUTRAL;
        }
        if (summed_only)
                return NEUTRAL;
        count(CAPTURE_CNT_RECORDS);
        if (polled) {
                struct {
                        struct uring_poll_ctx raw;
                        struct capture_uring u;
                } r = {};
                put_common((__u8 *) &r.raw, tp_id_of[EVENT_URING_POLL_ARM]);
                r.raw.ctx = r_ring;
                r.raw.req = (__u64) req;
                r.raw.user_data = req->cqe.user_data;
                r.raw.opcode = opcode;
                r.raw.mask = (__s32) ctx[1];
                r.raw.events = (__s32) ctx[2];
                uring_completer(&r.u, owner);
                output(ctx, &r, sizeof(r));
        } else {
                struct {
                        struct uring_async_ctx raw;
                        struct capture_uring u;
                } r = {};
                put_common((__u8 *) &r.raw, tp_id_of[EVENT_URING_ASYNC]);
                r.raw.ctx = r_ring;
                r.raw.req = (__u64) req;
                r.raw.user_data = req->cqe.user_data;
                r.raw.opcode = opcode;
                r.raw.flags = req->flags;
                r.raw.rw = (__s32) ctx[1];
                uring_completer(&r.u, owner);
                output(ctx, &r, sizeof(r));
        }
        return NEUTRAL;
}

SEC("tp_btf/io_uring_queue_async_work")
int uring_punted(__u64 *ctx) {
        return uring_async(ctx, 0);
}

SEC("tp_btf/io_uring_poll_arm")
int uring_poll_armed(__u64 *ctx) {
        return uring_async(ctx, 1);
}

/* A completion the CQ ring had no room for: no io_uring_complete for it.  Kept in the overflow list (ocqe),
 * or, where that could not be allocated, dropped. */
struct uring_overflow_ctx {
        __u64 common;
        __u64 ctx;
        __u64 user_data;
        int res;
        __u32 cflags;
        __u64 ocqe;
};
_Static_assert(sizeof(struct uring_overflow_ctx) == CAPTURE_URING_OVERFLOW_RAW_SIZE, "io_uring_cqe_overflow's layout");

SEC("tracepoint/io_uring/io_uring_cqe_overflow")
int uring_overflow(struct uring_overflow_ctx *ctx) {
        if (!in_force())
                return NEUTRAL;
        __u64 ring = ctx->ctx;
        struct uring_owner *owner = uring_owner_of(ring);
        if (!owner || !uring_traced())
                return NEUTRAL;
        if (owner->summed) {
                struct capture_sum_key pk = { .pid = owner->seen_tgid, .start_time = owner->start_time };
                struct sum_uring_args a = { .ring = ring, .user_data = ctx->user_data, .res = ctx->res,
                                            .cflags = ctx->cflags, .time = bpf_ktime_get_ns(), .pk = pk,
                                            .tgid = owner->tgid, .overflow = 1 };
                sum_uring_complete(&a);
                return NEUTRAL;
        }
        if (summed_only)
                return NEUTRAL;
        count(CAPTURE_CNT_RECORDS);
        struct {
                struct uring_overflow_ctx raw;
                struct capture_uring u;
        } r = {};
        put_common((__u8 *) &r.raw, tp_id_of[EVENT_URING_OVERFLOW]);
        r.raw.ctx = ring;
        r.raw.user_data = ctx->user_data;
        r.raw.res = ctx->res;
        r.raw.cflags = ctx->cflags;
        r.raw.ocqe = ctx->ocqe;
        uring_completer(&r.u, owner);
        output(ctx, &r, sizeof(r));
        return NEUTRAL;
}
