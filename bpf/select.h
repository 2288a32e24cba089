/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Selection: whether the current thread is watched, by the watch list's keys (name, exe, unit, cgroup, uid, pid).
 * Part of bpf/capture.bpf.c, which includes it. */

static __always_inline int same_comm(const char *a, const char *b) {
        for (int i = 0; i < GLOB_COMM_SIZE; i++)
                if (a[i] != b[i])
                        return 0;
        return 1;
}

static long glob_loop_step(__u32 index __attribute__((unused)), void *ctx) {
        struct scratch *s = scratch_of(ctx);
        return s ? glob_step(&s->g) : 1;
}

/* loop_ctx carries the set for the globs' callback */
static long match_one(__u32 index, void *ctx) {
        struct loop_ctx *l = ctx;
        struct scratch *s = scratch_of(l);
        __u32 key = l->set * CAPTURE_MAX_GLOBS + index;
        struct capture_glob *pat = bpf_map_lookup_elem(&watch_globs, &key);
        if (!s || !pat)
                return 1;
        __builtin_memcpy(s->g.pat, pat->pat, sizeof(s->g.pat));
        s->g.pat[CAPTURE_GLOB_SIZE - 1] = 0;
        glob_start(&s->g);
        bpf_loop(GLOB_MAX_STEPS, glob_loop_step, ctx, 0);
        s = scratch_of(l);
        if (s && s->g.result == 1)
                s->b.matched |= pat->mask;
        return 0;
}

static __always_inline __u64 lookup_mask(void *map, const void *key) {
        __u64 *m = bpf_map_lookup_elem(map, key);
        return m ? *m : 0;
}

static __always_inline __u64 id_mask(__u32 set, __u32 id) {
        struct capture_id_key key = { .set = set, .id = id };
        struct capture_id *v = bpf_map_lookup_elem(&watch_ids, &key);
        return v ? v->mask : 0;
}

/* The entries the command name satisfies: the exact names at one lookup, then each glob. */
static __always_inline __u64 comm_bits(struct loop_ctx *l, const struct capture_watch *w, const char *comm) {
        struct scratch *s = scratch_of(l);
        if (!s)
                return 0;
        struct capture_comm key = { .set = w->set };
        __builtin_memcpy(key.comm, comm, sizeof(key.comm));
        s->b.matched = w->n_names ? lookup_mask(&watch_names, &key) : 0;
        __u32 n_globs = w->n_globs;
        if (n_globs) {
                __builtin_memcpy(s->g.str, comm, GLOB_COMM_SIZE);
                if (n_globs > CAPTURE_MAX_GLOBS)
                        n_globs = CAPTURE_MAX_GLOBS;
                bpf_loop(n_globs, match_one, l, 0);
                s = scratch_of(l);
                if (!s)
                        return 0;
        }
        return s->b.matched;
}

/* The entries the executable satisfies: its file, or the directory entry it was run from. */
static __always_inline __u64 exe_bits(struct loop_ctx *l, __u32 set) {
        struct task_struct *task = bpf_get_current_task_btf();
        struct file *exe = BPF_CORE_READ(task, mm, exe_file);
        struct scratch *s = scratch_of(l);
        if (!exe || !s)
                return 0;
        struct capture_exe_key key = { .set = set };
        key.dev = BPF_CORE_READ(exe, f_inode, i_sb, s_dev);
        key.ino = BPF_CORE_READ(exe, f_inode, i_ino);
        __u64 bits = lookup_mask(&watch_exes, &key);
        struct capture_exe_name_key *nk = &s->k.exe_name;
        __builtin_memset(nk, 0, sizeof(*nk));
        nk->set = set;
        nk->dev = key.dev;
        struct dentry *d = BPF_CORE_READ(exe, f_path.dentry);
        nk->dir_ino = BPF_CORE_READ(d, d_parent, d_inode, i_ino);
        bpf_probe_read_kernel_str(nk->name, sizeof(nk->name), BPF_CORE_READ(d, d_name.name));
        return bits | lookup_mask(&watch_exe_names, nk);
}

static __always_inline struct kernfs_node *kn_parent(struct kernfs_node *kn) {
        if (bpf_core_field_exists(struct kernfs_node___old, parent))
                return BPF_CORE_READ((struct kernfs_node___old *) kn, parent);
        return BPF_CORE_READ(kn, __parent);
}

/* One level of the walk up the cgroup tree: its id and its name against the maps, then its parent.  Under
 * bpf_loop(), so the verifier looks at one level, not CAPTURE_CGROUP_DEPTH of them in every program. */
static long cgroup_level(__u32 index __attribute__((unused)), void *ctx) {
        struct scratch *s = scratch_of(ctx);
        if (!s || !s->k.kn)
                return 1;
        struct kernfs_node *kn = (struct kernfs_node *) s->k.kn;
        if (s->k.want_cgroups) {
                struct capture_cgroup_key key = { .set = s->k.set, .id = BPF_CORE_READ(kn, id) };
                s->k.cgroup_bits |= lookup_mask(&watch_cgroups, &key);
        }
        if (s->k.want_units) {
                struct capture_unit_key *uk = &s->k.unit;
                __builtin_memset(uk, 0, sizeof(*uk));
                uk->set = s->k.set;
                if (bpf_probe_read_kernel_str(uk->name, sizeof(uk->name), BPF_CORE_READ(kn, name)) > 0)
                        s->k.unit_bits |= lookup_mask(&watch_units, uk);
        }
        s->k.kn = (__u64) kn_parent(kn);
        return 0;
}

/* The entries the thread's cgroup v2 satisfies, by a unit's name or by a cgroup's id, at its own level or
 * any above. */
static __always_inline void cgroup_bits(struct loop_ctx *l, const struct capture_watch *w, __u64 *ret_unit,
                                        __u64 *ret_cgroup) {
        struct scratch *s = scratch_of(l);
        *ret_unit = *ret_cgroup = 0;
        if (!s)
                return;
        struct task_struct *task = bpf_get_current_task_btf();
        s->k.kn = (__u64) BPF_CORE_READ(task, cgroups, dfl_cgrp, kn);
        s->k.unit_bits = s->k.cgroup_bits = 0;
        s->k.want_units = w->need[CAPTURE_CLASS_UNIT] != 0;
        s->k.want_cgroups = w->need[CAPTURE_CLASS_CGROUP] != 0;
        s->k.set = w->set & 1;
        bpf_loop(CAPTURE_CGROUP_DEPTH, cgroup_level, l, 0);
        s = scratch_of(l);
        if (!s)
                return;
        *ret_unit = s->k.unit_bits;
        *ret_cgroup = s->k.cgroup_bits;
}

/* A thread's verdict: not watched (0), watched, or watched with its requests summed in the kernel
 * (bpf/summaries.h), no record written. */
#define WATCHED 1
#define WATCHED_SUMMED 2

/* Whether the current thread is watched: every class an entry needs must keep its bit.  The verdict is kept
 * per thread for its name, cgroup and uid under one watch generation (an exec forgets it); without task
 * storage it is made every time. */
static __always_inline int watched_as(struct loop_ctx *l, const struct capture_watch *w, struct thread_state *ts,
                                      const char *comm) {
        if (!w)
                return 0;
        /* A daemon in a container sees its own: what it cannot see is never watched, nor its pids taken for
         * another process's (on the host, no code at all: pidns_ino is a constant the verifier knows). */
        if (pidns_ino && !seen_pid_tgid())
                return 0;
        if (w->all) {
                /* no verdict to keep, but the exit names the call by the name its enter had, and counts it as
                 * the enter's verdict says */
                int verdict = w->all_summed ? WATCHED_SUMMED : WATCHED;
                if (ts) {
                        __builtin_memcpy(ts->comm, comm, GLOB_COMM_SIZE);
                        ts->watched = verdict;
                }
                return verdict;
        }
        __u64 have = w->bits;
        if (!have)
                return 0;
        /* part of the verdict's key only where the list asks: each is a helper call at every call */
        __u64 cgroup_id = w->need[CAPTURE_CLASS_UNIT] | w->need[CAPTURE_CLASS_CGROUP] ? bpf_get_current_cgroup_id() : 0;
        __u32 uid = w->need[CAPTURE_CLASS_UID] ? (__u32) bpf_get_current_uid_gid() : 0;
        if (ts && ts->verdict_valid && ts->generation == w->generation && ts->cgroup_id == cgroup_id &&
            ts->uid == uid && same_comm(ts->comm, comm))
                return ts->watched;
        l->set = w->set & 1;
        __u32 set = l->set;
        if (w->need[CAPTURE_CLASS_ID]) {
                __u64 id = seen_pid_tgid();
                have &= ~w->need[CAPTURE_CLASS_ID] | id_mask(set, (__u32) (id >> 32)) | id_mask(set, (__u32) id);
        }
        if (have && w->need[CAPTURE_CLASS_UID]) {
                struct capture_uid_key key = { .set = set, .uid = uid };
                have &= ~w->need[CAPTURE_CLASS_UID] | lookup_mask(&watch_uids, &key);
        }
        if (have && w->need[CAPTURE_CLASS_COMM])
                have &= ~w->need[CAPTURE_CLASS_COMM] | comm_bits(l, w, comm);
        if (have && w->need[CAPTURE_CLASS_EXE])
                have &= ~w->need[CAPTURE_CLASS_EXE] | exe_bits(l, set);
        if (have && (w->need[CAPTURE_CLASS_UNIT] | w->need[CAPTURE_CLASS_CGROUP])) {
                __u64 unit, cgroup;
                cgroup_bits(l, w, &unit, &cgroup);
                have &= (~w->need[CAPTURE_CLASS_UNIT] | unit) & (~w->need[CAPTURE_CLASS_CGROUP] | cgroup);
        }
        /* summed in the kernel only when every entry that watches it asks for summaries alone */
        int verdict = !have ? 0 : have & ~w->summed ? WATCHED : WATCHED_SUMMED;
        if (ts) {
                __builtin_memcpy(ts->comm, comm, GLOB_COMM_SIZE);
                ts->generation = w->generation;
                ts->cgroup_id = cgroup_id;
                ts->uid = uid;
                ts->watched = verdict;
                ts->verdict_valid = 1;
        }
        return verdict;
}

static __always_inline int watched(struct loop_ctx *l, struct thread_state *ts) {
        /* Every process summed: no name to match, nor to keep for a record (none is written).  The name is a
         * helper call at each call of every process, a sixth of the enter's time. */
        __u32 zero = 0;
        struct capture_watch *w = bpf_map_lookup_elem(&watch, &zero);
        if (w && w->all && w->all_summed && !(pidns_ino && !seen_pid_tgid())) {
                if (ts)
                        ts->watched = WATCHED_SUMMED;
                return WATCHED_SUMMED;
        }
        char comm[GLOB_COMM_SIZE];
        bpf_get_current_comm(comm, sizeof(comm));
        return watched_as(l, w, ts, comm);
}

/* Whether the thread was watched before an exec: by the verdict it keeps from its calls, or by its pid.  A
 * thread that made no call while watched has no requests for the exec to end. */
static __always_inline int was_watched(struct thread_state *ts) {
        __u32 zero = 0;
        struct capture_watch *w = bpf_map_lookup_elem(&watch, &zero);
        if (!w)
                return 0;
        if (ts && ts->verdict_valid && ts->generation == w->generation)
                return ts->watched;
        /* no call of this thread: its process's pid may be watched all the same */
        __u64 id = seen_pid_tgid();
        if (!id)
                return 0;
        return w->all || (w->need[CAPTURE_CLASS_ID] & id_mask(w->set & 1, (__u32) (id >> 32)));
}
