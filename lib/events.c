/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "events.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <traceevent/event-parse.h>
#include <unistd.h>

#include "util.h"

static const char *const exit_args[] = { "ret", NULL };
static const char *const fork_args[] = { "parent_pid", "child_pid", NULL };
static const char *const proc_exit_args[] = { "pid", "group_dead", NULL };
static const char *const proc_exec_args[] = { "pid", "old_pid", NULL };
static const char *const uring_submit_args[] = { "ctx", "req", "user_data", "opcode", "flags", "sq_thread", NULL };
static const char *const uring_complete_args[] = { "ctx", "req", "user_data", "res", "cflags", NULL };
static const char *const uring_failed_args[] = { "ctx", "req", "user_data", "opcode", "off", "len", NULL };
static const char *const uring_overflow_args[] = { "ctx", "user_data", "res", "cflags", "ocqe", NULL };

static int read_file(const char *path, char **ret_buf, size_t *ret_len) {
        _cleanup_(closep) int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        size_t cap = 8192, len = 0;
        _cleanup_(freep) char *buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                if (len == cap) {
                        char *p = realloc(buf, cap * 2);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                        cap *= 2;
                }
                ssize_t n = read(fd, buf + len, cap - len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        *ret_buf = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

static int resolve_field(struct tep_event *ev, const char *name, bool common, struct field_ref *ret) {
        struct tep_format_field *f = common ? tep_find_common_field(ev, name) : tep_find_field(ev, name);
        if (!f)
                return -ENOENT;
        if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)
                return -EPROTO;
        *ret = (struct field_ref) { .offset = (unsigned) f->offset, .size = (unsigned) f->size };
        return 0;
}

static int load_one(struct event_table *t, const char *dir, const char *system, const char *name, enum event_kind kind,
                    enum aio_syscall syscall, char *error, size_t error_size) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, system, name);
        _cleanup_(freep) char *buf = NULL;
        size_t len = 0;
        int r = read_file(path, &buf, &len);
        if (r < 0) {
                snprintf(error, error_size, "cannot read %s: %s", path, strerror(-r));
                return r;
        }
        if (tep_parse_event(t->tep, buf, len, system) != 0) {
                snprintf(error, error_size, "cannot parse the event format in %s", path);
                return -EPROTO;
        }
        struct tep_event *ev = tep_find_event_by_name(t->tep, system, name);
        if (!ev) {
                snprintf(error, error_size, "%s: event %s:%s not found after parsing", path, system, name);
                return -EPROTO;
        }

        struct event_desc *d = &t->events[t->n_events];
        *d = (struct event_desc) { .tp_id = ev->id, .kind = kind, .syscall = syscall };
        snprintf(d->system, sizeof(d->system), "%s", system);
        snprintf(d->name, sizeof(d->name), "%s", name);

        const struct syscall_desc *sd = syscall_desc(syscall);
        const char *const *names = kind == EVENT_SYS_EXIT         ? exit_args
                                   : kind == EVENT_FORK           ? fork_args
                                   : kind == EVENT_PROC_EXIT      ? proc_exit_args
                                   : kind == EVENT_URING_SUBMIT   ? uring_submit_args
                                   : kind == EVENT_URING_COMPLETE ? uring_complete_args
                                   : kind == EVENT_URING_FAILED   ? uring_failed_args
                                   : kind == EVENT_URING_OVERFLOW ? uring_overflow_args
                                                                  : proc_exec_args;
        unsigned n = kind == EVENT_SYS_ENTER ? sd->n_args : 0;
        if (kind != EVENT_SYS_ENTER)
                while (names[n])
                        n++;
        for (; d->n_args < n; d->n_args++) {
                const char *field = kind == EVENT_SYS_ENTER ? sd->args[d->n_args].tp_field : names[d->n_args];
                r = resolve_field(ev, field, false, &d->args[d->n_args]);
                if (r < 0) {
                        snprintf(error, error_size, "%s: field '%s' %s", path, field,
                                 r == -ENOENT ? "is missing" : "has an unexpected size");
                        return r;
                }
        }
        struct field_ref common_type;
        r = resolve_field(ev, "common_type", true, &common_type);
        if (r < 0) {
                snprintf(error, error_size, "%s: no usable common_type field", path);
                return r;
        }
        if (t->n_events > 0 && memcmp(&common_type, &t->common_type, sizeof(common_type)) != 0) {
                snprintf(error, error_size, "%s: common_type differs from the other events", path);
                return -EPROTO;
        }
        t->common_type = common_type;
        /* Where the record's fields end: a capture (capture.h) may follow. */
        for (struct tep_format_field *f = ev->format.common_fields; f; f = f->next)
                d->record_size = MAX(d->record_size, (unsigned) (f->offset + f->size));
        for (struct tep_format_field *f = ev->format.fields; f; f = f->next)
                d->record_size = MAX(d->record_size, (unsigned) (f->offset + f->size));
        t->n_events++;
        return 0;
}

/* The syscalls' enter and exit events; io_uring's calls where the kernel has them. */
static int load_syscalls(struct event_table *t, const char *tracefs_dir, char *error, size_t error_size) {
        int r = 0;
        for (enum aio_syscall s = 0; s < _AIO_SYSCALL_MAX && r >= 0; s++) {
                char name[40];
                size_t before = t->n_events;
                snprintf(name, sizeof(name), "sys_enter_%s", aio_syscall_name(s));
                r = load_one(t, tracefs_dir, "syscalls", name, EVENT_SYS_ENTER, s, error, error_size);
                if (r >= 0) {
                        snprintf(name, sizeof(name), "sys_exit_%s", aio_syscall_name(s));
                        r = load_one(t, tracefs_dir, "syscalls", name, EVENT_SYS_EXIT, s, error, error_size);
                }
                if (r == -ENOENT && s >= AIO_URING_SYSCALL_FIRST) {
                        t->n_events = before;
                        r = 0;
                }
        }
        return r;
}

/* io_uring's requests: on a kernel without io_uring (or without one of these), none to follow. */
static int load_uring(struct event_table *t, const char *tracefs_dir, char *error, size_t error_size) {
        static const struct {
                const char *name;
                enum event_kind kind;
        } uring[] = {
                { "io_uring_submit_req", EVENT_URING_SUBMIT },
                { "io_uring_complete", EVENT_URING_COMPLETE },
                { "io_uring_req_failed", EVENT_URING_FAILED },
                { "io_uring_cqe_overflow", EVENT_URING_OVERFLOW },
        };
        size_t before = t->n_events;
        int r = 0;
        for (size_t i = 0; i < ELEMENTSOF(uring) && r >= 0; i++)
                r = load_one(t, tracefs_dir, "io_uring", uring[i].name, uring[i].kind, 0, error, error_size);
        if (r == -ENOENT) {
                t->n_events = before;
                r = 0;
        }
        return r;
}

/* The AIO syscalls' tracepoint ids are allocated together at boot: a direct table covers them; anything else
 * (io_uring's, the sched events) is looked up linearly. */
static void index_ids(struct event_table *t) {
        t->min_id = t->max_id = t->events[0].tp_id;
        for (size_t i = 1; i < t->n_events; i++)
                if ((t->events[i].kind == EVENT_SYS_ENTER || t->events[i].kind == EVENT_SYS_EXIT) &&
                    t->events[i].syscall < AIO_URING_SYSCALL_FIRST) {
                        t->min_id = MIN(t->min_id, t->events[i].tp_id);
                        t->max_id = MAX(t->max_id, t->events[i].tp_id);
                }
        if (t->max_id - t->min_id >= (int) ELEMENTSOF(t->by_id))
                t->max_id = t->min_id - 1;
        memset(t->by_id, -1, sizeof(t->by_id));
        for (size_t i = 0; i < t->n_events; i++) {
                int id = t->events[i].tp_id;
                if (id >= t->min_id && id <= t->max_id)
                        t->by_id[id - t->min_id] = (int8_t) i;
        }
}

int event_table_load(const char *tracefs_dir, unsigned extra, struct event_table **ret, char *error, size_t error_size) {
        char dummy[1];
        if (!error) {
                error = dummy;
                error_size = sizeof(dummy);
        }
        struct event_table *t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->tep = tep_alloc();
        if (!t->tep) {
                free(t);
                return -ENOMEM;
        }
        int r = load_syscalls(t, tracefs_dir, error, error_size);
        if (r >= 0) {
                /* Before Linux 6.? the exit of a thread does not say whether it ended its process: without
                 * that, requests in flight at a process's end are reported when they are evicted instead. */
                r = load_one(t, tracefs_dir, "sched", "sched_process_exit", EVENT_PROC_EXIT, 0, error, error_size);
                if (r == -ENOENT)
                        r = 0;
        }
        if (r >= 0 && (extra & EVENTS_EXEC))
                r = load_one(t, tracefs_dir, "sched", "sched_process_exec", EVENT_PROC_EXEC, 0, error, error_size);
        if (r >= 0 && (extra & EVENTS_FORK))
                r = load_one(t, tracefs_dir, "sched", "sched_process_fork", EVENT_FORK, 0, error, error_size);
        if (r >= 0 && (extra & EVENTS_URING))
                r = load_uring(t, tracefs_dir, error, error_size);
        if (r < 0) {
                event_table_free(t);
                return r;
        }
        index_ids(t);
        *ret = t;
        return 0;
}

void event_table_free(struct event_table *t) {
        if (!t)
                return;
        tep_free(t->tep);
        free(t);
}

const struct event_desc *event_table_lookup(const struct event_table *t, const uint8_t *raw, size_t raw_size) {
        if (raw_size < t->common_type.offset + t->common_type.size)
                return NULL;
        int id = (int) load_field(raw, raw_size, t->common_type.offset, t->common_type.size);
        if (id >= t->min_id && id <= t->max_id) {
                int8_t i = t->by_id[id - t->min_id];
                if (i >= 0)
                        return &t->events[i];
        }
        for (size_t i = 0; i < t->n_events; i++)
                if (t->events[i].tp_id == id)
                        return &t->events[i];
        return NULL;
}
