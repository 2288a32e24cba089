/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The contract between the in-kernel capture (bpf/capture.bpf.c) and the daemon: the syscalls as both number
 * them, the AIO structures' sizes, and the record the program writes at a syscall's exit:
 *
 *   the tracepoint's own record, laid out as the format file says (CAPTURE_EXIT_RAW_SIZE bytes)
 *   struct capture_header (with the call's enter: its time and arguments)
 *   n_segments x { struct capture_segment, then `len` bytes of the caller's memory, padded to 8 }
 *   n_files x struct capture_file (io_submit: the file each captured iocb's fd named), at files_off
 *
 * Each segment is one region the program read while the caller was still inside the system call, so what it
 * holds is what the kernel itself read.  The file table is kept apart from the segments: it is not the caller's
 * memory, and no address lookup may ever answer from it.  Only fixed-size types: this header is compiled for
 * BPF too. */

#include <linux/aio_abi.h>

#include "hist_bucket.h"
#include "ops.h"

#ifdef __bpf__
#include <linux/types.h>
typedef __u8 capture_u8;
typedef __u16 capture_u16;
typedef __u32 capture_u32;
typedef __u64 capture_u64;
typedef __s32 capture_s32;
#else
#include <stdint.h>
typedef uint8_t capture_u8;
typedef uint16_t capture_u16;
typedef uint32_t capture_u32;
typedef uint64_t capture_u64;
typedef int32_t capture_s32;
#endif

/* The kinds of the tracepoints' records (lib/tracepoints.c has a row for each): the capture writes some in the
 * tracepoint's stead, under the tracepoint's id the daemon gives it (tp_id_of). */
enum event_kind {
        EVENT_SYS_ENTER,
        EVENT_SYS_EXIT,
        EVENT_FORK,      /* sched:sched_process_fork, to follow the threads of watched pids */
        EVENT_PROC_EXIT, /* sched:sched_process_exit of a whole process (group_dead): its requests end */
        EVENT_PROC_EXEC, /* sched:sched_process_exec: its AIO contexts go with its old memory */
        EVENT_URING_SUBMIT,   /* io_uring:io_uring_submit_req: a request of a ring, with the capture's details */
        EVENT_URING_COMPLETE, /* io_uring:io_uring_complete: its completion */
        EVENT_URING_FAILED,   /* io_uring:io_uring_req_failed: the capture writes it as a submit */
        EVENT_URING_OVERFLOW, /* io_uring:io_uring_cqe_overflow: a completion the CQ ring had no room for */
        EVENT_URING_ASYNC,    /* io_uring:io_uring_queue_async_work: a request handed to an io-wq worker */
        EVENT_URING_POLL_ARM, /* io_uring:io_uring_poll_arm: a request waiting for its file to be ready */
        /* the capture's alone: no record of theirs reaches the engine */
        EVENT_EXIT_GROUP,   /* syscalls:sys_enter_exit_group: the AIO rings' last completions */
        EVENT_CGROUP_MKDIR, /* cgroup_mkdir (tp_btf): counted, for the daemon to look at new cgroups */
        EVENT_DIO_BEGIN,    /* iomap_dio_rw_begin (tp_btf): the kernel's own view of a direct read or write */
        EVENT_URING_CREATE, /* io_uring_create (tp_btf): a new ring forgets the owner of the one before it */
        _EVENT_KIND_MAX,
};

enum aio_syscall {
        AIO_IO_SETUP,
        AIO_IO_DESTROY,
        AIO_IO_SUBMIT,
        AIO_IO_CANCEL,
        AIO_IO_GETEVENTS,
        AIO_IO_PGETEVENTS,
        /* io_uring's calls: records of their own only with records = "syscalls" (capture_watch.uring_calls), and
         * skipped where the kernel has no io_uring */
        AIO_IO_URING_SETUP,
        AIO_IO_URING_ENTER,
        AIO_IO_URING_REGISTER,
        _AIO_SYSCALL_MAX,
};
#define AIO_URING_SYSCALL_FIRST AIO_IO_URING_SETUP

#define AIO_ARGS_MAX 6

/* The user ABI (linux/aio_abi.h, every 64-bit ABI): what the program reads and the decoder decodes. */
#define IOCB_SIZE 64u
#define IO_EVENT_SIZE 32u
#define IOVEC_SIZE 16u
#define IOCB_OPCODE_OFFSET 16 /* aio_lio_opcode */
#define IOCB_FD_OFFSET 20     /* aio_fildes */
#define IOCB_BUF_OFFSET 24    /* aio_buf */
#define IOCB_NBYTES_OFFSET 32 /* aio_nbytes */
_Static_assert(sizeof(struct iocb) == IOCB_SIZE, "struct iocb size");
_Static_assert(sizeof(struct io_event) == IO_EVENT_SIZE, "struct io_event size");
_Static_assert(__builtin_offsetof(struct iocb, aio_lio_opcode) == IOCB_OPCODE_OFFSET, "aio_lio_opcode offset");
_Static_assert(__builtin_offsetof(struct iocb, aio_fildes) == IOCB_FD_OFFSET, "aio_fildes offset");
_Static_assert(__builtin_offsetof(struct iocb, aio_buf) == IOCB_BUF_OFFSET, "aio_buf offset");
_Static_assert(__builtin_offsetof(struct iocb, aio_nbytes) == IOCB_NBYTES_OFFSET, "aio_nbytes offset");

#define CAPTURE_MAGIC 0x41494f43u /* "COIA" little-endian: a capture follows */
#define CAPTURE_VERSION 3

/* common fields (8), __syscall_nr (4, then 4 of padding), ret (8): what every sys_exit_* format says here */
#define CAPTURE_EXIT_RAW_SIZE 24
#define CAPTURE_EXIT_NR_OFFSET 8
#define CAPTURE_EXIT_RET_OFFSET 16

#define CAPTURE_MAX_ITEMS 256   /* iocbs or io_events per call; max_iocbs_per_call is capped to it */
#define CAPTURE_MAX_BYTES 32760 /* of one whole record: what is not captured within it is "not read" */

#define CAPTURE_F_NO_ARGS 0x1 /* the enter's arguments were not kept: nothing of the call could be captured */
#define CAPTURE_F_BOUNDED 0x2 /* CAPTURE_MAX_BYTES (or the item bound) stopped the capture before the end */
#define CAPTURE_F_ENTER 0x4   /* the enter's time, CPU and arguments are in the header: it wrote no record */
/* A call begun before the program was attached: no enter, but its arguments, read at the exit from the
 * registers the thread entered the kernel with, are in the header, and its memory was captured with them. */
#define CAPTURE_F_ARGS_AT_EXIT 0x8
/* The context's AIO ring was looked at: after the call's own segments, a segment of the ring's header at the
 * context's address (struct aio_ring, AIO_RING_HEADER bytes), then the completions reaped from it since the
 * last look (but those this io_getevents returned itself), in ring order (one or two segments: the ring
 * wraps).  What a program that reaps its completions from the ring itself never passes through io_getevents. */
#define CAPTURE_F_RING 0x10
/* An io_destroy's enter, written only to carry the ring's last completions (the call unmaps the ring): not an
 * enter to pair with its exit. */
#define CAPTURE_F_RING_ONLY 0x20
/* io_getevents has reaped from that ring: a completion gone from it may be in such a call's result. */
#define CAPTURE_F_RING_BY_CALL 0x40

#define AIO_RING_MAGIC 0xa10a10a1u
#define AIO_RING_HEADER 32u     /* struct aio_ring before its events: id, nr, head, tail, magic, 3 more */
#define CAPTURE_RING_MAX 128u   /* completions taken from one ring at one look; the rest at the next */
#define CAPTURE_MAX_RINGS 4096  /* contexts whose last look is remembered */

struct capture_header {
        capture_u32 magic;
        capture_u16 version;
        capture_u16 flags;
        capture_u32 n_segments;
        capture_u32 size; /* of the record from the header on */
        char comm[16];    /* the thread's name at the call: right even for a thread gone before it is read */
        capture_u32 n_files;
        capture_u32 files_off; /* from the end of the header */
        /* CAPTURE_F_ENTER: the sys_enter, kept by the program instead of written (half the records) */
        capture_u32 enter_cpu;
        capture_u32 reserved;
        capture_u64 enter_time; /* CLOCK_MONOTONIC ns, the clock of the rings' samples */
        capture_u64 args[6];
};

/* The open file an iocb's fd named during the call, as /proc/PID/fdinfo shows it (mnt_id, ino): what tells a
 * path looked up afterwards from one of a file since closed and replaced under the same fd. */
struct capture_file {
        capture_u32 fd;
        capture_u32 mnt_id; /* 0: not known (no such fd, or the program could not read it) */
        capture_u64 ino;
};

/* A file's path as the kernel holds it (its dentries and mounts, up to the daemon's root), written once per
 * file identity before the first record that names the file: an exit record of io_submit (its tracepoint id)
 * whose capture is this instead of a struct capture_header, then len bytes of path (no NUL). */
#define CAPTURE_PATH_MAGIC 0x48544150u /* "PATH" little-endian */
#define CAPTURE_PATH_MAX 4096
struct capture_path {
        capture_u32 magic;
        capture_u32 len;
        capture_u32 mnt_id;
        capture_u32 reserved;
        capture_u64 ino;
};

/* Past the iocbs (io_submit) or io_events (io_getevents) a call's record holds (max_iocbs_per_call, at most
 * CAPTURE_MAX_ITEMS), the rest in records of their own, after it, CAPTURE_MORE_ITEMS a record: so that a program cannot hide its requests, or
 * the files they use, by batching.  An exit record of io_submit (its tracepoint id) whose capture is this instead
 * of a struct capture_header, then n items: struct capture_more_iocb each, or the io_events as they are. */
#define CAPTURE_MORE_MAGIC 0x45524f4du /* "MORE" little-endian */
#define CAPTURE_MORE_ITEMS 256
#define CAPTURE_MORE_IOCBS 1
#define CAPTURE_MORE_EVENTS 2
struct capture_more {
        capture_u32 magic;
        capture_u16 kind;     /* CAPTURE_MORE_IOCBS or CAPTURE_MORE_EVENTS */
        capture_u16 syscall;  /* enum aio_syscall: the call they are of */
        capture_u32 first;    /* the index of the first item in the call's array */
        capture_u32 n;
        capture_u64 ctx;        /* the call's AIO context */
        capture_u64 enter_time; /* the call's enter (CLOCK_MONOTONIC ns), 0 if not known */
};
struct capture_more_iocb {
        capture_u64 ptr;   /* where the iocb is */
        capture_u32 valid; /* bytes of it that could be read: 0 or IOCB_SIZE */
        capture_u32 reserved;
        capture_u8 iocb[IOCB_SIZE];
        struct capture_file file; /* what its fd named during the call (mnt_id 0: not known) */
};

/* The process a thread belongs to, as the kernel knows it at the thread's first record (written just before
 * it): what names the process after it is gone, or once its pid is another's (a short-lived process in a pid
 * namespace of its own, a pid reused at once).  An exit record of io_submit (its tracepoint id) whose capture is
 * this instead of a struct capture_header, then cgroup_len bytes of its cgroup v2 path (no NUL). */
#define CAPTURE_IDENTITY_MAGIC 0x544e4449u /* "IDNT" little-endian */
struct capture_identity {
        capture_u32 magic;
        capture_u32 pid;        /* the process, as the daemon's pid namespace sees it */
        capture_u32 ns_pid;     /* its pid in its own (innermost) pid namespace */
        capture_u32 cgroup_len; /* 0: not known (outside the daemon's cgroup root, or too long) */
        capture_u64 start_time; /* of the process, CLOCK_BOOTTIME ns: which process of that pid it is */
        capture_u64 cgroup_id;  /* its cgroup v2 id */
        char comm[16];          /* the thread's name */
};

/* An iocb's file as the exit found it, and where the kernel said what it used itself (a direct read or
 * write through iomap): the same, or another file, offset or length, then in file, kernel_pos and
 * kernel_count (another thread wrote the iocb during the call). */
#define CAPTURE_IOCB_KERNEL_SAME 0x1
#define CAPTURE_IOCB_KERNEL_OTHER 0x2
/* without the kernel's view: the iocb's fd named another file at the call's enter than at its exit */
#define CAPTURE_IOCB_FD_MOVED 0x4
struct capture_iocb_file {
        struct capture_file file;
        capture_u32 flags;
        capture_u32 reserved;
        capture_u64 kernel_pos;
        capture_u64 kernel_count;
};

struct capture_segment {
        capture_u64 addr;
        capture_u32 len;   /* bytes that follow, before the padding */
        capture_u32 valid; /* how many of them, from the start, could be read; the rest faulted */
};

/* io_uring makes no system call per request: the capture follows io_uring:io_uring_submit_req and
 * io_uring_complete of the rings of watched processes, and writes the tracepoint's record (its fixed fields,
 * CAPTURE_URING_RAW_SIZE bytes) followed by struct capture_uring. */
#define CAPTURE_URING_MAGIC 0x4752554fu /* "OURG" little-endian */
#define CAPTURE_URING_RAW_SIZE 56
#define CAPTURE_URING_F_DETAILS 0x1    /* submit: fd, off, len, addr and rw_flags were read from the request */
#define CAPTURE_URING_F_FIXED_FILE 0x2 /* submit: fd is an index in the ring's registered files */
#define CAPTURE_URING_F_SQ_THREAD 0x4  /* submit: by the ring's SQPOLL thread, on behalf of its process */
/* submit: written at io_uring_req_failed (the request failed before it could be submitted, its details the
 * SQE's, its fd not read); its completion follows */
#define CAPTURE_URING_F_FAILED 0x8
/* submit: io_uring is off (capture_watch.uring): only this, the first request of the process, is written,
 * for the daemon to say once that its requests are not traced */
#define CAPTURE_URING_F_NOTE 0x10
/* submit: bytes is what a vectored op will move, the sum of its iovecs, from the kernel's own iterator of
 * them (imported by the prep) */
#define CAPTURE_URING_F_BYTES 0x20
/* complete: file is the one the kernel used (the request's, taken at issue) */
#define CAPTURE_URING_F_FILE 0x40
/* The records of io_uring_cqe_overflow (a completion the CQ ring had no room for) are the tracepoint's fixed
 * fields, CAPTURE_URING_OVERFLOW_RAW_SIZE bytes, then struct capture_uring. */
#define CAPTURE_URING_OVERFLOW_RAW_SIZE 40
/* A request handed to an io-wq worker (io_uring_queue_async_work) or armed for poll (io_uring_poll_arm): the
 * tracepoint's fixed fields, as its format lays them out, then struct capture_uring. */
#define CAPTURE_URING_ASYNC_RAW_SIZE 64
#define CAPTURE_URING_POLL_RAW_SIZE 48
#define CAPTURE_MAX_URING_RINGS 4096   /* rings whose owner is remembered for their completions */

struct capture_uring {
        capture_u32 magic;
        capture_u32 pid; /* the process that owns the ring (its SQPOLL thread and workers are its threads) */
        capture_u32 tid;
        capture_u32 flags;
        capture_u32 fd;
        capture_u32 len;
        capture_u64 off;
        capture_u64 addr;
        capture_u32 rw_flags;
        capture_u32 bytes;        /* with CAPTURE_URING_F_BYTES */
        struct capture_file file; /* what fd named at submit (not for a fixed file) */
        char comm[16];            /* the submitting thread's, or for an SQPOLL thread its process's */
};

/* The program's counters, per CPU, in this order. */
enum capture_counter {
        CAPTURE_CNT_RECORDS,       /* records the program tried to write */
        CAPTURE_CNT_OUTPUT_FAILED, /* of them, refused by the ring (full): the ring reports them as lost too */
        CAPTURE_CNT_ARGS_FULL,     /* enters whose arguments could not be kept for the exit (no storage) */
        CAPTURE_CNT_NO_SCRATCH,    /* of CAPTURE_CNT_RECORDS, not written: no scratch buffer for the CPU */
        CAPTURE_CNT_FOLLOW_FULL,   /* new processes of a followed one not followed: the map of ids was full */
        CAPTURE_CNT_SQE_UNREADABLE, /* io_uring requests failed at submit, not written: their SQE was unreadable */
        _CAPTURE_CNT_MAX,
};

/* What the watch list may hold with the capture (the config refuses more). */
#define CAPTURE_MAX_NAMES 1024 /* exact command names, looked up in a hash */
#define CAPTURE_MAX_GLOBS 64   /* globs, tried in turn once per thread and name */
#define CAPTURE_MAX_IDS 4096   /* pids, and the processes followed as children */
#define CAPTURE_MAX_KEYS 1024  /* uids, executables, units, cgroups */
#define CAPTURE_GLOB_SIZE 64
#define CAPTURE_COMM_SIZE 16
#define CAPTURE_UNIT_SIZE 128    /* a unit's name, NUL-padded: the name of its cgroup */
#define CAPTURE_EXE_NAME_SIZE 64 /* an executable's file name, NUL-padded */
#define CAPTURE_CGROUP_DEPTH 32  /* cgroup levels looked at, from the thread's own up */

/* Each watch entry is a bit of a mask; every key of the program's maps says which entries it satisfies.  An
 * entry of one key alone shares its class's bit with the others of that key alone (their OR is the map's
 * lookup); an entry that combines keys, or follows children, has a bit of its own.  A thread is watched when
 * some entry's bit survives every class it needs. */
enum capture_class {
        CAPTURE_CLASS_COMM,
        CAPTURE_CLASS_ID,
        CAPTURE_CLASS_UID,
        CAPTURE_CLASS_EXE,
        CAPTURE_CLASS_UNIT,
        CAPTURE_CLASS_CGROUP,
        _CAPTURE_CLASS_MAX,
};
#define CAPTURE_MAX_COMBINED (64 - _CAPTURE_CLASS_MAX) /* entries with a bit of their own */

/* Every map's key begins with the set it belongs to: a reload fills the other set, switches to it in the
 * header, then empties the old one, so what both lists watch is watched throughout. */
struct capture_comm {
        capture_u32 set;
        char comm[CAPTURE_COMM_SIZE]; /* NUL-padded */
};

struct capture_id_key {
        capture_u32 set;
        capture_u32 id; /* a pid, or a tid */
};

struct capture_id {
        capture_u64 mask;
        capture_u64 follow;   /* the entries whose children are followed: a new process of it gets these */
        capture_u32 followed; /* added by a fork: removed at the process's end */
        capture_u32 root;     /* followed: the watched pid it descends from */
};

struct capture_uid_key {
        capture_u32 set;
        capture_u32 uid;
};

/* An executable by its identity: the file, and (to follow a file replaced by a new one under the same name)
 * the directory and name it was executed under.  dev is the kernel's encoding, major << 20 | minor. */
struct capture_exe_key {
        capture_u32 set;
        capture_u32 dev;
        capture_u64 ino;
};

struct capture_exe_name_key {
        capture_u32 set;
        capture_u32 dev;
        capture_u64 dir_ino;
        char name[CAPTURE_EXE_NAME_SIZE];
};

struct capture_unit_key {
        capture_u32 set;
        capture_u32 reserved;
        char name[CAPTURE_UNIT_SIZE];
};

struct capture_cgroup_key {
        capture_u32 set;
        capture_u32 reserved;
        capture_u64 id; /* the cgroup v2 id: its directory's inode number */
};

struct capture_glob {
        char pat[CAPTURE_GLOB_SIZE];
        capture_u64 mask;
};

/* What the program selects, set by the daemon; bumping generation forgets the per-thread verdicts. */
struct capture_watch {
        capture_u32 all; /* every process */
        capture_u32 n_globs;
        capture_u32 generation;
        capture_u32 set; /* 0 or 1: the maps' keys in force */
        capture_u32 n_names;
        capture_u32 uring; /* io_uring's requests are traced; 0: a watched process's are only noted, once */
        capture_u32 uring_calls; /* io_uring_setup, _enter and _register are written too */
        capture_u32 all_summed;  /* with all: summed in the kernel (below) */
        capture_u64 bits;                      /* every entry's */
        capture_u64 need[_CAPTURE_CLASS_MAX];  /* the entries with a key of the class */
        capture_u64 follow;                    /* the entries that follow children */
        capture_u64 summed; /* the entries only summarized: a thread no other entry watches is summed in the kernel */
};

/* Summaries made in the kernel (bpf/summaries.h), for the threads only summarized: no record per call or request,
 * but what one process did in one interval, counted as the daemon would count the records (lib/request.c), in
 * one of two maps (proc_sums_0 and _1, by pid: the daemon flips sum_gen at each interval and takes the other),
 * and its requests in flight and their latencies in the same histogram layout as the daemon's. */
#define CAPTURE_SUM_OPS (AIO_OPCODE_MAX + 2) /* each AIO opcode of the table at its own index, and one for the rest */
#define CAPTURE_MAX_SUM_PROCS 8192           /* processes summed at once (an interval's) */
#define CAPTURE_MAX_SUM_INFLIGHT 65536       /* requests in flight of summed processes */
struct capture_sum {
        capture_u64 submitted[CAPTURE_SUM_OPS];
        capture_u64 completed[CAPTURE_SUM_OPS];
        capture_u64 bytes_read;
        capture_u64 bytes_written;
        capture_u64 errors;
        capture_u64 cancelled;
        capture_u64 abandoned;
        capture_u64 stale;
        capture_u64 unmatched;
        capture_u64 unknown;
        capture_u64 reaped_in_user_space;
        capture_u64 submitted_io_uring;
        capture_u64 cq_overflows;
        capture_u64 untracked; /* submitted, but not tracked: the map of those in flight was full */
        capture_u64 punted[CAPTURE_SUM_OPS]; /* io_uring: requests handed to an io-wq worker, by op */
        capture_u64 polled;                   /* io_uring: requests armed for poll */
        capture_u64 inflight_change;   /* in flight at the interval's end less at its start (two's complement) */
        capture_u64 inflight_rise_max; /* the most above the start at once */
        capture_u64 lat_count;
        capture_u64 lat_sum;
        capture_u64 lat_min;
        capture_u64 lat_max;
        capture_u32 buckets[HIST_BUCKETS];
};

/* A summed request in flight (sum_inflight): AIO's by (process, context, iocb), io_uring's by (ring, request).
 * The daemon looks at them for those stuck. */
#define SUM_AIO 0
#define SUM_URING 1
struct sum_key {
        capture_u32 tgid; /* the kernel's; 0 for io_uring (any task completes) */
        capture_u32 kind;
        capture_u64 ctx;
        capture_u64 id;
};

#define SUM_CANCEL_REQUESTED 0x1 /* io_cancel began cancelling it */
#define SUM_RING_SEEN 0x2        /* its completion was seen in its AIO ring, while its process reaps by call too */
#define SUM_CQE_SKIP 0x4         /* io_uring, IOSQE_CQE_SKIP_SUCCESS: no completion comes if it succeeds */
#define SUM_BY_DATA 0x8          /* io_uring: in sum_by_data too */
struct sum_req {
        capture_u64 submit_time;
        capture_u64 data;     /* aio_data, or user_data */
        capture_u32 tgid;     /* its process, the kernel's pid for it */
        capture_u32 seen_pid; /* and as the daemon sees it */
        capture_u8 op;        /* its index among CAPTURE_SUM_OPS */
        capture_u8 flags;
        capture_u16 opcode;   /* the iocb's, or the SQE's */
        capture_s32 ring_res; /* SUM_RING_SEEN: the result seen */
};

/* A process's summed counts are by its pid as the daemon sees it and its start (CLOCK_BOOTTIME ns, as its
 * identity says it): a pid reused at once is another's key. */
struct capture_sum_key {
        capture_u32 pid;
        capture_u32 reserved;
        capture_u64 start_time;
};

