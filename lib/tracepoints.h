/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The one table of the kernel's tracepoints the daemon uses: for each, where tracefs has it, the records the
 * engine gets of it (their kind, and the fields read, each by name), when it is asked for, the layout the
 * in-kernel capture writes in its stead, and the capture's program for it with its twin for kernels without
 * bpf_rdonly_cast.  The loader (lib/events.c), the capture's loader (daemon/bpf_capture.c) and the engine's
 * dispatch (lib/engine.c) read it.  The syscalls' own rows are templates over lib/syscalls.c's table. */

#include <stdbool.h>
#include <stddef.h>

#include "capture.h" /* enum event_kind */


/* When a tracepoint's records are asked for (event_table_load's `extra`) */
enum {
        EVENTS_FORK = 1 << 0,  /* sched_process_fork: following new threads with the kernel's filter */
        EVENTS_EXEC = 1 << 1,  /* sched_process_exec: needs the capture to select watched processes */
        EVENTS_URING = 1 << 2, /* io_uring's requests: needs the capture (skipped where the kernel has none) */
        EVENTS_ALWAYS = 1 << 3, /* the syscalls'; sched_process_exit where the kernel has it */
};

/* When the capture's program for a tracepoint is loaded */
enum program_when {
        PROGRAM_ASKED,    /* with its records: the event is in the event table */
        PROGRAM_ALWAYS,   /* with the capture, whatever is asked */
        PROGRAM_IF_KERNEL, /* with the capture, where the kernel's BTF has the tracepoint (a tp_btf program) */
};

/* The fields read of each record, by name: their index in struct event_desc's args[]. */
enum { EXIT_RET };
enum { FORK_PARENT_PID, FORK_CHILD_PID };
enum { PROC_EXIT_PID, PROC_EXIT_GROUP_DEAD };
enum { PROC_EXEC_PID, PROC_EXEC_OLD_PID };
enum { URING_SUBMIT_CTX, URING_SUBMIT_REQ, URING_SUBMIT_USER_DATA, URING_SUBMIT_OPCODE, URING_SUBMIT_FLAGS,
       URING_SUBMIT_SQ_THREAD };
enum { URING_COMPLETE_CTX, URING_COMPLETE_REQ, URING_COMPLETE_USER_DATA, URING_COMPLETE_RES, URING_COMPLETE_CFLAGS };
enum { URING_FAILED_CTX, URING_FAILED_REQ, URING_FAILED_USER_DATA, URING_FAILED_OPCODE, URING_FAILED_OFF,
       URING_FAILED_LEN };
enum { URING_OVERFLOW_CTX, URING_OVERFLOW_USER_DATA, URING_OVERFLOW_RES, URING_OVERFLOW_CFLAGS, URING_OVERFLOW_OCQE };
enum { URING_ASYNC_CTX, URING_ASYNC_REQ, URING_ASYNC_USER_DATA, URING_ASYNC_OPCODE, URING_ASYNC_FLAGS, URING_ASYNC_RW };
enum { URING_POLL_CTX, URING_POLL_REQ, URING_POLL_USER_DATA, URING_POLL_OPCODE, URING_POLL_MASK, URING_POLL_EVENTS };

#define TRACEPOINT_FIELDS_MAX 6

struct tracepoint_field {
        const char *name;
        /* where the capture writes it, when it writes the record in the tracepoint's stead: the format must say
         * the same (size 0: not written by the capture, or not checked) */
        unsigned char offset;
        unsigned char size;
};

/* How the engine handles the records: one handler per family */
enum tracepoint_family {
        TP_FAMILY_NONE,    /* no records reach the engine */
        TP_FAMILY_SYSCALL, /* a call's enter or exit: paired per thread, handed to its syscall's handler */
        TP_FAMILY_FORK,    /* a new thread or process: the selection follows it */
        TP_FAMILY_PROCESS, /* a process's end or exec: its requests end */
        TP_FAMILY_URING,   /* an io_uring request's submit, completion or overflow */
};

struct tracepoint {
        const char *system; /* tracefs: events/SYSTEM/NAME; the syscalls' rows have "%s" for the syscall */
        const char *name;
        unsigned asked;     /* EVENTS_*: when its records are asked for; 0: never (the capture's alone) */
        enum tracepoint_family family;
        struct tracepoint_field fields[TRACEPOINT_FIELDS_MAX]; /* the syscalls' enter: from lib/syscalls.c */
        unsigned capture_size; /* the record the capture writes in its stead: the format's size; 0: not checked */
        const char *program;   /* the capture's program for it ("%s": the syscall); NULL: none */
        const char *program_probed; /* its twin where the kernel has no bpf_rdonly_cast, where the object has one */
        enum program_when program_when;
};

const struct tracepoint *tracepoint_of(enum event_kind kind);

/* A row's name or program, "%s" in it the syscall's name, into buf. */
void tracepoint_expand(const char *pattern, const char *syscall, char *buf, size_t size);

/* The capture's program for `kind` (of the syscall named `syscall`, for the syscalls' rows), into buf: its twin
 * where `probed` and has_program() says the object has one.  Empty where the kind has none. */
void tracepoint_program(enum event_kind kind, const char *syscall, bool probed,
                        bool (*has_program)(const char *name, void *userdata), void *userdata, char *buf, size_t size);

/* Whether a record of the format described by d is laid out as the capture writes it in the tracepoint's
 * stead: 0, or -EPROTO with what differs in error. */
struct event_desc;
struct field_ref;
int tracepoint_check_layout(const struct event_desc *d, const struct field_ref *common_type, char *error,
                            size_t error_size);
