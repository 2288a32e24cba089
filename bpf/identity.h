/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A process's identity, taken in the kernel before its first record: its pids, start time and cgroup's path.
 * Part of bpf/capture.bpf.c, which includes it. */

/* One level of a cgroup's path, walked up from the thread's cgroup to the daemon's cgroup root: its name before
 * what was built so far (a kernfs node's name, up to NAME_MAX, read into the slack past the path first, for its
 * length). */
static long cgroup_path_step(__u32 i __attribute__((unused)), void *ctx) {
        struct scratch *s = scratch_of(ctx);
        if (!s)
                return 1;
        struct path_walk *w = &s->pw;
        struct kernfs_node *kn = (struct kernfs_node *) s->k.kn;
        if (!kn) {
                w->state = PATH_OUTSIDE; /* above the daemon's cgroup root: not a path it would see */
                return 1;
        }
        struct kernfs_node *parent = kn_parent(kn);
        if (cgroup_root_id ? BPF_CORE_READ(kn, id) == cgroup_root_id : !parent) {
                w->state = PATH_AT_ROOT;
                return 1;
        }
        const char *name = BPF_CORE_READ(kn, name);
        long n = bpf_probe_read_kernel_str(w->buf + CAPTURE_PATH_MAX, 256, name);
        __u32 len = n > 1 ? (__u32) n - 1 : 0, pos = w->pos;
        if (len == 0 || len > 255 || pos < len + 2) {
                w->state = PATH_TOO_LONG_;
                return 1;
        }
        pos -= len;
        bpf_probe_read_kernel(w->buf + (pos & (CAPTURE_PATH_MAX - 1)), len & 255, name);
        pos -= 1;
        w->buf[pos & (CAPTURE_PATH_MAX - 1)] = '/';
        w->pos = pos;
        s->k.kn = (__u64) parent;
        return 0;
}

/* The current thread's process as the kernel knows it now (its pid in its own namespace, when it started, its
 * cgroup and that cgroup's path), in a record of its own, before the thread's first record: read later from
 * /proc, a process already gone has none of it, and a pid reused at once gives another's. */
static __noinline int send_identity(void *ctx, struct loop_ctx *l) {
        struct scratch *s = scratch_of(l);
        if (!s)
                return 0;
        struct task_struct *task = bpf_get_current_task_btf();
        struct task_struct *leader = task->group_leader;
        struct pid *pid = BPF_CORE_READ(leader, thread_pid);
        __u32 level = pid ? BPF_CORE_READ(pid, level) : 0;
        struct upid *up = (struct upid *) ((char *) pid + bpf_core_field_offset(struct pid, numbers) +
                                           (level & 31) * bpf_core_type_size(struct upid));
        __u32 ns_pid = pid ? (__u32) BPF_CORE_READ(up, nr) : 0;
        struct kernfs_node *kn = BPF_CORE_READ(task, cgroups, dfl_cgrp, kn);
        s->k.kn = (__u64) kn;
        s->pw.pos = CAPTURE_PATH_MAX;
        s->pw.state = PATH_WALKING;
        bpf_loop(CAPTURE_CGROUP_DEPTH + 1, cgroup_path_step, l, 0);
        s = scratch_of(l);
        if (!s)
                return 0;
        __u32 pos = s->pw.pos & (CAPTURE_PATH_MAX - 1), len = 0;
        if (s->pw.state == PATH_AT_ROOT) {
                len = CAPTURE_PATH_MAX - s->pw.pos;
                if (len == 0) { /* the root itself */
                        s->pw.buf[CAPTURE_PATH_MAX - 1] = '/';
                        pos = CAPTURE_PATH_MAX - 1;
                        len = 1;
                }
        }
        __u8 *out = s->pw.out;
        put_common(out, exit_tp_id[AIO_IO_SUBMIT]);
        *(__s32 *) (out + CAPTURE_EXIT_NR_OFFSET) = -1;
        *(__u32 *) (out + CAPTURE_EXIT_NR_OFFSET + 4) = 0;
        *(__s64 *) (out + CAPTURE_EXIT_RET_OFFSET) = 0;
        struct capture_identity *h = (void *) (out + CAPTURE_EXIT_RAW_SIZE);
        h->magic = CAPTURE_IDENTITY_MAGIC;
        h->pid = (__u32) (seen_pid_tgid() >> 32);
        h->ns_pid = ns_pid;
        h->cgroup_len = len;
        h->start_time = bpf_core_field_exists(leader->start_boottime) ? BPF_CORE_READ(leader, start_boottime) : 0;
        h->cgroup_id = kn ? BPF_CORE_READ(kn, id) : 0;
        bpf_get_current_comm(h->comm, sizeof(h->comm));
        len &= CAPTURE_PATH_MAX - 1;
        bpf_probe_read_kernel(out + CAPTURE_EXIT_RAW_SIZE + sizeof(*h), len, s->pw.buf + pos);
        output(ctx, out, CAPTURE_EXIT_RAW_SIZE + sizeof(*h) + len);
        return 0;
}

/* Before a thread's first record: its process's identity, once. */
static __always_inline void identity_once(void *ctx, struct loop_ctx *l, struct thread_state *ts) {
        if (ts && !ts->identity_told) {
                ts->identity_told = 1;
                send_identity(ctx, l);
        }
}
