/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "perf.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

int online_cpus(int **ret, size_t *ret_n) {
        char buf[4096];
        int fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return n < 0 ? -errno : -EIO;
        buf[n] = 0;

        size_t cap = 16, count = 0;
        int *cpus = malloc(cap * sizeof(*cpus));
        if (!cpus)
                return -ENOMEM;
        for (char *p = buf; *p && *p != '\n';) {
                char *end;
                long a = strtol(p, &end, 10), b = a;
                if (end == p)
                        goto bad;
                if (*end == '-') {
                        p = end + 1;
                        b = strtol(p, &end, 10);
                        if (end == p || b < a)
                                goto bad;
                }
                for (long c = a; c <= b; c++) {
                        if (count == cap) {
                                int *q = realloc(cpus, 2 * cap * sizeof(*cpus));
                                if (!q) {
                                        free(cpus);
                                        return -ENOMEM;
                                }
                                cpus = q;
                                cap *= 2;
                        }
                        cpus[count++] = (int) c;
                }
                p = end;
                if (*p == ',')
                        p++;
        }
        if (count == 0)
                goto bad;
        *ret = cpus;
        *ret_n = count;
        return 0;
bad:
        free(cpus);
        return -EINVAL;
}

static int open_event(const struct event_desc *d, int cpu, unsigned ring_bytes) {
        struct perf_event_attr attr = {
                .type = PERF_TYPE_TRACEPOINT,
                .size = sizeof(attr),
                .config = (uint64_t) d->tp_id,
                .sample_period = 1,
                .sample_type = AIOT_SAMPLE_TYPE,
                .disabled = 1,
                .sample_id_all = 1,
                .watermark = 1,
                /* a quarter full: wake early enough that the fallback reader is not far behind, late enough to
                 * read in batches; a timer drains what stays below it */
                .wakeup_watermark = ring_bytes / 4,
                .use_clockid = 1,
                .clockid = CLOCK_MONOTONIC,
        };
        int fd = (int) syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

static void explain_open_error(int r, const struct event_desc *d, int cpu, char *error, size_t error_size) {
        if (r == -EACCES || r == -EPERM) {
                char paranoid[16] = "?";
                int fd = open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY | O_CLOEXEC);
                if (fd >= 0) {
                        ssize_t n = read(fd, paranoid, sizeof(paranoid) - 1);
                        paranoid[n > 0 ? n : 0] = 0;
                        paranoid[strcspn(paranoid, "\n")] = 0;
                        close(fd);
                }
                snprintf(error, error_size,
                         "perf_event_open %s:%s on CPU %d: %s. Tracepoint samples of every process need root, or "
                         "CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8), with kernel.perf_event_paranoid = %s; "
                         "inside a container the seccomp filter must also allow perf_event_open",
                         d->system, d->name, cpu, strerror(-r), paranoid);
        } else if (r == -ENOENT || r == -EINVAL)
                snprintf(error, error_size, "perf_event_open %s:%s (id %d) on CPU %d: %s (no such tracepoint?)",
                         d->system, d->name, d->tp_id, cpu, strerror(-r));
        else
                snprintf(error, error_size, "perf_event_open %s:%s on CPU %d: %s", d->system, d->name, cpu,
                         strerror(-r));
}

int perf_session_open(struct perf_session *ps, const struct event_table *t, const int *cpus, size_t n_cpus,
                      unsigned ring_pages, char *error, size_t error_size) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        size_t ring_bytes = (size_t) ring_pages * page;
        int r;

        *ps = (struct perf_session) { .n_cpus = n_cpus, .n_events = t->n_events };
        ps->cpus = calloc(n_cpus, sizeof(*ps->cpus));
        ps->rings = calloc(n_cpus, sizeof(*ps->rings));
        if (!ps->cpus || !ps->rings) {
                perf_session_close(ps);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n_cpus; i++) {
                struct perf_cpu *pc = &ps->cpus[i];
                pc->cpu = cpus[i];
                pc->map = MAP_FAILED;
                pc->fds = malloc(t->n_events * sizeof(int));
                if (!pc->fds) {
                        perf_session_close(ps);
                        return -ENOMEM;
                }
                for (size_t k = 0; k < t->n_events; k++)
                        pc->fds[k] = -1;
        }

        for (size_t i = 0; i < n_cpus; i++) {
                struct perf_cpu *pc = &ps->cpus[i];
                for (size_t k = 0; k < t->n_events; k++) {
                        r = open_event(&t->events[k], pc->cpu, (unsigned) ring_bytes);
                        if (r < 0) {
                                explain_open_error(r, &t->events[k], pc->cpu, error, error_size);
                                goto fail;
                        }
                        pc->fds[k] = r;
                        if (k == 0) {
                                /* Writable: the kernel then never overwrites what is unread; it drops and says
                                 * so (PERF_RECORD_LOST).  The ring must exist before others are sent to it. */
                                pc->map_size = page + ring_bytes;
                                pc->map = mmap(NULL, pc->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, pc->fds[0], 0);
                                if (pc->map == MAP_FAILED) {
                                        r = -errno;
                                        snprintf(error, error_size,
                                                 "mmap of the %zu KiB ring of CPU %d: %m (ring_pages too large for "
                                                 "kernel.perf_event_mlock_kb?)",
                                                 pc->map_size / 1024, pc->cpu);
                                        goto fail;
                                }
                                continue;
                        }
                        if (ioctl(pc->fds[k], PERF_EVENT_IOC_SET_OUTPUT, pc->fds[0]) < 0) {
                                r = -errno;
                                snprintf(error, error_size, "PERF_EVENT_IOC_SET_OUTPUT on CPU %d: %m", pc->cpu);
                                goto fail;
                        }
                }
                r = ring_init(&ps->rings[i], pc->map, page, ring_bytes, pc->cpu);
                if (r < 0) {
                        snprintf(error, error_size, "ring of CPU %d: %s", pc->cpu, strerror(-r));
                        goto fail;
                }
        }
        return 0;
fail:
        perf_session_close(ps);
        return r;
}

int perf_session_set_filters(struct perf_session *ps, const struct event_table *t, const char *filter,
                             const char *fork_filter, char *error, size_t error_size) {
        for (size_t i = 0; i < ps->n_cpus; i++)
                for (size_t k = 0; k < ps->n_events; k++) {
                        const char *f = t->events[k].kind == EVENT_FORK ? fork_filter : filter;
                        /* An empty filter string clears a previous one. */
                        if (ioctl(ps->cpus[i].fds[k], PERF_EVENT_IOC_SET_FILTER, f ? f : "") < 0) {
                                int r = -errno;
                                snprintf(error, error_size, "PERF_EVENT_IOC_SET_FILTER on %s:%s: %m (filter: %s)",
                                         t->events[k].system, t->events[k].name, f ? f : "");
                                return r;
                        }
                }
        return 0;
}

int perf_session_enable(struct perf_session *ps, int enable) {
        for (size_t i = 0; i < ps->n_cpus; i++)
                for (size_t k = 0; k < ps->n_events; k++)
                        if (ioctl(ps->cpus[i].fds[k], enable ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) < 0)
                                return -errno;
        return 0;
}

void perf_session_close(struct perf_session *ps) {
        for (size_t i = 0; ps->cpus && i < ps->n_cpus; i++) {
                struct perf_cpu *pc = &ps->cpus[i];
                if (ps->rings)
                        ring_done(&ps->rings[i]);
                if (pc->map && pc->map != MAP_FAILED)
                        munmap(pc->map, pc->map_size);
                for (size_t k = 0; pc->fds && k < ps->n_events; k++)
                        if (pc->fds[k] >= 0)
                                close(pc->fds[k]);
                free(pc->fds);
        }
        free(ps->cpus);
        free(ps->rings);
        *ps = (struct perf_session) {};
}
