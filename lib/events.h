/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syscalls.h"
#include "tracepoints.h"
#include "util.h"


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
        enum tracepoint_family family; /* the tracepoints' table's: which of the engine's handlers takes it */
        enum aio_syscall syscall;
        unsigned n_args;
        /* enter: the arguments; exit: args[0] is ret; fork: parent, child; process exit: pid, group_dead;
         * exec: pid, old_pid; io_uring submit: ctx, req, user_data, opcode, flags, sq_thread; complete: ctx,
         * req, user_data, res, cflags; failed: ctx, req, user_data, opcode, off, len; overflow: ctx, user_data,
         * res, cflags, ocqe */
        struct field_ref args[AIO_ARGS_MAX];
        unsigned record_size;                /* where the format's last field ends */
};

/* each syscall's enter and exit, and one of each other kind the tracepoints' table has */
#define EVENTS_MAX (2 * _AIO_SYSCALL_MAX + _EVENT_KIND_MAX)

struct event_table {
        struct tep_handle *tep;
        struct field_ref common_type;
        struct event_desc events[EVENTS_MAX];
        size_t n_events;
        int min_id;
        int max_id;
        int8_t by_id[256]; /* tp_id - min_id -> index in events[], -1 none */
};


/* Parse the formats below tracefs_dir/events (tracefs itself, or a fixture tree laid out the same way): the
 * syscalls' tracepoints, sched_process_exit (unless the kernel's has no group_dead), and what `extra` asks for
 * (EVENTS_*).  On failure, a human explanation goes to error (may be NULL). */
int event_table_load(const char *tracefs_dir, unsigned extra, struct event_table **ret, char *error, size_t error_size);
void event_table_free(struct event_table *t);

/* The event a raw tracepoint payload belongs to, by its common_type; NULL if none of ours. */
/* A record's field, by its index in args[] (the tracepoints' table names them): 0 where the record is short. */
static inline uint64_t event_field(const struct event_desc *d, const uint8_t *raw, size_t raw_size, unsigned field) {
        return load_field(raw, raw_size, d->args[field].offset, d->args[field].size);
}

const struct event_desc *event_table_lookup(const struct event_table *t, const uint8_t *raw, size_t raw_size);
