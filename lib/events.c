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

/* The tracepoint of the table's row for `kind` (of `syscall`, for the syscalls' rows) */
static int load_one(struct event_table *t, const char *dir, enum event_kind kind, enum aio_syscall syscall, char *error,
                    size_t error_size) {
        const struct tracepoint *tp = tracepoint_of(kind);
        const char *system = tp->system;
        char name[40];
        bool of_syscall = kind == EVENT_SYS_ENTER || kind == EVENT_SYS_EXIT;
        tracepoint_expand(tp->name, of_syscall ? aio_syscall_name(syscall) : NULL, name, sizeof(name));
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
        *d = (struct event_desc) { .tp_id = ev->id, .kind = kind, .family = tp->family, .syscall = syscall };
        snprintf(d->system, sizeof(d->system), "%s", system);
        snprintf(d->name, sizeof(d->name), "%s", name);

        const struct syscall_desc *sd = syscall_desc(syscall);
        unsigned n = 0;
        if (kind == EVENT_SYS_ENTER)
                n = sd->n_args;
        else
                while (n < TRACEPOINT_FIELDS_MAX && tp->fields[n].name)
                        n++;
        for (; d->n_args < n; d->n_args++) {
                const char *field = kind == EVENT_SYS_ENTER ? sd->args[d->n_args].tp_field : tp->fields[d->n_args].name;
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
                size_t before = t->n_events;
                r = load_one(t, tracefs_dir, EVENT_SYS_ENTER, s, error, error_size);
                if (r >= 0)
                        r = load_one(t, tracefs_dir, EVENT_SYS_EXIT, s, error, error_size);
                if (r == -ENOENT && s >= AIO_URING_SYSCALL_FIRST) {
                        t->n_events = before;
                        r = 0;
                }
        }
        return r;
}

/* The other rows asked for.  sched_process_exit: before Linux 6.? the exit of a thread does not say whether it
 * ended its process, and without that, requests in flight at a process's end are reported when they are evicted
 * instead.  io_uring's: on a kernel without io_uring (or without one of them), none to follow. */
static int load_others(struct event_table *t, const char *tracefs_dir, unsigned extra, char *error,
                       size_t error_size) {
        size_t uring_first = SIZE_MAX;
        bool uring_gone = false;
        for (enum event_kind k = EVENT_SYS_EXIT + 1; k < _EVENT_KIND_MAX; k++) {
                unsigned asked = tracepoint_of(k)->asked;
                if (!(asked & (extra | EVENTS_ALWAYS)) || (asked == EVENTS_URING && uring_gone))
                        continue;
                size_t before = t->n_events;
                int r = load_one(t, tracefs_dir, k, 0, error, error_size);
                if (r == -ENOENT && asked == EVENTS_URING) {
                        /* all of io_uring's or none: those loaded already go (they are together) */
                        t->n_events = uring_first == SIZE_MAX ? before : uring_first;
                        uring_gone = true;
                        continue;
                }
                if (r == -ENOENT && k == EVENT_PROC_EXIT)
                        continue;
                if (r < 0)
                        return r;
                if (asked == EVENTS_URING && uring_first == SIZE_MAX)
                        uring_first = before;
        }
        return 0;
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
        if (r >= 0)
                r = load_others(t, tracefs_dir, extra, error, error_size);
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
