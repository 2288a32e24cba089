/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Summaries made in the kernel, for the threads only summarized (records = [ "summary" ], the packaged default):
 * each request's submit and end paired here, and counted into its process's interval as the daemon counts the
 * records (lib/request.c: proc_interval_count_end), with no record of a call or a request in the rings.  The
 * daemon takes the interval's counts from one of two maps while the programs fill the other (sum_gen), and a
 * process's last ones at its end.  Part of bpf/capture.bpf.c, which includes it: its maps and helpers are that
 * program's. */

/* Which of proc_sums_0 and _1 the programs count into: the daemon flips it at each interval. */
__u32 sum_gen = 0;

#define SUM_MAP(n)                                          \
        struct {                                            \
                __uint(type, BPF_MAP_TYPE_HASH);            \
                __uint(map_flags, BPF_F_NO_PREALLOC);       \
                __uint(max_entries, CAPTURE_MAX_SUM_PROCS); \
                __type(key, struct capture_sum_key);        \
                __type(value, struct capture_sum);          \
        } n SEC(".maps")
SUM_MAP(proc_sums_0);
SUM_MAP(proc_sums_1);

/* A zeroed interval, the first value of a process's entry (too large to build on the stack). */
struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, struct capture_sum);
} sum_zero SEC(".maps");

/* What a summed process keeps across intervals, in its thread group leader's storage: found without a hash,
 * and gone with the process.  Each thread of the process reaches it, so each of its calls and requests does;
 * an io_uring completion posted by another process's task (a kernel worker at the ring's end) does not. */
struct sum_live {
        __u64 inflight;     /* at least its requests in flight: no walk at its end while 0 */
        __u32 unidentified; /* completions that could not be read: requests never reaped then are unknown */
        __u32 early;        /* completions held for a submit not seen yet (reaped before it returned) */
};

struct {
        __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __type(key, int);
        __type(value, struct sum_live);
} sum_live SEC(".maps");

/* The current thread's process, as the summaries key it. */
static __always_inline struct capture_sum_key sum_key_now(void) {
        struct task_struct *leader = bpf_get_current_task_btf()->group_leader;
        return (struct capture_sum_key) {
                .pid = (__u32) (seen_pid_tgid() >> 32),
                .start_time = bpf_core_field_exists(leader->start_boottime) ? leader->start_boottime : 0,
        };
}

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, CAPTURE_MAX_SUM_INFLIGHT);
        __type(key, struct sum_key);
        __type(value, struct sum_req);
} sum_inflight SEC(".maps");

/* AIO: a completion reaped before the io_submit that began it returned (a reaper on another CPU), held for it. */
struct sum_early {
        __u64 end_time;
        __u64 data;
        __s64 res;
};

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, 4096);
        __type(key, struct sum_key);
        __type(value, struct sum_early);
} sum_early SEC(".maps");

/* io_uring: a request by its ring and user_data, for the completions that name no request (a multishot one's but
 * its last, a zero-copy send's notification), of the ops that post such (uring_posts_alone): two map updates a
 * request that the others do without. */
struct sum_data_key {
        __u64 ring;
        __u64 user_data;
};

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, CAPTURE_MAX_SUM_INFLIGHT);
        __type(key, struct sum_data_key);
        __type(value, __u64);
} sum_by_data SEC(".maps");

/* io_uring: a completion that found the CQ ring full names only its user_data.  Held here until its request is
 * seen again (reused by the kernel, which it is once done, or left at its process's end), and counted then as
 * that request's end, at the time it ended.  Rare: a program that lets its CQ ring fill. */
struct sum_overflow {
        __u64 end_time;
        __s64 res;
        __u32 tgid; /* the ring owner's, the kernel's pid */
        __u32 reserved;
};

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, 4096);
        __type(key, struct sum_data_key);
        __type(value, struct sum_overflow);
} sum_overflowed SEC(".maps");

/* How many sum_overflowed holds: while none, no request looks there. */
__u32 sum_overflows_held = 0;

/* The io_uring ops that may post a completion naming no request: poll_add, recvmsg, timeout, accept, recv,
 * read_multishot and recv_zc in their multishot forms, uring_cmd (a driver's own), send_zc and sendmsg_zc (the
 * notification). */
#define URING_POSTS_ALONE                                                                                  \
        ((1ull << 6) | (1ull << 10) | (1ull << 11) | (1ull << 13) | (1ull << 27) | (1ull << 46) |          \
         (1ull << 47) | (1ull << 48) | (1ull << 49) | (1ull << 58))
static __always_inline int uring_posts_alone(__u8 opcode) {
        return opcode >= 64 || ((URING_POSTS_ALONE >> (opcode & 63)) & 1);
}

#define AIO_DIR_ROW(op, n, dir, v) [op] = AIO_DIR_##dir,
enum { AIO_DIR_NO_DATA, AIO_DIR_READ, AIO_DIR_WRITE };
static const __u8 aio_dir[AIO_OPCODE_MAX + 1] = { AIO_OPS(AIO_DIR_ROW) };
#define AIO_KNOWN_ROW(op, n, dir, v) [op] = 1,
static const __u8 aio_known[AIO_OPCODE_MAX + 1] = { AIO_OPS(AIO_KNOWN_ROW) };
#define URING_AIO_ROW(op, n, aio, layout, f, v) [op] = (aio) + 1,
static const __u8 uring_aio[URING_OP_COUNT] = { URING_OPS(URING_AIO_ROW) };

/* An AIO opcode's index among the counts: its own, or the last for any other. */
static __always_inline __u8 sum_op(__u32 opcode) {
        return opcode <= AIO_OPCODE_MAX && aio_known[opcode & 15] ? (__u8) opcode : CAPTURE_SUM_OPS - 1;
}

#define IORING_FSYNC_DATASYNC 1u
#define REQ_F_CQE_SKIP (1u << 6) /* the request's flags begin with the SQE's: IOSQE_CQE_SKIP_SUCCESS */
#define IORING_CQE_F_MORE (1u << 1)
#define IORING_CQE_F_NOTIF (1u << 3)

/* An io_uring op's: its AIO counterpart's (an fsync with IORING_FSYNC_DATASYNC is fdsync), or the last. */
static __always_inline __u8 sum_uring_op(__u8 opcode, __u32 op_flags) {
        __u8 aio = opcode < URING_OP_COUNT ? uring_aio[opcode] : 0;
        if (!aio)
                return CAPTURE_SUM_OPS - 1;
        if (aio - 1 == 2 /* IOCB_CMD_FSYNC */ && (op_flags & IORING_FSYNC_DATASYNC))
                return 3; /* IOCB_CMD_FDSYNC */
        return sum_op(aio - 1);
}

static __always_inline void *sums_now(void) {
        return sum_gen & 1 ? (void *) &proc_sums_1 : (void *) &proc_sums_0;
}

/* The current process's. */
static __always_inline struct sum_live *live_here(void) {
        return bpf_task_storage_get(&sum_live, bpf_get_current_task_btf()->group_leader, 0,
                                    BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/* The process's counts of the interval in progress, made at its first request of the interval: how many it has
 * in flight is the daemon's to know (it adds up the intervals' changes), the programs' only how it changes. */
static __always_inline struct capture_sum *sum_of(const struct capture_sum_key *pk) {
        void *sums = sums_now();
        struct capture_sum *sum = bpf_map_lookup_elem(sums, pk);
        if (sum)
                return sum;
        __u32 zero = 0;
        struct capture_sum *fresh = bpf_map_lookup_elem(&sum_zero, &zero);
        if (!fresh)
                return 0;
        bpf_map_update_elem(sums, pk, fresh, BPF_NOEXIST);
        return bpf_map_lookup_elem(sums, pk);
}

static __always_inline void add(__u64 *counter, __u64 n) {
        __sync_fetch_and_add(counter, n);
}

/* *at raised to v, or lowered (the least above 0: 0 is none yet), whatever other CPUs store meanwhile: a
 * compare-and-swap until it holds or the value there is past v.  Bounded for the verifier: each failed swap
 * means another CPU's store, and 16 of them within one is not seen in practice.  Global functions: the
 * verifier walks the loop once a program, not at every place that counts an end (three times the start's
 * work when they were inline). */
__noinline int raise_to(__u64 *at, __u64 v) {
        if (!at)
                return 0;
        __u64 old = *at;
        for (int i = 0; i < 16 && v > old; i++) {
                __u64 seen = __sync_val_compare_and_swap(at, old, v);
                if (seen == old)
                        break;
                old = seen;
        }
        return 0;
}

__noinline int lower_to(__u64 *at, __u64 v) {
        if (!at)
                return 0;
        __u64 old = *at;
        for (int i = 0; i < 16 && (!old || v < old); i++) {
                __u64 seen = __sync_val_compare_and_swap(at, old, v);
                if (seen == old)
                        break;
                old = seen;
        }
        return 0;
}

static __always_inline void sum_latency(struct capture_sum *sum, __u64 v) {
        __u64 b = hist_bucket_of(v); /* 64 bits: the bound checked is the register indexed, no copy of it */
        opaque(b);
        if (b < HIST_BUCKETS)
                __sync_fetch_and_add(&sum->buckets[b], 1);
        add(&sum->lat_count, 1);
        add(&sum->lat_sum, v);
        raise_to(&sum->lat_max, v);
        lower_to(&sum->lat_min, v);
}

static __always_inline int is_errno(__s64 res) {
        return res < 0 && res >= -4095;
}

/* How a request ended, for its counts (lib/request.h's kinds). */
enum { SUM_COMPLETED, SUM_CANCELLED, SUM_STALE, SUM_UNMATCHED, SUM_RING };

/* A request's end with a result, counted as the record of it would be.  r: its submit (NULL: unmatched). */
static __always_inline void sum_end(struct capture_sum *sum, const struct sum_req *r, int kind, __s64 res,
                                    __u64 end_time) {
        int done = kind == SUM_COMPLETED || kind == SUM_CANCELLED || kind == SUM_RING;
        __u8 op = r && kind != SUM_STALE ? r->op : CAPTURE_SUM_OPS - 1;
        if (done)
                add(&sum->completed[op < CAPTURE_SUM_OPS ? op : CAPTURE_SUM_OPS - 1], 1);
        if (is_errno(res))
                add(&sum->errors, 1);
        else if (res > 0 && done && op <= AIO_OPCODE_MAX) {
                __u8 dir = aio_dir[op & 15];
                if (dir == AIO_DIR_READ)
                        add(&sum->bytes_read, (__u64) res);
                else if (dir == AIO_DIR_WRITE)
                        add(&sum->bytes_written, (__u64) res);
        }
        if (kind == SUM_RING)
                add(&sum->reaped_in_user_space, 1);
        else if (kind == SUM_CANCELLED)
                add(&sum->cancelled, 1);
        else if (kind == SUM_STALE)
                add(&sum->stale, 1);
        else if (kind == SUM_UNMATCHED)
                add(&sum->unmatched, 1);
        else if (r && end_time >= r->submit_time)
                sum_latency(sum, end_time - r->submit_time);
}

/* A request that will never be seen ending: abandoned, or unknown where its process had completions that could
 * not be read (it may have been one of them); seen complete in its ring, reaped in user space. */
static __always_inline void sum_unreaped(struct capture_sum *sum, struct sum_live *live,
                                         const struct sum_key *key, const struct sum_req *r) {
        if (key->kind == SUM_URING && sum_overflows_held) {
                struct sum_data_key dk = { .ring = key->ctx, .user_data = r->data };
                struct sum_overflow *o = bpf_map_lookup_elem(&sum_overflowed, &dk);
                struct sum_overflow held = o ? *o : (struct sum_overflow) {};
                if (o && held.end_time >= r->submit_time && bpf_map_delete_elem(&sum_overflowed, &dk) == 0) {
                        __sync_fetch_and_add(&sum_overflows_held, (__u32) -1);
                        sum_end(sum, r, SUM_COMPLETED, held.res, held.end_time);
                        return;
                }
        }
        if (r->flags & SUM_RING_SEEN) {
                sum_end(sum, r, SUM_RING, r->ring_res, 0);
        } else if (r->flags & SUM_CQE_SKIP) {
                add(&sum->unknown, 1); /* done with no CQE, or not: nothing says */
        } else if (live && live->unidentified) {
                live->unidentified--;
                add(&sum->unknown, 1);
        } else
                add(&sum->abandoned, 1);
}

static __always_inline void inflight_changed(struct capture_sum *sum, struct sum_live *live, int delta) {
        if (live)
                __sync_fetch_and_add(&live->inflight, (__u64) (__s64) delta);
        if (!sum)
                return;
        /* the change as this add left it (a fetching add: 5.12, as the swaps) */
        __s64 now = (__s64) __sync_fetch_and_add(&sum->inflight_change, (__u64) (__s64) delta) + delta;
        if (now > 0)
                raise_to(&sum->inflight_rise_max, (__u64) now);
}

/* ---- AIO ---- */

/* The ABI's struct io_event, as the caller's memory and the AIO ring hold it. */
struct sum_event {
        __u64 data;
        __u64 obj;
        __s64 res;
        __s64 res2;
};

/* What a call's loop over its items needs: the counts it goes into are looked up once a call. */
struct sum_call {
        __u64 base;  /* iocbpp[], or the events */
        __u64 ctx;
        __u64 time;  /* the submit's enter, or the reap's exit */
        __u32 n;
        __u32 tgid;
        __u32 seen_pid;
        struct capture_sum *sum;
        struct sum_live *live;
};

/* A submit and the reap of its completion may run at once on two CPUs (a reaper thread reaps before the
 * io_submit that began the request has returned), each missing what the other has not written yet: the submit
 * writes its request in flight, then looks for its completion held early; the reap, finding no request in
 * flight, holds its completion early, then looks for the request again.  Whichever deletes the request from the
 * map in flight counts its end, with the completion it holds; a completion held early is used by whichever
 * deletes it from that map. */

/* The end of the request in flight under key, counted by whoever deletes it. */
static __always_inline int claim_end(struct capture_sum *sum, struct sum_live *live, struct sum_key *key,
                                     __u64 data, __s64 res, __u64 end_time) {
        struct sum_req *r = bpf_map_lookup_elem(&sum_inflight, key);
        if (!r)
                return 0;
        struct sum_req done = *r;
        if (bpf_map_delete_elem(&sum_inflight, key) != 0)
                return 0;
        inflight_changed(sum, live, -1);
        int kind = done.data != data ? SUM_STALE : done.flags & SUM_CANCEL_REQUESTED ? SUM_CANCELLED : SUM_COMPLETED;
        sum_end(sum, &done, kind, res, end_time);
        return 1;
}

/* One iocb of an io_submit: in flight from the call's enter, unless its completion was reaped already. */
static long sum_submit_step(__u32 i, void *ctx) {
        struct sum_call *c = ctx;
        struct capture_sum *sum = c->sum;
        struct sum_live *live = c->live;
        if (i >= c->n || !sum || !live)
                return 1;
        __u64 iocb = 0;
        struct {
                __u64 data;
                __u64 key_and_opcode; /* aio_key, aio_rw_flags: then aio_lio_opcode at 16 */
                __u16 opcode;
        } cb = {};
        if (bpf_probe_read_user(&iocb, 8, (const void *) (c->base + (__u64) i * 8)) != 0 ||
            bpf_probe_read_user(&cb, sizeof(cb), (const void *) iocb) != 0) {
                add(&sum->submitted[CAPTURE_SUM_OPS - 1], 1);
                add(&sum->untracked, 1);
                return 0;
        }
        struct sum_req r = { .submit_time = c->time, .data = cb.data, .tgid = c->tgid, .seen_pid = c->seen_pid,
                             .op = sum_op(cb.opcode), .opcode = cb.opcode };
        add(&sum->submitted[r.op < CAPTURE_SUM_OPS ? r.op : CAPTURE_SUM_OPS - 1], 1);
        struct sum_key key = { .tgid = c->tgid, .kind = SUM_AIO, .ctx = c->ctx, .id = iocb };
        /* inserted first: an iocb reaped is gone from the map, so a program reusing its iocbs needs no lookup */
        if (bpf_map_update_elem(&sum_inflight, &key, &r, BPF_NOEXIST) == 0) {
                inflight_changed(sum, live, 1);
        } else {
                struct sum_req *old = bpf_map_lookup_elem(&sum_inflight, &key);
                if (!old) {
                        add(&sum->untracked, 1); /* the map is full */
                        return 0;
                }
                /* the same iocb again: the kernel finished with it, unseen (or reaped from its ring) */
                sum_unreaped(sum, live, &key, old);
                *old = r;
        }
        if (!live->early)
                return 0;
        struct sum_early *e = bpf_map_lookup_elem(&sum_early, &key);
        if (!e || e->end_time < c->time)
                return 0; /* none, or of an earlier use of the iocb */
        struct sum_early held = *e;
        if (bpf_map_delete_elem(&sum_early, &key) != 0)
                return 0; /* its reap took it back */
        __sync_fetch_and_add(&live->early, (__u32) -1);
        claim_end(sum, live, &key, held.data, held.res, held.end_time);
        return 0;
}

/* One io_event an io_getevents returned. */
static long sum_reap_step(__u32 i, void *ctx) {
        struct sum_call *c = ctx;
        struct capture_sum *sum = c->sum;
        struct sum_live *live = c->live;
        if (i >= c->n || !sum || !live)
                return 1;
        struct sum_event ev;
        if (bpf_probe_read_user(&ev, sizeof(ev), (const void *) (c->base + (__u64) i * IO_EVENT_SIZE)) != 0) {
                live->unidentified++;
                return 0;
        }
        struct sum_key key = { .tgid = c->tgid, .kind = SUM_AIO, .ctx = c->ctx, .id = ev.obj };
        if (claim_end(sum, live, &key, ev.data, ev.res, c->time))
                return 0;
        /* its submit may not have returned yet: held for it */
        struct sum_early e = { .end_time = c->time, .data = ev.data, .res = ev.res };
        if (bpf_map_update_elem(&sum_early, &key, &e, BPF_NOEXIST) != 0) {
                sum_end(sum, 0, SUM_UNMATCHED, ev.res, c->time);
                return 0;
        }
        __sync_fetch_and_add(&live->early, 1);
        /* the submit may have written it meanwhile, and missed this: then taken back, if the submit did not */
        if (bpf_map_lookup_elem(&sum_inflight, &key) && bpf_map_delete_elem(&sum_early, &key) == 0) {
                __sync_fetch_and_add(&live->early, (__u32) -1);
                claim_end(sum, live, &key, ev.data, ev.res, c->time);
        }
        return 0;
}

/* The completions reaped from ctx's ring by the program itself since the last look (as capture_ring() finds
 * them): ended at once, reaped in user space, where no io_getevents reaps from that ring; else marked, to end
 * as reaped by a call, or reaped in user space once it is clear no call will. */
struct sum_ring_walk {
        struct sum_call c;
        __u32 nr;
        __u32 start;
        __u32 by_call;
};

static long sum_ring_step(__u32 i, void *ctx) {
        struct sum_ring_walk *w = ctx;
        if (i >= w->c.n)
                return 1;
        __u32 slot = w->start + i;
        if (slot >= w->nr)
                slot -= w->nr;
        struct sum_event ev;
        if (bpf_probe_read_user(&ev, sizeof(ev), (const void *) (w->c.ctx + AIO_RING_HEADER +
                                                                  (__u64) slot * IO_EVENT_SIZE)) != 0) {
                w->c.n = i; /* a page not faulted in yet: the rest at a later look */
                return 1;
        }
        struct sum_key key = { .tgid = w->c.tgid, .kind = SUM_AIO, .ctx = w->c.ctx, .id = ev.obj };
        struct sum_req *r = bpf_map_lookup_elem(&sum_inflight, &key);
        if (!r || r->data != ev.data || (r->flags & SUM_RING_SEEN))
                return 0;
        if (w->by_call) {
                r->flags |= SUM_RING_SEEN;
                r->ring_res = (__s32) ev.res;
                return 0;
        }
        struct capture_sum *sum = w->c.sum;
        if (!sum)
                return 1;
        struct sum_req done = *r;
        bpf_map_delete_elem(&sum_inflight, &key);
        inflight_changed(sum, w->c.live, -1);
        sum_end(sum, &done, SUM_RING, ev.res, 0);
        return 0;
}

static __always_inline void sum_ring(__u64 ctx, __u32 own, __u32 tgid, struct capture_sum *sum,
                                     struct sum_live *live) {
        struct ring_window rw;
        struct ring_state *v = ring_window(ctx, own, &rw);
        if (!v)
                return;
        struct sum_ring_walk w = { .c = { .ctx = ctx, .n = rw.count < CAPTURE_RING_MAX ? rw.count : CAPTURE_RING_MAX,
                                          .tgid = tgid, .sum = sum, .live = live },
                                   .nr = rw.nr, .start = rw.start, .by_call = v->by_call };
        bpf_loop(CAPTURE_RING_MAX, sum_ring_step, &w, 0);
        v = bpf_map_lookup_elem(&ring_tails, &rw.key);
        if (!v)
                return;
        __u32 next = rw.start + w.c.n;
        if (next >= rw.nr)
                next -= rw.nr;
        v->next = w.c.n == rw.count ? rw.head : next;
}

/* The requests of one process (or of one of its AIO contexts) in flight, ended with it: what a process's end,
 * an exec or an io_destroy leaves.  A walk visits every bucket of the map: it is made only for a process with
 * requests in flight. */
struct sum_forget_walk {
        __u32 tgid;
        __u64 ctx; /* 0: every one of the process */
        struct capture_sum *sum;
        struct sum_live *live;
};

static long sum_forget_one(void *map, struct sum_key *key, struct sum_req *r, struct sum_forget_walk *w) {
        if (r->tgid != w->tgid || (w->ctx && (key->kind != SUM_AIO || key->ctx != w->ctx)))
                return 0;
        if (w->sum)
                sum_unreaped(w->sum, w->live, key, r);
        /* the element visited may go: the walk goes on past it */
        if (bpf_map_delete_elem(map, key) == 0)
                inflight_changed(w->sum, w->live, -1);
        return 0;
}

/* A global function: the verifier checks it once, whatever calls it. */
__noinline int sum_forget(__u32 tgid, const struct capture_sum_key *pk, __u64 ctx) {
        if (!pk)
                return 0;
        struct sum_live *live = live_here();
        if (!live || !live->inflight)
                return 0;
        struct sum_forget_walk w = { .tgid = tgid, .ctx = ctx, .sum = sum_of(pk), .live = live };
        bpf_for_each_map_elem(&sum_inflight, sum_forget_one, &w, 0);
        return 0;
}

/* A call of a summed thread, counted: its requests submitted, reaped, cancelled or left by io_destroy.  ts: the
 * thread's, with the call's arguments.  Global functions, one for each kind of call: the verifier checks each
 * once, not in each call's program, and the call's record's room is not on their stack. */

/* The call's process and where its counts go: 0 where there is nowhere to count. */
static __always_inline int sum_here(struct sum_call *ret) {
        struct capture_sum_key pk = sum_key_now();
        struct sum_live *live = live_here();
        struct capture_sum *sum = sum_of(&pk);
        if (!live || !sum)
                return 0;
        ret->tgid = (__u32) (bpf_get_current_pid_tgid() >> 32);
        ret->seen_pid = pk.pid;
        ret->sum = sum;
        ret->live = live;
        return 1;
}

/* io_submit: enter_time 0, begun before tracing (then its requests are from its exit). */
__noinline int sum_submit(struct thread_state *ts, long ret, __u64 enter_time) {
        struct sum_call c = {};
        if (!ts || !sum_here(&c))
                return 0;
        sum_ring(ts->args[0], 0, c.tgid, c.sum, c.live);
        if (ret <= 0)
                return 0;
        c.ctx = ts->args[0];
        c.base = ts->args[2];
        c.n = (__u32) ret;
        c.time = enter_time ? enter_time : bpf_ktime_get_ns();
        bpf_loop(65536, sum_submit_step, &c, 0);
        return 0;
}

/* io_getevents, io_pgetevents. */
__noinline int sum_reap(struct thread_state *ts, long ret) {
        struct sum_call c = {};
        if (!ts || !sum_here(&c))
                return 0;
        if (ret > 0) {
                c.ctx = ts->args[0];
                c.base = ts->args[3];
                c.n = (__u32) ret;
                c.time = bpf_ktime_get_ns();
                bpf_loop(65536, sum_reap_step, &c, 0);
        }
        sum_ring(ts->args[0], ret > 0 ? (__u32) ret : 0, c.tgid, c.sum, c.live);
        return 0;
}

/* io_cancel: cancelling begun (the event comes through io_getevents), or on an old kernel its result. */
__noinline int sum_cancel(struct thread_state *ts, long ret) {
        if (!ts)
                return 0;
        struct sum_key key = { .tgid = (__u32) (bpf_get_current_pid_tgid() >> 32), .kind = SUM_AIO,
                               .ctx = ts->args[0], .id = ts->args[1] };
        struct sum_req *r = bpf_map_lookup_elem(&sum_inflight, &key);
        if (!r)
                return 0;
        if (ret == -115 /* -EINPROGRESS */) {
                r->flags |= SUM_CANCEL_REQUESTED;
                return 0;
        }
        struct sum_event ev;
        if (ret != 0 || bpf_probe_read_user(&ev, sizeof(ev), (const void *) ts->args[2]) != 0)
                return 0;
        struct capture_sum_key pk = sum_key_now();
        struct sum_live *live = live_here();
        struct capture_sum *sum = sum_of(&pk);
        if (!sum)
                return 0;
        struct sum_req done = *r;
        bpf_map_delete_elem(&sum_inflight, &key);
        inflight_changed(sum, live, -1);
        sum_end(sum, &done, SUM_CANCELLED, ev.res, bpf_ktime_get_ns());
        return 0;
}

/* Any call of a summed thread. */
static __always_inline void sum_call(struct thread_state *ts, int sc, long ret, __u64 enter_time) {
        if (sc == AIO_IO_SUBMIT)
                sum_submit(ts, ret, enter_time);
        else if (sc == AIO_IO_GETEVENTS || sc == AIO_IO_PGETEVENTS)
                sum_reap(ts, ret);
        else if (sc == AIO_IO_CANCEL)
                sum_cancel(ts, ret);
        else if (sc == AIO_IO_DESTROY && ret == 0 && ts) {
                struct capture_sum_key pk = sum_key_now();
                sum_forget((__u32) (bpf_get_current_pid_tgid() >> 32), &pk, ts->args[0]);
        }
}

/* The completions held for the requests of a process that ended: those no request claimed were of none seen. */
struct sum_overflow_walk {
        __u32 tgid;
        struct capture_sum *sum;
};

static long sum_overflow_unclaimed(void *map, struct sum_data_key *key, struct sum_overflow *o,
                                   struct sum_overflow_walk *w) {
        if (o->tgid != w->tgid)
                return 0;
        if (bpf_map_delete_elem(map, key) == 0) {
                __sync_fetch_and_add(&sum_overflows_held, (__u32) -1);
                if (w->sum)
                        sum_end(w->sum, 0, SUM_UNMATCHED, o->res, o->end_time);
        }
        return 0;
}

/* A summed process's end or exec: what it had in flight is abandoned (an exec takes its AIO contexts along). */
static __always_inline void sum_process_end(int gone) {
        struct capture_sum_key pk = sum_key_now();
        sum_forget((__u32) (bpf_get_current_pid_tgid() >> 32), &pk, 0);
        if (gone && sum_overflows_held) {
                struct sum_overflow_walk w = { .tgid = (__u32) (bpf_get_current_pid_tgid() >> 32), .sum = sum_of(&pk) };
                bpf_for_each_map_elem(&sum_overflowed, sum_overflow_unclaimed, &w, 0);
        }
}

/* The last completions of one of a summed process's AIO rings (io_destroy's enter, exit_group's).  A global
 * function: the verifier checks it once, not at each of exit_group's rings. */
__noinline int sum_ring_last(__u64 ctx) {
        struct capture_sum_key pk = sum_key_now();
        struct sum_live *live = live_here();
        struct capture_sum *sum = sum_of(&pk);
        if (live && sum)
                sum_ring(ctx, 0, (__u32) (bpf_get_current_pid_tgid() >> 32), sum, live);
        struct ring_key key = { .tgid = (__u32) (bpf_get_current_pid_tgid() >> 32), .ctx = ctx };
        bpf_map_delete_elem(&ring_tails, &key); /* unmapped by the call, or gone with the process */
        return 0;
}

/* ---- io_uring ---- */

/* An io_uring event of a summed process: a request submitted to one of its rings, or a completion (of req; or,
 * req 0, of the request its user_data names: a multishot request's completions but its last, a zero-copy send's
 * notification, one that found the CQ ring full). */
struct sum_uring_args {
        __u64 ring;
        __u64 req;
        __u64 user_data;
        __u64 req_flags; /* submit: the request's */
        __u64 time;
        struct capture_sum_key pk;
        __u32 tgid;      /* the submitter's, or at a completion the ring owner's: the kernel's pid */
        __u32 op_flags;  /* submit: the op's own (an fsync's IORING_FSYNC_DATASYNC) */
        __s32 res;       /* complete */
        __u32 cflags;
        __u8 opcode;     /* submit */
        __u8 overflow;   /* complete: it found the CQ ring full */
        __u8 reserved[6];
};

/* A global function: the verifier checks it once. */
__noinline int sum_uring_submit(const struct sum_uring_args *a) {
        if (!a)
                return 0;
        struct capture_sum_key pk = a->pk;
        struct sum_live *live = live_here();
        struct capture_sum *sum = sum_of(&pk);
        if (!live || !sum)
                return 0;
        __u64 ring = a->ring, req = a->req;
        struct sum_req r = { .submit_time = a->time, .data = a->user_data, .tgid = a->tgid, .seen_pid = a->pk.pid,
                             .op = sum_uring_op(a->opcode, a->op_flags), .opcode = a->opcode,
                             .flags = (a->req_flags & REQ_F_CQE_SKIP ? SUM_CQE_SKIP : 0) |
                                      (uring_posts_alone(a->opcode) ? SUM_BY_DATA : 0) };
        add(&sum->submitted[r.op < CAPTURE_SUM_OPS ? r.op : CAPTURE_SUM_OPS - 1], 1);
        add(&sum->submitted_io_uring, 1);
        struct sum_key key = { .kind = SUM_URING, .ctx = ring, .id = req };
        if (bpf_map_update_elem(&sum_inflight, &key, &r, BPF_NOEXIST) == 0) {
                inflight_changed(sum, live, 1);
        } else {
                struct sum_req *old = bpf_map_lookup_elem(&sum_inflight, &key);
                if (!old) {
                        add(&sum->untracked, 1); /* the map is full */
                        return 0;
                }
                /* the kernel reuses a request once it completed: the completion in between was not seen, or
                 * there was none (IOSQE_CQE_SKIP_SUCCESS: it succeeded) */
                if (old->flags & SUM_CQE_SKIP)
                        add(&sum->completed[old->op < CAPTURE_SUM_OPS ? old->op : CAPTURE_SUM_OPS - 1], 1);
                else
                        sum_unreaped(sum, live, &key, old);
                if (old->flags & SUM_BY_DATA) {
                        struct sum_data_key dk = { .ring = ring, .user_data = old->data };
                        bpf_map_delete_elem(&sum_by_data, &dk);
                }
                *old = r;
        }
        if (r.flags & SUM_BY_DATA) {
                struct sum_data_key dk = { .ring = ring, .user_data = a->user_data };
                bpf_map_update_elem(&sum_by_data, &dk, &req, BPF_ANY);
        }
        return 0;
}

/* A global function: the verifier checks it once. */
/* An io_uring request of a summed process handed to an io-wq worker, or armed for poll: counted. */
__noinline int sum_uring_async(const struct capture_sum_key *pk, __u8 opcode, int polled) {
        if (!pk)
                return 0;
        struct capture_sum_key key = *pk;
        struct capture_sum *sum = sum_of(&key);
        if (!sum)
                return 0;
        if (polled)
                add(&sum->polled, 1);
        else {
                __u8 op = sum_uring_op(opcode, 0);
                add(&sum->punted[op < CAPTURE_SUM_OPS ? op : CAPTURE_SUM_OPS - 1], 1);
        }
        return 0;
}

__noinline int sum_uring_complete(const struct sum_uring_args *a) {
        if (!a)
                return 0;
        struct capture_sum_key pk = a->pk;
        /* posted by a task of the ring owner's (the usual), or of another's (a kernel worker at the ring's end),
         * whose process's storage is not the owner's */
        struct sum_live *live = (__u32) (bpf_get_current_pid_tgid() >> 32) == a->tgid ? live_here() : 0;
        struct capture_sum *sum = sum_of(&pk);
        if (!sum)
                return 0;
        __u64 ring = a->ring, req = a->req;
        if (a->overflow)
                add(&sum->cq_overflows, 1);
        struct sum_data_key dk = { .ring = ring, .user_data = a->user_data };
        if (!req || (a->cflags & IORING_CQE_F_NOTIF)) {
                __u64 *by_data = bpf_map_lookup_elem(&sum_by_data, &dk);
                req = by_data ? *by_data : 0;
        }
        struct sum_key key = { .kind = SUM_URING, .ctx = ring, .id = req };
        struct sum_req *r = req ? bpf_map_lookup_elem(&sum_inflight, &key) : 0;
        if (!r && a->overflow) {
                /* ended when its request is seen again */
                struct sum_overflow o = { .end_time = a->time, .res = a->res, .tgid = a->tgid };
                if (bpf_map_update_elem(&sum_overflowed, &dk, &o, BPF_NOEXIST) == 0) {
                        __sync_fetch_and_add(&sum_overflows_held, 1);
                        return 0;
                }
        }
        if (!r) {
                sum_end(sum, 0, SUM_UNMATCHED, a->res, a->time);
                return 0;
        }
        if (a->cflags & IORING_CQE_F_MORE) {
                sum_end(sum, r, SUM_COMPLETED, a->res, a->time); /* a multishot request's: it goes on */
                return 0;
        }
        struct sum_req done = *r;
        bpf_map_delete_elem(&sum_inflight, &key);
        if (done.flags & SUM_BY_DATA) {
                dk.user_data = done.data;
                bpf_map_delete_elem(&sum_by_data, &dk);
        }
        inflight_changed(sum, live, -1);
        sum_end(sum, &done, SUM_COMPLETED, a->res, a->time);
        return 0;
}
