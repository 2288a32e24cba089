/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What every program shares: the daemon's settings, the maps, each thread's storage and the per-CPU scratch.
 * Part of bpf/capture.bpf.c, which includes it. */

#define GLOB_INLINE static __always_inline
#include "glob_step.h"

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
/* the ids of the other tracepoints whose records the capture writes in their stead, by kind */
const volatile __u16 tp_id_of[_EVENT_KIND_MAX] = {};
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

static __always_inline struct thread_state *thread_state(void) {
        return bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
}

static __always_inline struct thread_state *thread_state_if_any(void) {
        return bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0, 0);
}
