/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A watched process's life: fork (children followed), exec, exit, and new cgroups.
 * Part of bpf/capture.bpf.c, which includes it. */

/* The end of a watched process: sched_process_exit of its last thread (group_dead), and sched_process_exec (its
 * AIO contexts go with its old memory).  Written as the kernel would have written them, for the same reason as
 * the syscalls': a tracepoint filter would apply only after the program. */
struct proc_exit_ctx {
        __u64 common;
        char comm[16];
        int pid;
        int prio;
        __u8 group_dead;
};

struct proc_exec_ctx {
        __u64 common;
        __u32 filename_loc;
        int pid;
        int old_pid;
};

/* A process followed as a child is forgotten at its end. */
static __always_inline void forget_followed(__u32 tgid) {
        __u32 zero = 0;
        struct capture_watch *w = bpf_map_lookup_elem(&watch, &zero);
        if (!w || !w->follow)
                return;
        for (__u32 set = 0; set < 2; set++) {
                struct capture_id_key key = { .set = set, .id = tgid };
                struct capture_id *v = bpf_map_lookup_elem(&watch_ids, &key);
                if (v && v->followed)
                        bpf_map_delete_elem(&watch_ids, &key);
        }
}

/* The rings of one process, found in ring_tails. */
#define RINGS_AT_EXIT 8
struct ring_walk {
        __u32 tgid;
        __u32 n;
        __u64 ctx[RINGS_AT_EXIT];
};

static long collect_ring(void *map, struct ring_key *key, struct ring_state *state, struct ring_walk *w) {
        (void) map, (void) state;
        if (key->tgid == w->tgid && w->n < RINGS_AT_EXIT)
                w->ctx[w->n++ & (RINGS_AT_EXIT - 1)] = key->ctx;
        return 0;
}

static __always_inline void uring_forget(__u32 tgid);

SEC("tracepoint/sched/sched_process_exit")
int proc_exit(struct proc_exit_ctx *ctx) {
        if (!ctx->group_dead || !in_force())
                return NEUTRAL;
        struct loop_ctx l = { .cpu = bpf_get_smp_processor_id() };
        int verdict = watched(&l, thread_state_if_any());
        forget_followed((__u32) (seen_pid_tgid() >> 32));
        uring_forget((__u32) (bpf_get_current_pid_tgid() >> 32));
        /* whatever this last thread's verdict: one lookup, for a process summed in the kernel */
        sum_process_end(1);
        if (!verdict)
                return NEUTRAL;
        struct scratch *s = record_begin_watched(&l);
        if (!s)
                return NEUTRAL;
        put_common(s->buf, tp_id_of[EVENT_PROC_EXIT]);
        __builtin_memcpy(s->buf + 8, ctx->comm, 16);
        *(__s32 *) (s->buf + 24) = ctx->pid;
        *(__s32 *) (s->buf + 28) = ctx->prio;
        *(__u64 *) (s->buf + 32) = 1; /* group_dead, then padding */
        output(ctx, s->buf, 40);
        return NEUTRAL;
}

SEC("tracepoint/sched/sched_process_exec")
int proc_exec(struct proc_exec_ctx *ctx) {
        if (!in_force())
                return NEUTRAL;
        struct loop_ctx l = { .cpu = bpf_get_smp_processor_id() };
        struct thread_state *ts = thread_state_if_any();
        int was = was_watched(ts);
        if (ts)
                ts->verdict_valid = 0; /* a new name and executable */
        sum_process_end(0); /* its AIO contexts go with its old memory */
        if (!was)
                return NEUTRAL;
        count(CAPTURE_CNT_RECORDS);
        struct scratch *s = scratch_of(&l);
        if (!s) {
                count(CAPTURE_CNT_NO_SCRATCH);
                return NEUTRAL;
        }
        put_common(s->buf, tp_id_of[EVENT_PROC_EXEC]);
        *(__u32 *) (s->buf + 8) = 24; /* the filename: empty, at the end */
        *(__s32 *) (s->buf + 12) = ctx->pid;
        *(__s32 *) (s->buf + 16) = ctx->old_pid;
        *(__u32 *) (s->buf + 20) = 0;
        output(ctx, s->buf, 24);
        return NEUTRAL;
}

/* How many cgroups were made since the start: the daemon looks in the cgroup tree for new ones its cgroup
 * patterns match only when this moved (a look a second at most), never on an idle host. */
__u64 cgroups_made = 0;

SEC("tp_btf/cgroup_mkdir")
int cgroup_made(__u64 *ctx __attribute__((unused))) {
        if (!in_force())
                return 0;
        __sync_fetch_and_add(&cgroups_made, 1);
        return 0;
}

/* A new process of one whose children are followed is watched from its first instruction: added here, in the
 * parent, before the child runs.  A new thread needs nothing: its process is watched already. */
SEC("tp_btf/sched_process_fork")
int proc_fork(__u64 *ctx) {
        if (!in_force())
                return 0;
        struct task_struct *parent = (void *) ctx[0], *child = (void *) ctx[1];
        __u32 zero = 0;
        struct capture_watch *w = bpf_map_lookup_elem(&watch, &zero);
        if (!w || !w->follow)
                return 0;
        int child_pid = BPF_CORE_READ(child, pid), child_tgid = BPF_CORE_READ(child, tgid);
        if (child_pid != child_tgid)
                return 0;
        /* the watch list's pids are the daemon's */
        __u32 parent_seen = task_seen_pid(parent, 1), child_seen = task_seen_pid(child, 1);
        if (!parent_seen || !child_seen)
                return 0;
        struct capture_id_key key = { .set = w->set & 1, .id = parent_seen };
        struct capture_id *p = bpf_map_lookup_elem(&watch_ids, &key);
        if (!p || !(p->follow & w->follow))
                return 0;
        struct capture_id child_id = {
                .mask = p->follow, .follow = p->follow, .followed = 1, .root = p->followed ? p->root : key.id
        };
        key.id = child_seen;
        if (bpf_map_update_elem(&watch_ids, &key, &child_id, BPF_NOEXIST) != 0 &&
            !bpf_map_lookup_elem(&watch_ids, &key))
                count(CAPTURE_CNT_FOLLOW_FULL);
        return 0;
}

/* A program that ends without io_destroy (QEMU's tools, most at exit): its rings' last completions, taken at
 * exit_group while its memory is still there (at sched_process_exit it is gone).  A process killed by a signal
 * makes no exit_group: what it had in flight is abandoned at its end. */
SEC("tracepoint/syscalls/sys_enter_exit_group")
int proc_exit_group(struct enter_ctx *ctx) {
        if (!in_force())
                return NEUTRAL;
        struct loop_ctx l = { .cpu = bpf_get_smp_processor_id() };
        struct ring_walk w = { .tgid = (__u32) (bpf_get_current_pid_tgid() >> 32) };
        if (!bpf_map_lookup_elem(&ring_owners, &w.tgid))
                return NEUTRAL;
        bpf_map_delete_elem(&ring_owners, &w.tgid);
        bpf_for_each_map_elem(&ring_tails, collect_ring, &w, 0);
        struct thread_state *ts = thread_state_if_any();
        int summed = ts && ts->watched == WATCHED_SUMMED;
        for (__u32 i = 0; i < RINGS_AT_EXIT && i < w.n; i++) {
                if (summed)
                        sum_ring_last(w.ctx[i]);
                else
                        ring_record(ctx, &l, w.ctx[i], ctx->nr);
        }
        return NEUTRAL;
}
