/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syscalls.h"


enum event_kind {
        EVENT_SYS_ENTER,
        EVENT_SYS_EXIT,
        EVENT_FORK, /* sched:sched_process_fork, to follow the threads of watched pids */
        EVENT_PROC_EXIT, /* sched:sched_process_exit of a whole process (group_dead): its requests end */
        EVENT_PROC_EXEC, /* sched:sched_process_exec: its AIO contexts go with its old memory */
        EVENT_URING_SUBMIT,   /* io_uring:io_uring_submit_req: a request of a ring, with the capture's details */
        EVENT_URING_COMPLETE, /* io_uring:io_uring_complete: its completion */
        EVENT_URING_FAILED,   /* io_uring:io_uring_req_failed: the capture writes it as a submit */
        EVENT_URING_OVERFLOW, /* io_uring:io_uring_cqe_overflow: a completion the CQ ring had no room for */
};

struct field_ref {
        unsigned offset;
        unsigned size;
};

/* One tracepoint, its fields resolved once from the format. */
struct event_desc {
        char system[16];
        char name[40];
        int tp_id;
        enum event_kind kind;
        enum aio_syscall syscall;
        unsigned n_args;
        /* enter: the arguments; exit: args[0] is ret; fork: parent, child; process exit: pid, group_dead;
         * exec: pid, old_pid; io_uring submit: ctx, req, user_data, opcode, flags, sq_thread; complete: ctx,
         * req, user_data, res, cflags; failed: ctx, req, user_data, opcode, off, len; overflow: ctx, user_data,
         * res, cflags, ocqe */
        struct field_ref args[AIO_ARGS_MAX];
        unsigned record_size;                /* where the format's last field ends */
};

#define EVENTS_MAX (2 * _AIO_SYSCALL_MAX + 7)

struct event_table {
        struct tep_handle *tep;
        struct field_ref common_type;
        struct event_desc events[EVENTS_MAX];
        size_t n_events;
        int min_id;
        int max_id;
        int8_t by_id[256]; /* tp_id - min_id -> index in events[], -1 none */
};

enum {
        EVENTS_FORK = 1 << 0, /* sched_process_fork: following new threads with the kernel's filter */
        EVENTS_EXEC = 1 << 1, /* sched_process_exec: needs the capture to select watched processes */
        EVENTS_URING = 1 << 2, /* io_uring's requests: needs the capture (skipped where the kernel has none) */
};

/* Parse the formats below tracefs_dir/events (tracefs itself, or a fixture tree laid out the same way): the
 * syscalls' tracepoints, sched_process_exit (unless the kernel's has no group_dead), and what `extra` asks for
 * (EVENTS_*).  On failure, a human explanation goes to error (may be NULL). */
int event_table_load(const char *tracefs_dir, unsigned extra, struct event_table **ret, char *error, size_t error_size);
void event_table_free(struct event_table *t);

/* The event a raw tracepoint payload belongs to, by its common_type; NULL if none of ours. */
const struct event_desc *event_table_lookup(const struct event_table *t, const uint8_t *raw, size_t raw_size);
