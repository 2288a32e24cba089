/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tracepoints.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "capture.h"
#include "events.h"
#include "util.h"

#define F(name, offset, size) { name, offset, size }

static const struct tracepoint tracepoints[_EVENT_KIND_MAX] = {
        /* the syscalls' enter: 8-byte arguments from offset 16, named in lib/syscalls.c */
        [EVENT_SYS_ENTER] = { .system = "syscalls", .name = "sys_enter_%s", .asked = EVENTS_ALWAYS,
                              .family = TP_FAMILY_SYSCALL, .program = "enter_%s" },
        [EVENT_SYS_EXIT] = { .system = "syscalls", .name = "sys_exit_%s", .asked = EVENTS_ALWAYS,
                             .family = TP_FAMILY_SYSCALL,
                             .fields = { [EXIT_RET] = F("ret", CAPTURE_EXIT_RET_OFFSET, 8) },
                             .capture_size = CAPTURE_EXIT_RAW_SIZE,
                             .program = "exit_%s", .program_probed = "exit_%s_probed" },
        [EVENT_FORK] = { .system = "sched", .name = "sched_process_fork", .asked = EVENTS_FORK,
                         .family = TP_FAMILY_FORK,
                         .fields = { [FORK_PARENT_PID] = F("parent_pid", 0, 0),
                                     [FORK_CHILD_PID] = F("child_pid", 0, 0) },
                         .program = "proc_fork", .program_when = PROGRAM_ALWAYS },
        [EVENT_PROC_EXIT] = { .system = "sched", .name = "sched_process_exit", .asked = EVENTS_ALWAYS,
                              .family = TP_FAMILY_PROCESS,
                              .fields = { [PROC_EXIT_PID] = F("pid", 24, 4),
                                          [PROC_EXIT_GROUP_DEAD] = F("group_dead", 32, 1) },
                              .capture_size = 33, .program = "proc_exit" },
        /* the filename before them is the kernel's alone (__data_loc): the capture writes none */
        [EVENT_PROC_EXEC] = { .system = "sched", .name = "sched_process_exec", .asked = EVENTS_EXEC,
                              .family = TP_FAMILY_PROCESS,
                              .fields = { [PROC_EXEC_PID] = F("pid", 12, 4),
                                          [PROC_EXEC_OLD_PID] = F("old_pid", 16, 4) },
                              .program = "proc_exec" },
        [EVENT_URING_SUBMIT] = { .system = "io_uring", .name = "io_uring_submit_req", .asked = EVENTS_URING,
                                 .family = TP_FAMILY_URING,
                                 .fields = { [URING_SUBMIT_CTX] = F("ctx", 8, 8),
                                             [URING_SUBMIT_REQ] = F("req", 16, 8),
                                             [URING_SUBMIT_USER_DATA] = F("user_data", 24, 8),
                                             [URING_SUBMIT_OPCODE] = F("opcode", 32, 1),
                                             [URING_SUBMIT_FLAGS] = F("flags", 40, 8),
                                             [URING_SUBMIT_SQ_THREAD] = F("sq_thread", 48, 1) },
                                 .capture_size = CAPTURE_URING_RAW_SIZE,
                                 .program = "uring_submit", .program_probed = "uring_submit_probed" },
        [EVENT_URING_COMPLETE] = { .system = "io_uring", .name = "io_uring_complete", .asked = EVENTS_URING,
                                   .family = TP_FAMILY_URING,
                                   .fields = { [URING_COMPLETE_CTX] = F("ctx", 8, 8),
                                               [URING_COMPLETE_REQ] = F("req", 16, 8),
                                               [URING_COMPLETE_USER_DATA] = F("user_data", 24, 8),
                                               [URING_COMPLETE_RES] = F("res", 32, 4),
                                               [URING_COMPLETE_CFLAGS] = F("cflags", 36, 4) },
                                   .capture_size = CAPTURE_URING_RAW_SIZE,
                                   .program = "uring_complete", .program_probed = "uring_complete_probed" },
        /* its program takes the tracepoint's arguments (tp_btf) and writes a submit: no layout of its own */
        [EVENT_URING_FAILED] = { .system = "io_uring", .name = "io_uring_req_failed", .asked = EVENTS_URING,
                                 .family = TP_FAMILY_URING,
                                 .fields = { [URING_FAILED_CTX] = F("ctx", 0, 0), [URING_FAILED_REQ] = F("req", 0, 0),
                                             [URING_FAILED_USER_DATA] = F("user_data", 0, 0),
                                             [URING_FAILED_OPCODE] = F("opcode", 0, 0),
                                             [URING_FAILED_OFF] = F("off", 0, 0), [URING_FAILED_LEN] = F("len", 0, 0) },
                                 .program = "uring_failed" },
        [EVENT_URING_OVERFLOW] = { .system = "io_uring", .name = "io_uring_cqe_overflow", .asked = EVENTS_URING,
                                   .family = TP_FAMILY_URING,
                                   .fields = { [URING_OVERFLOW_CTX] = F("ctx", 8, 8),
                                               [URING_OVERFLOW_USER_DATA] = F("user_data", 16, 8),
                                               [URING_OVERFLOW_RES] = F("res", 24, 4),
                                               [URING_OVERFLOW_CFLAGS] = F("cflags", 28, 4),
                                               [URING_OVERFLOW_OCQE] = F("ocqe", 32, 8) },
                                   .capture_size = CAPTURE_URING_OVERFLOW_RAW_SIZE, .program = "uring_overflow" },
        [EVENT_URING_ASYNC] = { .system = "io_uring", .name = "io_uring_queue_async_work", .asked = EVENTS_URING,
                                .family = TP_FAMILY_URING,
                                .fields = { [URING_ASYNC_CTX] = F("ctx", 8, 8), [URING_ASYNC_REQ] = F("req", 16, 8),
                                            [URING_ASYNC_USER_DATA] = F("user_data", 24, 8),
                                            [URING_ASYNC_OPCODE] = F("opcode", 32, 1),
                                            [URING_ASYNC_FLAGS] = F("flags", 40, 8),
                                            [URING_ASYNC_RW] = F("rw", 56, 4) },
                                .capture_size = CAPTURE_URING_ASYNC_RAW_SIZE, .program = "uring_punted" },
        [EVENT_URING_POLL_ARM] = { .system = "io_uring", .name = "io_uring_poll_arm", .asked = EVENTS_URING,
                                   .family = TP_FAMILY_URING,
                                   .fields = { [URING_POLL_CTX] = F("ctx", 8, 8), [URING_POLL_REQ] = F("req", 16, 8),
                                               [URING_POLL_USER_DATA] = F("user_data", 24, 8),
                                               [URING_POLL_OPCODE] = F("opcode", 32, 1),
                                               [URING_POLL_MASK] = F("mask", 36, 4),
                                               [URING_POLL_EVENTS] = F("events", 40, 4) },
                                   .capture_size = CAPTURE_URING_POLL_RAW_SIZE, .program = "uring_poll_armed" },
        [EVENT_EXIT_GROUP] = { .system = "syscalls", .name = "sys_enter_exit_group", .program = "proc_exit_group",
                               .program_when = PROGRAM_ALWAYS },
        [EVENT_CGROUP_MKDIR] = { .system = "cgroup", .name = "cgroup_mkdir", .program = "cgroup_made",
                                 .program_when = PROGRAM_ALWAYS },
        [EVENT_DIO_BEGIN] = { .system = "iomap", .name = "iomap_dio_rw_begin", .program = "aio_dio_begin",
                              .program_when = PROGRAM_IF_KERNEL },
        [EVENT_URING_CREATE] = { .system = "io_uring", .name = "io_uring_create", .program = "uring_created",
                                 .program_when = PROGRAM_IF_KERNEL },
};

const struct tracepoint *tracepoint_of(enum event_kind kind) {
        return (unsigned) kind < _EVENT_KIND_MAX ? &tracepoints[kind] : NULL;
}

void tracepoint_expand(const char *pattern, const char *syscall, char *buf, size_t size) {
        const char *at = strstr(pattern, "%s");
        if (!at)
                snprintf(buf, size, "%s", pattern);
        else
                snprintf(buf, size, "%.*s%s%s", (int) (at - pattern), pattern, syscall ? syscall : "", at + 2);
}

void tracepoint_program(enum event_kind kind, const char *syscall, bool probed,
                        bool (*has_program)(const char *name, void *userdata), void *userdata, char *buf, size_t size) {
        const struct tracepoint *tp = tracepoint_of(kind);
        buf[0] = 0;
        if (!tp || !tp->program)
                return;
        if (probed && tp->program_probed) {
                tracepoint_expand(tp->program_probed, syscall, buf, size);
                if (has_program(buf, userdata))
                        return;
        }
        tracepoint_expand(tp->program, syscall, buf, size);
}

int tracepoint_check_layout(const struct event_desc *d, const struct field_ref *common_type, char *error,
                            size_t error_size) {
        const struct tracepoint *tp = tracepoint_of(d->kind);
        if (!tp)
                return -EINVAL;
        /* every record the capture writes begins with the common fields as the kernel's do */
        if (common_type->offset != 0 || common_type->size != 2) {
                snprintf(error, error_size, "the format of %s:%s has common_type at %u (%u bytes), not at 0 (2 bytes) "
                         "as the in-kernel capture writes it", d->system, d->name, common_type->offset,
                         common_type->size);
                return -EPROTO;
        }
        if (d->kind == EVENT_SYS_ENTER) {
                bool ok = d->record_size == 16 + 8 * d->n_args;
                for (unsigned i = 0; i < d->n_args; i++)
                        ok = ok && d->args[i].offset == 16 + 8 * i && d->args[i].size == 8;
                if (!ok) {
                        snprintf(error, error_size, "the format of %s:%s is not the layout the in-kernel capture "
                                 "writes (8-byte arguments from offset 16)", d->system, d->name);
                        return -EPROTO;
                }
                return 0;
        }
        if (tp->capture_size && d->record_size != tp->capture_size) {
                snprintf(error, error_size, "the format of %s:%s is %u bytes, not the %u the in-kernel capture writes",
                         d->system, d->name, d->record_size, tp->capture_size);
                return -EPROTO;
        }
        for (unsigned i = 0; i < d->n_args; i++) {
                const struct tracepoint_field *f = &tp->fields[i];
                if (f->size && (d->args[i].offset != f->offset || d->args[i].size != f->size)) {
                        snprintf(error, error_size, "the format of %s:%s has %s at %u (%u bytes), where the in-kernel "
                                 "capture writes it at %u (%u bytes)", d->system, d->name, f->name, d->args[i].offset,
                                 d->args[i].size, f->offset, f->size);
                        return -EPROTO;
                }
        }
        return 0;
}
