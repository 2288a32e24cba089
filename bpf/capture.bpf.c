/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The in-kernel capture: attached by libbpf to the syscalls:sys_{enter,exit}_io_* tracepoints (daemon/bpf_capture.c).
 *
 * It selects the watched threads itself (a tracepoint filter applies only after a program has run) and writes
 * every record of theirs to the daemon's perf ring of this CPU: at enter the tracepoint's own record (keeping
 * the arguments); at exit, while the caller is still inside the kernel, the exit record followed by the iocb
 * pointers, iocbs, iovecs, io_events, timeout or context the call used. */
#include <linux/bpf.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

/* The few kernel fields the program reads to name an fd's open file, relocated by libbpf against the running
 * kernel's BTF at load (CO-RE): no kernel headers here or at run time. */
struct dentry;
struct vfsmount {
        struct dentry *mnt_root;
} __attribute__((preserve_access_index));
struct mount {
        struct mount *mnt_parent;
        struct dentry *mnt_mountpoint;
        struct vfsmount mnt;
        int mnt_id;
} __attribute__((preserve_access_index));
struct super_block {
        __u32 s_dev;
        unsigned long s_magic;
} __attribute__((preserve_access_index));
struct inode {
        unsigned long i_ino;
        unsigned int i_nlink;
        struct super_block *i_sb;
} __attribute__((preserve_access_index));
struct qstr {
        __u32 len;
        const unsigned char *name;
} __attribute__((preserve_access_index));
struct dentry {
        struct dentry *d_parent;
        struct qstr d_name;
        struct inode *d_inode;
} __attribute__((preserve_access_index));
struct path {
        struct vfsmount *mnt;
        struct dentry *dentry;
} __attribute__((preserve_access_index));
struct file {
        struct path f_path;
        struct inode *f_inode;
} __attribute__((preserve_access_index));
struct fdtable {
        unsigned int max_fds;
        struct file **fd;
} __attribute__((preserve_access_index));
typedef struct {
        int counter;
} atomic_t;
struct files_struct {
        atomic_t count; /* the tasks that share the table */
        struct fdtable *fdt;
} __attribute__((preserve_access_index));
struct mm_struct {
        struct file *exe_file;
} __attribute__((preserve_access_index));
/* A cgroup's directory: its name, its id (the inode number user space sees), its parent (renamed __parent in
 * 6.15). */
struct kernfs_node {
        const char *name;
        __u64 id;
        struct kernfs_node *__parent;
} __attribute__((preserve_access_index));
struct kernfs_node___old {
        struct kernfs_node *parent;
} __attribute__((preserve_access_index));
struct cgroup {
        struct kernfs_node *kn;
} __attribute__((preserve_access_index));
struct css_set {
        struct cgroup *dfl_cgrp; /* the task's cgroup of the v2 hierarchy */
} __attribute__((preserve_access_index));
/* A task's pid in each namespace it is in, from the first (level 0) to its own. */
struct ns_common {
        unsigned int inum;
} __attribute__((preserve_access_index));
struct pid_namespace {
        struct ns_common ns;
} __attribute__((preserve_access_index));
struct upid {
        int nr;
        struct pid_namespace *ns;
} __attribute__((preserve_access_index));
struct pid {
        unsigned int level;
        struct upid numbers[1];
} __attribute__((preserve_access_index));
struct task_struct {
        unsigned int flags;
        int pid;
        int tgid;
        __u64 start_boottime;
        char comm[16];
        struct task_struct *group_leader;
        struct pid *thread_pid;
        struct files_struct *files;
        struct mm_struct *mm;
        struct css_set *cgroups;
} __attribute__((preserve_access_index));
/* An io_uring request, as io_uring_submit_req sees it after its prep: the SQE's fd, and the op's own part
 * (struct io_rw for reads and writes, struct io_sync for fsync and its kin) where the prep put the offset and
 * length. */
struct io_cqe {
        __u64 user_data;
        int fd;
} __attribute__((preserve_access_index));
struct io_ring_ctx {
        unsigned int flags;            /* IORING_SETUP_* */
        struct mm_struct *mm_account; /* the memory of the process that made it, held as long as the ring */
} __attribute__((preserve_access_index));
struct io_kiocb {
        struct file *file;
        __u8 opcode;
        __u64 flags; /* 32 bits on older kernels: libbpf sizes the load to the running kernel's */
        struct io_ring_ctx *ctx;
        struct io_cqe cqe;
        void *async_data;
} __attribute__((preserve_access_index));
struct kiocb {
        struct file *ki_filp;
        long long ki_pos;
        void *ki_complete;
} __attribute__((preserve_access_index));
/* AIO's request (fs/aio.c): its kiocb first, and the event it will complete with, whose obj is the user's
 * iocb */
struct io_event___k {
        __u64 data;
        __u64 obj;
} __attribute__((preserve_access_index));
struct aio_kiocb {
        struct kiocb rw;
        struct io_event___k ki_res;
} __attribute__((preserve_access_index));
struct io_rw {
        struct kiocb kiocb;
        __u64 addr;
        __u32 len;
        int flags;
} __attribute__((preserve_access_index));
/* A vectored read or write's iovecs, as the prep imported them (kernels since 6.10: before, the import came at
 * issue, and io_async_rw had no iter of its own) */
struct iov_iter {
        unsigned long count;
} __attribute__((preserve_access_index));
struct io_async_rw {
        struct iov_iter iter;
} __attribute__((preserve_access_index));
struct io_sync {
        long long len;
        long long off;
        int flags;
} __attribute__((preserve_access_index));

/* The user registers a thread entered the kernel with; x86-64 passes a syscall's arguments in these.  Read
 * only where the running kernel's BTF has them. */
struct pt_regs {
        unsigned long di, si, dx, r10, r8, r9;
} __attribute__((preserve_access_index));

#define GLOB_INLINE static __always_inline
#include "capture.h"
#include "glob_step.h"

char LICENSE[] SEC("license") = "GPL";

/* Where each io_uring op's prep keeps what is read of it, and which AIO ops read iovecs: from bpf/ops.h */
#define URING_LAYOUT_ROW(op, n, a, layout, f, v) [op] = URING_LAYOUT_##layout,
static const __u8 uring_layout[URING_OP_COUNT] = { URING_OPS(URING_LAYOUT_ROW) };
#define URING_VECTORED_ROW(op, n, a, layout, f, v) [op] = v,
static const __u8 uring_vectored[URING_OP_COUNT] = { URING_OPS(URING_VECTORED_ROW) };
#define AIO_VECTORED_ROW(op, n, d, vectored) [op] = vectored,
static const __u8 aio_vectored[AIO_OPCODE_MAX + 1] = { AIO_OPS(AIO_VECTORED_ROW) };

/* Set by the daemon before loading: the tracepoint ids from tracefs, and max_iocbs_per_call. */
const volatile __u16 enter_tp_id[_AIO_SYSCALL_MAX] = {};
const volatile __u16 exit_tp_id[_AIO_SYSCALL_MAX] = {};
const volatile __u32 max_items = CAPTURE_MAX_ITEMS;
const volatile __u16 proc_exit_tp_id = 0;
const volatile __u16 proc_exec_tp_id = 0;
const volatile __u16 uring_submit_tp_id = 0;
const volatile __u16 uring_complete_tp_id = 0;
const volatile __u16 uring_overflow_tp_id = 0;
/* The daemon's pid namespace (its nsfs device and inode), when it is not the first: the pids a record carries of
 * its own are the ones the daemon sees, as perf gives its samples'.  0: the host's, as the kernel has them. */
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;
const volatile __u32 pidns_level = 0; /* its depth: 0 for the first */
/* The daemon's cgroup v2 root (the id of the cgroup its hierarchy's mount shows at its top: the root, or its
 * cgroup namespace's): where a cgroup's path walked up ends, as /proc/PID/cgroup gives it.  0: the top. */
const volatile __u64 cgroup_root_id = 0;
/* The daemon's root (its mount id and inode): where a path walked up from a file ends; 0, the global root. */
const volatile __u32 root_mnt_id = 0;
const volatile __u64 root_ino = 0;
/* Every watched thread is summed in the kernel (the config asks for summaries alone): the code that writes the
 * records of calls and requests is behind a branch on this constant, which the verifier then does not walk (a
 * third of the programs' instructions, and of the start's time).  A reload that asks for records loads the
 * programs again without it (daemon/bpf_capture.c). */
const volatile __u32 summed_only = 0;

/* Which of two loads of these programs is in force: a reload that asks for records loads them again, without
 * summed_only, beside the running ones, on the same maps, and hands over by this; the other load's programs
 * return at once.  Neither a gap in the trace nor a call counted twice. */
__u32 programs_in_force = 0;
const volatile __u32 program_set = 0;

static __always_inline int in_force(void) {
        return programs_in_force == program_set;
}

/* The current thread's (tgid << 32 | pid) as the daemon's pid namespace sees it: 0 for one it cannot see. */
static __always_inline __u64 seen_pid_tgid(void) {
        if (!pidns_ino)
                return bpf_get_current_pid_tgid();
        struct bpf_pidns_info ns = {};
        if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)) < 0)
                return 0;
        return (__u64) ns.tgid << 32 | ns.pid;
}

/* A task's pid (or with group, its process's) as the daemon's pid namespace sees it: 0 for one it cannot see. */
static __always_inline __u32 task_seen_pid(struct task_struct *t, int group) {
        if (!pidns_ino)
                return group ? (__u32) BPF_CORE_READ(t, tgid) : (__u32) BPF_CORE_READ(t, pid);
        struct pid *p = group ? BPF_CORE_READ(t, group_leader, thread_pid) : BPF_CORE_READ(t, thread_pid);
        if (!p || BPF_CORE_READ(p, level) < pidns_level)
                return 0;
        struct upid *up = (struct upid *) ((char *) p + bpf_core_field_offset(struct pid, numbers) +
                                           (pidns_level & 31) * bpf_core_type_size(struct upid));
        if (BPF_CORE_READ(up, ns, ns.inum) != pidns_ino)
                return 0; /* another namespace at the daemon's depth */
        return (__u32) BPF_CORE_READ(up, nr);
}

#define SEG_HDR sizeof(struct capture_segment)
/* Offsets into the scratch buffer are masked to below OFF_LIMIT and lengths to below LEN_LIMIT, so the verifier
 * can see every access inside SCRATCH_SIZE. */
#define OFF_LIMIT 32768
#define LEN_LIMIT 16384
#define SCRATCH_SIZE (OFF_LIMIT + LEN_LIMIT + 64)
/* Hide a value's known range from the compiler, so a mask meant for the verifier is not optimised away. */
#define opaque(x) asm volatile("" : "+r"(x))

struct {
        __uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
        __uint(key_size, sizeof(__u32));
        __uint(value_size, sizeof(__u32));
} rings SEC(".maps");

#define ENTER_FILES_MAX 8

/* What the kernel itself used for a direct read or write through iomap, during the call (the file, offset and
 * length of its own copy of the iocb): the iocb's memory may say otherwise by the exit, if another thread wrote
 * it meanwhile. */
struct kview {
        __u32 mnt_id;
        __u32 pad;
        __u64 ino;
        __s64 pos;
        __u64 count;
};
/* The first few of a call in the thread's own storage (no hashing: each direct read would otherwise pay an
 * update, a lookup and a delete), the rest in kviews.  As many as a batch of 16 iocbs, a common depth. */
#define KVIEWS_IN_THREAD 16
struct kview_slot {
        __u64 iocb;
        struct kview v;
};

/* Per thread, in the task's own storage (freed with the task, found without hashing): the arguments of the
 * call in progress, and whether its command name is watched, for that name and watch generation. */
struct thread_state {
        __u64 args[6];
        __u64 enter_time;
        __u32 enter_cpu;
        __u32 args_valid;
        __u32 generation;
        __u32 watched;
        __u32 verdict_valid;
        __u32 uid;
        __u32 sc; /* the call in progress, with args_valid */
        __u32 n_enter_files;
        __u64 enter_files[ENTER_FILES_MAX]; /* io_submit: the files its first iocbs' fds named at its enter */
        __u32 n_kviews;
        struct kview_slot kviews[KVIEWS_IN_THREAD]; /* this io_submit's direct I/O, as the kernel took it */
        __u64 cgroup_id;
        __u64 by_call_ctx; /* the context whose ring this thread last marked as reaped by io_getevents */
        char comm[GLOB_COMM_SIZE];
        __u32 identity_told; /* its process's identity was written before one of its records */
};

struct {
        __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __type(key, int);
        __type(value, struct thread_state);
} threads SEC(".maps");

/* The state of the record being built.  It lives in the map value, not on the stack: the verifier then knows
 * nothing of its contents and checks each bpf_loop() callback once, whatever the iteration. */
struct build {
        __u32 off; /* where the next segment goes */
        __u32 n_segs;
        __u32 flags;
        __u32 n;          /* items to capture */
        __u32 ptrs_off;   /* where the captured iocb pointers are */
        __u32 ptrs_valid; /* bytes of them that could be read */
        __u32 elem;       /* put_array's prefix search: element size, */
        __u32 good;       /* elements read so far, */
        __u64 src;        /* and where they come from */
        __u32 dst_off;    /* and where they go */
        __u64 matched;    /* watched(): the entries some glob satisfies */
        __u32 n_files;    /* entries of files[] filled */
        __u32 files_off;  /* where they were copied into buf */
        __u32 last_fd;    /* the file identity found last, for the next iocb on the same fd */
        __u32 last_mnt_id;
        __u64 last_ino;
        struct file *last_file;
        __u32 n_enter_files; /* io_submit: ENTER_FILES_MAX at most, from the thread's state */
        __u64 enter_files[ENTER_FILES_MAX];
        __u32 n_kviews; /* and the kernel's views of its direct I/O */
        struct kview_slot kviews[KVIEWS_IN_THREAD];
};

/* The keys a verdict looks up that are too large for the stack, and the walk up the cgroup tree. */
struct lookup_keys {
        struct capture_exe_name_key exe_name;
        struct capture_unit_key unit;
        __u64 kn;          /* the cgroup directory being looked at */
        __u64 unit_bits;   /* what the walk found so far */
        __u64 cgroup_bits;
        __u32 want_units, want_cgroups, set;
};

/* A path walked up from a file: built backwards in buf[pos, CAPTURE_PATH_MAX), then copied behind the record's
 * head in out. */
struct path_walk {
        struct dentry *d;
        struct mount *m;
        __u32 pos;
        __u32 state; /* PATH_WALKING, ... */
        __u8 buf[CAPTURE_PATH_MAX + 256];
        __u8 out[CAPTURE_EXIT_RAW_SIZE + sizeof(struct capture_identity) + CAPTURE_PATH_MAX];
};
_Static_assert(sizeof(struct capture_identity) >= sizeof(struct capture_path), "the told records' room");

/* The files whose paths an io_submit's exit sends after its iocbs are read. */
#define NEW_FILES_MAX 4
struct new_file {
        struct file *f;
        __u32 mnt_id;
        __u64 ino;
};

/* The items of a call past its record's, written CAPTURE_MORE_ITEMS a record. */
struct more_walk {
        __u64 base;   /* the user array: iocb pointers, or io_events */
        __u32 total;  /* items the call has */
        __u32 first;  /* of the record being filled */
        __u32 n;      /* in it so far */
        __u16 kind;   /* CAPTURE_MORE_IOCBS, CAPTURE_MORE_EVENTS */
        __u16 syscall;
        __u64 ctx;
        __u64 enter_time;
};

struct scratch {
        /* the file identity last found in paths_sent or told on this CPU: no lookup for it next time (one pushed
         * out of the map since is told again once another identity came between) */
        __u32 told_mnt_id;
        __u64 told_ino;
        struct path_walk pw;
        struct new_file new_files[NEW_FILES_MAX];
        __u32 n_new_files;
        struct build b;
        struct glob_state g;
        struct lookup_keys k;
        struct more_walk more;
        struct capture_iocb_file files[CAPTURE_MAX_ITEMS];
        __u8 buf[SCRATCH_SIZE];
};

/* One per CPU, indexed by CPU number (a per-CPU array cannot hold values this large).  Preemption is off while a
 * syscall tracepoint's program runs, so nothing else uses a CPU's buffer meanwhile. */
struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, 1); /* the daemon sets the number of possible CPUs */
        __type(key, __u32);
        __type(value, struct scratch);
} scratch SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, _CAPTURE_CNT_MAX);
        __type(key, __u32);
        __type(value, __u64);
} counters SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, struct capture_watch);
} watch SEC(".maps");

/* Watched pids (every thread of them) and tids, and the processes followed as children. */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, 2 * CAPTURE_MAX_IDS);
        __type(key, struct capture_id_key);
        __type(value, struct capture_id);
} watch_ids SEC(".maps");

/* Watched exact command names: one lookup, however many. */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, 2 * CAPTURE_MAX_NAMES);
        __type(key, struct capture_comm);
        __type(value, __u64);
} watch_names SEC(".maps");

/* Set s's globs at [s * CAPTURE_MAX_GLOBS, ...). */
struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, 2 * CAPTURE_MAX_GLOBS);
        __type(key, __u32);
        __type(value, struct capture_glob);
} watch_globs SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, 2 * CAPTURE_MAX_KEYS);
        __type(key, struct capture_uid_key);
        __type(value, __u64);
} watch_uids SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, 2 * CAPTURE_MAX_KEYS);
        __type(key, struct capture_exe_key);
        __type(value, __u64);
} watch_exes SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, 2 * CAPTURE_MAX_KEYS);
        __type(key, struct capture_exe_name_key);
        __type(value, __u64);
} watch_exe_names SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, 2 * CAPTURE_MAX_KEYS);
        __type(key, struct capture_unit_key);
        __type(value, __u64);
} watch_units SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, 2 * CAPTURE_MAX_KEYS);
        __type(key, struct capture_cgroup_key);
        __type(value, __u64);
} watch_cgroups SEC(".maps");

/* What a bpf_loop() callback is given: only the CPU, so it can find the scratch. */
struct loop_ctx {
        __u32 cpu;
        __u32 set;
        void *ctx; /* the program's context, for a record written from a bpf_loop() callback */
};

static __always_inline struct scratch *scratch_of(const struct loop_ctx *l) {
        __u32 cpu = l->cpu;
        return bpf_map_lookup_elem(&scratch, &cpu);
}

static __always_inline void count(__u32 which) {
        __u64 *v = bpf_map_lookup_elem(&counters, &which);
        if (v)
                *v += 1;
}

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

static __always_inline struct thread_state *thread_state(void) {
        return bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
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

/* Per context: where the next look starts (the ring's head at the last one), and whether io_getevents reaps
 * from it. */
struct ring_key {
        __u32 tgid;
        __u32 pad;
        __u64 ctx;
};

#define RING_NEXT_UNKNOWN 0xffffffffu /* no look yet: the first starts at head */

struct ring_state {
        __u32 next;
        __u32 by_call;
};

struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, CAPTURE_MAX_RINGS);
        __type(key, struct ring_key);
        __type(value, struct ring_state);
} ring_tails SEC(".maps");

/* The processes with a ring in ring_tails: what exit_group looks up before it walks that map. */
struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, CAPTURE_MAX_RINGS);
        __type(key, __u32);
        __type(value, __u8);
} ring_owners SEC(".maps");

static __always_inline struct ring_state *ring_state_of(__u64 ctx, struct ring_key *key) {
        *key = (struct ring_key) { .tgid = (__u32) (bpf_get_current_pid_tgid() >> 32), .ctx = ctx };
        struct ring_state *v = bpf_map_lookup_elem(&ring_tails, key);
        if (v)
                return v;
        struct ring_state fresh = { .next = RING_NEXT_UNKNOWN };
        __u8 one = 1;
        bpf_map_update_elem(&ring_owners, &key->tgid, &one, BPF_ANY);
        bpf_map_update_elem(&ring_tails, key, &fresh, BPF_NOEXIST);
        return bpf_map_lookup_elem(&ring_tails, key);
}

/* io_getevents is about to reap from ctx's ring: a completion seen gone from it may be in that call's result,
 * not reaped by the program itself.  Marked before the call can take anything. */
static __always_inline void ring_reaped_by_call(__u64 ctx) {
        struct ring_key key;
        struct ring_state *v = ctx ? ring_state_of(ctx, &key) : 0;
        if (v)
                v->by_call = 1;
}

/* What of ctx's ring is new since the last look: from where that look's head was to the head now, less the
 * `own` last ones, which the io_getevents at hand returned itself.  The first look starts at head: what was
 * reaped before it is not known.  Returns the ring's state where there is something to take; with nothing, it
 * moves the state on to head. */
struct ring_window {
        struct ring_key key;
        __u32 nr;
        __u32 head;
        __u32 start;
        __u32 count;
};

static __always_inline struct ring_state *ring_window(__u64 ctx, __u32 own, struct ring_window *ret) {
        __u32 hdr[AIO_RING_HEADER / 4];
        if (!ctx || bpf_probe_read_user(hdr, sizeof(hdr), (const void *) ctx) != 0)
                return 0;
        __u32 nr = hdr[1], head = hdr[2], tail = hdr[3];
        if (hdr[4] != AIO_RING_MAGIC || hdr[7] != AIO_RING_HEADER || nr == 0 || head >= nr || tail >= nr)
                return 0;
        struct ring_state *v = ring_state_of(ctx, &ret->key);
        if (!v)
                return 0;
        __u32 start = v->next < nr ? v->next : head;
        __u32 count = head >= start ? head - start : nr - start + head;
        count = count > own ? count - own : 0;
        if (count == 0) {
                if (v->next != head)
                        v->next = head;
                return 0;
        }
        ret->nr = nr;
        ret->head = head;
        ret->start = start;
        ret->count = count;
        return v;
}

/* The completions reaped from ctx's ring since the last look, by the program itself or by io_getevents (see
 * CAPTURE_F_RING).  Those still waiting in the ring are taken once they are reaped. */
static __always_inline void capture_ring(struct scratch *s, __u64 ctx, __u32 own) {
        struct ring_window rw;
        struct ring_state *v = ring_window(ctx, own, &rw);
        if (!v)
                return;
        __u32 nr = rw.nr, head = rw.head, start = rw.start, count = rw.count;
        int capped = count > CAPTURE_RING_MAX;
        if (capped)
                count = CAPTURE_RING_MAX;
        __u32 first = nr - start < count ? nr - start : count;
        if (put_segment(s, ctx, AIO_RING_HEADER) < 0)
                return;
        s->b.flags |= CAPTURE_F_RING | (v->by_call ? CAPTURE_F_RING_BY_CALL : 0);
        /* A ring page the process has not touched yet is not mapped for it, and the program cannot fault it in:
         * what could not be read is read at a later look. */
        if (put_events(s, ctx + AIO_RING_HEADER + (__u64) start * IO_EVENT_SIZE, first) < 0)
                return;
        __u32 taken = first;
        if (count > first && put_events(s, ctx + AIO_RING_HEADER, count - first) == 0)
                taken = count;
        __u32 next = start + taken;
        if (next >= nr)
                next -= nr;
        /* all taken: on to head (past this call's own, which are in its record already) */
        v->next = taken == count && !capped ? head : next;
}

#include "summaries.h"

/* After a failed read of a whole array: how many of its leading elements can be read, one at a time. */
static long prefix_step(__u32 i, void *ctx) {
        struct scratch *s = scratch_of(ctx);
        if (!s || i >= s->b.n)
                return 1;
        __u32 elem = s->b.elem & 63;
        __u32 at = (s->b.dst_off + i * elem) & (OFF_LIMIT - 1);
        if (bpf_probe_read_user(s->buf + at, elem, (const void *) (s->b.src + (__u64) i * elem)) != 0)
                return 1;
        s->b.good = i + 1;
        return 0;
}

/* An array of n elements: one segment, whose valid part is the prefix that could be read.  Returns it. */
static __always_inline __u32 put_array(struct loop_ctx *l, struct scratch *s, __u64 addr, __u32 n, __u32 elem) {
        __u32 start = s->b.off;
        if (n == 0 || put_segment(s, addr, n * elem) < 0)
                return 0;
        struct capture_segment *seg = (void *) (s->buf + (start & (OFF_LIMIT - 1)));
        if (seg->valid)
                return seg->valid;
        s->b.dst_off = start + SEG_HDR;
        s->b.n = n;
        s->b.elem = elem;
        s->b.src = addr;
        s->b.good = 0;
        bpf_loop(CAPTURE_MAX_ITEMS, prefix_step, l, 0);
        s = scratch_of(l);
        if (!s)
                return 0;
        seg = (void *) (s->buf + (start & (OFF_LIMIT - 1)));
        seg->valid = s->b.good * elem;
        return seg->valid;
}

/* The mount id of a file's vfsmount, as fdinfo shows it; 0 if it cannot be read. */
static __always_inline int mount_id_of(struct vfsmount *mnt, __u32 *ret_mnt_id) {
        int mnt_id = 0;
        /* real_mount(): the vfsmount sits inside its struct mount, which the verifier does not know it by */
        if (!mnt || bpf_probe_read_kernel(&mnt_id, sizeof(mnt_id),
                                          (__u8 *) mnt - bpf_core_field_offset(struct mount, mnt) +
                                                  bpf_core_field_offset(struct mount, mnt_id)) != 0)
                return 0;
        *ret_mnt_id = (__u32) mnt_id;
        return 1;
}

/* The (mnt_id, ino) of an open file, as fdinfo shows them; 0 if it cannot be read. */
static __always_inline int identity_of(struct file *f, __u32 *ret_mnt_id, __u64 *ret_ino) {
        unsigned long ino = BPF_CORE_READ(f, f_inode, i_ino);
        if (!mount_id_of(BPF_CORE_READ(f, f_path.mnt), ret_mnt_id))
                return 0;
        *ret_ino = ino;
        return 1;
}

/* The same for a file pointer the verifier knows the type of (a tp_btf program's argument, or what one points
 * to): its fields read directly, a load each. */
static __always_inline int identity_of_btf(struct file *f, __u32 *ret_mnt_id, __u64 *ret_ino) {
        if (!mount_id_of(f->f_path.mnt, ret_mnt_id))
                return 0;
        *ret_ino = f->f_inode->i_ino;
        return 1;
}

/* The open file the current task's fd names now; NULL if none.  The task's own pointer is one the verifier knows
 * the type of: read directly (a load each, not a helper call), down to the array, which it cannot index. */
static __always_inline struct file *file_of_fd(__u32 fd) {
        struct task_struct *task = bpf_get_current_task_btf();
        struct fdtable *fdt = task->files->fdt;
        if (!fdt || fd >= fdt->max_fds)
                return 0;
        struct file **fds = fdt->fd;
        struct file *f = 0;
        if (!fds || bpf_probe_read_kernel(&f, sizeof(f), fds + fd) != 0)
                return 0;
        return f;
}

/* From kernel 6.2 this kfunc makes a kernel address a typed pointer whose fields are plain loads (faulting ones
 * read as 0), not a helper call each.  The programs that use it have twins that do not ("_probed"), and the
 * daemon loads one of each pair as the kernel has it or not (weak: without it, the object still loads). */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/* A tp_btf program that reads through bpf_rdonly_cast, and its twin for kernels without it, which reads through
 * helper calls: body(ctx, typed). */
#define TP_BTF_TWINS(tp, name, body)                                        \
        SEC("tp_btf/" #tp)                                                  \
        int name(__u64 *ctx) {                                              \
                return in_force() ? body(ctx, 1) : 0;                       \
        }                                                                   \
        SEC("tp_btf/" #tp)                                                  \
        int name##_probed(__u64 *ctx) {                                     \
                return in_force() ? body(ctx, 0) : 0;                       \
        }

/* A file's identity, its fields read through bpf_rdonly_cast (`typed`) or through helper calls. */
static __always_inline int identity_of_as(struct file *f, __u32 *ret_mnt_id, __u64 *ret_ino, const int typed) {
        if (typed)
                return identity_of_btf(bpf_rdonly_cast(f, bpf_core_type_id_kernel(struct file)), ret_mnt_id,
                                       ret_ino);
        return identity_of(f, ret_mnt_id, ret_ino);
}

/* The (mnt_id, ino) of the file the current task's fd names now, as fdinfo shows them; mnt_id 0 if none.
 * `typed`: the file read through bpf_rdonly_cast. */
static __always_inline void file_identity(struct scratch *s, __u32 fd, struct capture_file *ret, const int typed) {
        ret->fd = fd;
        if (fd == s->b.last_fd) {
                ret->mnt_id = s->b.last_mnt_id;
                ret->ino = s->b.last_ino;
                return;
        }
        ret->mnt_id = 0;
        ret->ino = 0;
        struct file *f = file_of_fd(fd);
        if (!f)
                return;
        __u32 mnt_id;
        __u64 ino;
        if (!identity_of_as(f, &mnt_id, &ino, typed))
                return;
        ret->mnt_id = mnt_id;
        ret->ino = ino;
        s->b.last_file = f;
        s->b.last_fd = fd;
        s->b.last_mnt_id = ret->mnt_id;
        s->b.last_ino = ino;
}

/* The kernel's views beyond a call's first KVIEWS_IN_THREAD, by (thread, user iocb).  LRU: a view the exit never
 * took (its call's record lost) goes. */
struct kview_key {
        __u32 tid;
        __u32 pad;
        __u64 iocb;
};
struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, 4096);
        __type(key, struct kview_key);
        __type(value, struct kview);
} kviews SEC(".maps");

#define IOCB_OFFSET_OFFSET 40 /* aio_offset */

/* The iocb as the exit reads it, against the kernel's own view of it where there is one: the same, or the
 * kernel's file, offset and length instead. */
static __always_inline void kernel_view(struct scratch *s, struct capture_iocb_file *cf, __u64 iocb, const __u8 *cb,
                                        int vectored) {
        struct kview *v = 0;
        __u32 n = s->b.n_kviews;
        for (__u32 k = 0; k < KVIEWS_IN_THREAD; k++)
                if (k < n && s->b.kviews[k].iocb == iocb) {
                        v = &s->b.kviews[k].v;
                        break;
                }
        struct kview_key key = { .tid = (__u32) bpf_get_current_pid_tgid(), .iocb = iocb };
        int in_map = 0;
        if (!v && n > KVIEWS_IN_THREAD) {
                v = bpf_map_lookup_elem(&kviews, &key);
                in_map = v != 0;
        }
        if (!v)
                return;
        int same = v->mnt_id == cf->file.mnt_id && v->ino == cf->file.ino &&
                   v->pos == *(__s64 *) (cb + IOCB_OFFSET_OFFSET) &&
                   (vectored || v->count == *(__u64 *) (cb + IOCB_NBYTES_OFFSET));
        if (same)
                cf->flags = CAPTURE_IOCB_KERNEL_SAME; /* whatever the fd named at the enter */
        else {
                cf->flags = CAPTURE_IOCB_KERNEL_OTHER;
                cf->file.mnt_id = v->mnt_id;
                cf->file.ino = v->ino;
                cf->kernel_pos = v->pos;
                cf->kernel_count = v->count;
        }
        if (in_map)
                bpf_map_delete_elem(&kviews, &key);
}

/* The file identities whose paths were written: each once, while the daemon keeps what it was told (LRU: a
 * path pushed out of here is written again when next seen). */
struct file_key {
        __u32 mnt_id;
        __u32 pad;
        __u64 ino;
};
struct {
        __uint(type, BPF_MAP_TYPE_LRU_HASH);
        __uint(max_entries, 16384);
        __type(key, struct file_key);
        __type(value, __u8);
} paths_sent SEC(".maps");

enum { PATH_WALKING, PATH_AT_ROOT, PATH_OUTSIDE, PATH_TOO_LONG_ };
#define PATH_COMPONENTS_MAX 256

/* One step up: a component before the path, or from a mount's root to where it is mounted. */
static long path_step(__u32 i __attribute__((unused)), void *ctx) {
        struct scratch *s = scratch_of(ctx);
        if (!s)
                return 1;
        struct path_walk *w = &s->pw;
        struct dentry *d = w->d;
        struct mount *m = w->m;
        if (root_mnt_id && BPF_CORE_READ(m, mnt_id) == (int) root_mnt_id && BPF_CORE_READ(d, d_inode, i_ino) == root_ino) {
                w->state = PATH_AT_ROOT;
                return 1;
        }
        if (d == BPF_CORE_READ(m, mnt.mnt_root)) {
                struct mount *parent = BPF_CORE_READ(m, mnt_parent);
                if (parent == m) {
                        w->state = root_mnt_id ? PATH_OUTSIDE : PATH_AT_ROOT;
                        return 1;
                }
                w->d = BPF_CORE_READ(m, mnt_mountpoint);
                w->m = parent;
                return 0;
        }
        struct dentry *parent = BPF_CORE_READ(d, d_parent);
        __u32 len = BPF_CORE_READ(d, d_name.len), pos = w->pos;
        if (parent == d || len == 0) {
                w->state = PATH_OUTSIDE; /* not reachable from a mount's root */
                return 1;
        }
        if (len > 255 || pos < len + 1) {
                w->state = PATH_TOO_LONG_;
                return 1;
        }
        pos -= len;
        bpf_probe_read_kernel(w->buf + (pos & (CAPTURE_PATH_MAX - 1)), len & 255, BPF_CORE_READ(d, d_name.name));
        pos -= 1;
        w->buf[pos & (CAPTURE_PATH_MAX - 1)] = '/';
        w->pos = pos;
        w->d = parent;
        return 0;
}

#define PIPEFS_MAGIC 0x50495045
#define SOCKFS_MAGIC 0x534F434B

/* A pipe's or a socket's name as /proc/PID/fd gives it, "pipe:[INO]": its identity's alone, unlike an anonymous
 * inode's (one inode for every eventfd and epoll), whose name /proc is left to give. */
static __always_inline void pseudo_name(struct path_walk *w, int socket, __u64 ino) {
        const char pipe_prefix[8] = "pipe:[", socket_prefix[8] = "socket:[";
        __u32 pos = CAPTURE_PATH_MAX - 1;
        w->buf[pos] = ']';
        for (int i = 0; i < 20; i++) {
                pos--;
                w->buf[pos & (CAPTURE_PATH_MAX - 1)] = '0' + ino % 10;
                ino /= 10;
                if (!ino)
                        break;
        }
        const char *prefix = socket ? socket_prefix : pipe_prefix;
        for (int i = socket ? 7 : 5; i >= 0; i--) {
                pos--;
                w->buf[pos & (CAPTURE_PATH_MAX - 1)] = prefix[i & 7];
        }
        w->pos = pos;
        w->state = PATH_AT_ROOT;
}

/* The path of file f (identity mnt_id, ino), written as a record of its own if it was not already and it lies
 * under the daemon's root (a file since deleted has none), or a pipe's or a socket's name. */
static __noinline int send_path(void *ctx, struct loop_ctx *l, struct file *f, __u32 mnt_id, __u64 ino) {
        struct file_key key = { .mnt_id = mnt_id, .ino = ino };
        struct scratch *s = scratch_of(l);
        if (!f || !s || (s->told_mnt_id == mnt_id && s->told_ino == ino))
                return 0;
        if (bpf_map_lookup_elem(&paths_sent, &key)) {
                s->told_mnt_id = mnt_id;
                s->told_ino = ino;
                return 0;
        }
        unsigned long magic = BPF_CORE_READ(f, f_inode, i_sb, s_magic);
        if (magic == PIPEFS_MAGIC || magic == SOCKFS_MAGIC) {
                pseudo_name(&s->pw, magic == SOCKFS_MAGIC, ino);
        } else {
                if (BPF_CORE_READ(f, f_inode, i_nlink) == 0)
                        return 0;
                struct vfsmount *mnt = BPF_CORE_READ(f, f_path.mnt);
                s->pw.d = BPF_CORE_READ(f, f_path.dentry);
                s->pw.m = (struct mount *) ((__u8 *) mnt - bpf_core_field_offset(struct mount, mnt));
                s->pw.pos = CAPTURE_PATH_MAX;
                s->pw.state = PATH_WALKING;
                bpf_loop(PATH_COMPONENTS_MAX, path_step, l, 0);
                s = scratch_of(l);
        }
        if (!s || s->pw.state != PATH_AT_ROOT)
                return 0;
        __u32 pos = s->pw.pos & (CAPTURE_PATH_MAX - 1), len = CAPTURE_PATH_MAX - s->pw.pos;
        if (len == 0) { /* the root itself */
                s->pw.buf[CAPTURE_PATH_MAX - 1] = '/';
                pos = CAPTURE_PATH_MAX - 1;
                len = 1;
        }
        __u8 *out = s->pw.out;
        put_common(out, exit_tp_id[AIO_IO_SUBMIT]);
        *(__s32 *) (out + CAPTURE_EXIT_NR_OFFSET) = -1;
        *(__u32 *) (out + CAPTURE_EXIT_NR_OFFSET + 4) = 0;
        *(__s64 *) (out + CAPTURE_EXIT_RET_OFFSET) = 0;
        struct capture_path *h = (void *) (out + CAPTURE_EXIT_RAW_SIZE);
        h->magic = CAPTURE_PATH_MAGIC;
        h->len = len;
        h->mnt_id = mnt_id;
        h->reserved = 0;
        h->ino = ino;
        len &= CAPTURE_PATH_MAX - 1;
        bpf_probe_read_kernel(out + CAPTURE_EXIT_RAW_SIZE + sizeof(*h), len, s->pw.buf + pos);
        output(ctx, out, CAPTURE_EXIT_RAW_SIZE + sizeof(*h) + len);
        __u8 one = 1;
        bpf_map_update_elem(&paths_sent, &key, &one, BPF_ANY);
        s = scratch_of(l);
        if (s) {
                s->told_mnt_id = mnt_id;
                s->told_ino = ino;
        }
        return 0;
}

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

static __always_inline struct thread_state *thread_state_if_any(void) {
        return bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0, 0);
}

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
        put_common(s->buf, proc_exit_tp_id);
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
        put_common(s->buf, proc_exec_tp_id);
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

/* ---- io_uring: requests with no system call each ---- */

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
        put_common(r->raw, uring_submit_tp_id);
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
        put_common(r.raw, uring_complete_tp_id);
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
        put_common((__u8 *) &r.raw, uring_overflow_tp_id);
        r.raw.ctx = ring;
        r.raw.user_data = ctx->user_data;
        r.raw.res = ctx->res;
        r.raw.cflags = ctx->cflags;
        r.raw.ocqe = ctx->ocqe;
        uring_completer(&r.u, owner);
        output(ctx, &r, sizeof(r));
        return NEUTRAL;
}
