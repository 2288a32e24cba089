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

#include "fileio.h"
#include "util.h"

static int open_event(uint32_t type, uint64_t config, int cpu, unsigned wakeup_bytes) {
        struct perf_event_attr attr = {
                .type = type,
                .size = sizeof(attr),
                .config = config,
                .sample_period = 1,
                .sample_type = AIOT_SAMPLE_TYPE,
                /* a ring's own event tells by its enabled time whether it still lives (perf_session_check_cpu) */
                .read_format = type == PERF_TYPE_SOFTWARE ? PERF_FORMAT_TOTAL_TIME_ENABLED : 0,
                .disabled = 1,
                .sample_id_all = 1,
                .watermark = 1,
                .wakeup_watermark = wakeup_bytes, /* a timer drains what stays below it */
                .use_clockid = 1,
                .clockid = CLOCK_MONOTONIC,
        };
        int fd = (int) syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

static void explain_open_error(int r, const char *system, const char *name, int cpu, char *error,
                               size_t error_size) {
        if (r == -EACCES || r == -EPERM) {
                char paranoid[16] = "?";
                if (read_small_file("/proc/sys/kernel/perf_event_paranoid", paranoid, sizeof(paranoid)) <= 0)
                        snprintf(paranoid, sizeof(paranoid), "?");
                paranoid[strcspn(paranoid, "\n")] = 0;
                snprintf(error, error_size,
                         "perf_event_open %s:%s on CPU %d: %s. Tracepoint samples of every process need root, or "
                         "CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8), with kernel.perf_event_paranoid = %s; "
                         "inside a container the seccomp filter must also allow perf_event_open",
                         system, name, cpu, strerror(-r), paranoid);
        } else if (r == -ENOENT || r == -EINVAL)
                snprintf(error, error_size, "perf_event_open %s:%s on CPU %d: %s (no such tracepoint?)", system,
                         name, cpu, strerror(-r));
        else
                snprintf(error, error_size, "perf_event_open %s:%s on CPU %d: %s", system, name, cpu, strerror(-r));
}

static int live_enabled(const struct perf_cpu *pc, uint64_t *ret) {
        struct {
                uint64_t value, enabled;
        } v;
        if (read(pc->live_fd, &v, sizeof(v)) != (ssize_t) sizeof(v))
                return errno ? -errno : -EIO;
        *ret = v.enabled;
        return 0;
}

/* A dead event's enabled time stopped when it died. */
static void mark_stopped(struct perf_cpu *pc) {
        uint64_t enabled = 0;
        pc->life.state = CPU_DEAD;
        pc->life.stopped_at = live_enabled(pc, &enabled) == 0 ? pc->life.live_since + enabled : now_ns();
}

/* The samples a set's events generated. */
static uint64_t set_count(const int *fds, size_t n) {
        uint64_t sum = 0;
        for (size_t k = 0; fds && k < n; k++) {
                uint64_t v;
                if (fds[k] >= 0 && read(fds[k], &v, sizeof(v)) == (ssize_t) sizeof(v))
                        sum += v;
        }
        return sum;
}

/* Disabled before it is counted, so no sample lands in the ring after the count. */
static void retire_set(struct perf_cpu *pc, size_t n) {
        for (size_t k = 0; pc->fds && k < n; k++)
                if (pc->fds[k] >= 0)
                        (void) ioctl(pc->fds[k], PERF_EVENT_IOC_DISABLE, 0);
        pc->produced += set_count(pc->fds, n);
}

static void close_set(int *fds, size_t n) {
        for (size_t k = 0; fds && k < n; k++)
                if (fds[k] >= 0)
                        close(fds[k]);
        free(fds);
}

/* The ring of CPU index i: its bpf-output event (the owner), mapped and enabled, in place of the absent ring.
 * -ENODEV: the CPU is offline. */
static int open_ring(struct perf_session *ps, size_t i, char *error, size_t error_size) {
        struct perf_cpu *pc = &ps->cpus[i];
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        /* bpf-output: the ring owner is also where the in-kernel capture writes, when it is used */
        int fd = open_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, pc->life.cpu, ps->wakeup_bytes);
        if (fd < 0) {
                if (fd != -ENODEV)
                        explain_open_error(fd, "software", "bpf-output", pc->life.cpu, error, error_size);
                return fd;
        }
        /* Writable: the kernel then never overwrites what is unread; it drops and says so (LOST). */
        size_t map_size = page + ps->ring_bytes;
        void *map = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED) {
                int r = -errno;
                snprintf(error, error_size,
                         "mmap of the %zu KiB ring of CPU %d: %m (ring_memory or ring_pages too large for "
                         "kernel.perf_event_mlock_kb?)",
                         map_size / 1024, pc->life.cpu);
                close(fd);
                return r;
        }
        struct ring ring;
        int r = ring_init(&ring, map, page, ps->ring_bytes, pc->life.cpu);
        if (r < 0)
                snprintf(error, error_size, "ring of CPU %d: %s", pc->life.cpu, strerror(-r));
        else if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
                r = -errno;
                snprintf(error, error_size, "enabling the ring of CPU %d: %m", pc->life.cpu);
                ring_done(&ring);
        }
        if (r < 0) {
                munmap(map, map_size);
                close(fd);
                return r;
        }
        ring_done(&ps->rings[i]);
        ps->rings[i] = ring;
        pc->owner_fd = pc->live_fd = fd;
        pc->map = map;
        pc->map_size = map_size;
        pc->life.live_since = now_ns();
        pc->live_enabled = 0;
        return 0;
}

int perf_session_open(struct perf_session *ps, const struct event_table *t, const int *cpus, size_t n_cpus,
                      unsigned ring_pages, bool read_at_once, char *error, size_t error_size) {
        size_t ring_bytes = (size_t) ring_pages * (size_t) sysconf(_SC_PAGESIZE);
        int r = 0;

        /* Half full when the kernel captured the calls' memory: fewer wake-ups, and half the ring left to take a
         * late reader.  A quarter when the memory is read after the call: the sooner it is read, the less of it
         * the process has reused. */
        *ps = (struct perf_session) {
                .n_cpus = n_cpus, .n_events = t->n_events, .ring_bytes = ring_bytes,
                .wakeup_bytes = (unsigned) (read_at_once ? ring_bytes / 4 : ring_bytes / 2),
        };
        ps->cpus = calloc(n_cpus, sizeof(*ps->cpus));
        ps->rings = calloc(n_cpus, sizeof(*ps->rings));
        if (!ps->cpus || !ps->rings) {
                perf_session_close(ps);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n_cpus; i++)
                ps->cpus[i] = (struct perf_cpu) { .life.cpu = cpus[i], .owner_fd = -1, .live_fd = -1, .map = MAP_FAILED };

        bool any = false;
        for (size_t i = 0; i < n_cpus; i++) {
                r = ring_init_absent(&ps->rings[i], cpus[i]);
                if (r >= 0)
                        r = open_ring(ps, i, error, error_size);
                if (r == -ENODEV) {
                        /* offline: its ring is opened when it comes online (perf_session_revive_cpu) */
                        ps->cpus[i].life.state = CPU_OFFLINE;
                        r = 0;
                        continue;
                }
                if (r < 0) {
                        if (r == -ENOMEM)
                                snprintf(error, error_size, "ring of CPU %d: %s", cpus[i], strerror(-r));
                        goto fail;
                }
                any = true;
        }
        if (any)
                return 0;
        r = -ENODEV;
        snprintf(error, error_size, "none of the CPUs to trace is online");
fail:
        perf_session_close(ps);
        return r;
}

/* One CPU's events of a set, into fds, each sampling into the CPU's ring with the filter of its kind (filters:
 * syscalls, fork, process_exit, as struct perf_filters).  -ENODEV: the CPU is offline; what was opened stays in
 * fds. */
static int open_cpu_set(struct perf_session *ps, const struct event_table *t, size_t i, const char *const filters[3],
                        int *fds, char *error, size_t error_size) {
        struct perf_cpu *pc = &ps->cpus[i];
        for (size_t k = 0; k < t->n_events; k++) {
                const struct event_desc *d = &t->events[k];
                const char *f = d->kind == EVENT_FORK        ? filters[1]
                                : d->kind == EVENT_PROC_EXIT ? filters[2]
                                                             : filters[0];
                int r = open_event(PERF_TYPE_TRACEPOINT, (uint64_t) d->tp_id, pc->life.cpu, ps->wakeup_bytes);
                if (r < 0) {
                        if (r != -ENODEV)
                                explain_open_error(r, d->system, d->name, pc->life.cpu, error, error_size);
                        return r;
                }
                fds[k] = r;
                if (ioctl(r, PERF_EVENT_IOC_SET_OUTPUT, pc->owner_fd) < 0) {
                        r = -errno;
                        snprintf(error, error_size, "PERF_EVENT_IOC_SET_OUTPUT of %s:%s on CPU %d: %m", d->system,
                                 d->name, pc->life.cpu);
                        return r;
                }
                if (f && ioctl(r, PERF_EVENT_IOC_SET_FILTER, f) < 0) {
                        r = -errno;
                        snprintf(error, error_size, "PERF_EVENT_IOC_SET_FILTER on %s:%s: %m (filter: %s)", d->system,
                                 d->name, f);
                        return r;
                }
        }
        return 0;
}

static int *new_set(size_t n) {
        int *fds = malloc(n * sizeof(int));
        for (size_t k = 0; fds && k < n; k++)
                fds[k] = -1;
        return fds;
}

int perf_session_attach(struct perf_session *ps, const struct event_table *t, const struct perf_filters *filters,
                        char *error, size_t error_size) {
        _cleanup_(freep) int **sets = calloc(ps->n_cpus, sizeof(*sets));
        if (!sets)
                return -ENOMEM;
        int r = 0;
        const char *const texts[3] = { filters->syscalls, filters->fork, filters->process_exit };
        for (size_t i = 0; i < ps->n_cpus && r >= 0; i++) {
                struct perf_cpu *pc = &ps->cpus[i];
                if (!(sets[i] = new_set(t->n_events)))
                        r = -ENOMEM;
                else if (pc->life.state == CPU_TRACED &&
                         (r = open_cpu_set(ps, t, i, texts, sets[i], error, error_size)) == -ENODEV) {
                        mark_stopped(pc); /* gone offline since the loop last looked */
                        r = 0;
                }
                /* not traced now: opened again once the CPU is back (perf_session_revive_cpu) */
        }
        /* Enable the new set before retiring the old one: no gap.  The engine drops the doubles of the overlap. */
        for (size_t i = 0; i < ps->n_cpus && r >= 0; i++)
                for (size_t k = 0; k < t->n_events && r >= 0; k++)
                        if (sets[i][k] >= 0 && ioctl(sets[i][k], PERF_EVENT_IOC_ENABLE, 0) < 0) {
                                r = -errno;
                                snprintf(error, error_size, "enabling %s:%s on CPU %d: %m", t->events[k].system,
                                         t->events[k].name, ps->cpus[i].life.cpu);
                        }
        for (size_t i = 0; i < ps->n_cpus; i++) {
                struct perf_cpu *pc = &ps->cpus[i];
                if (r < 0) {
                        close_set(sets[i], t->n_events);
                        continue;
                }
                retire_set(pc, ps->n_events);
                close_set(pc->fds, ps->n_events);
                pc->fds = sets[i];
        }
        if (r < 0)
                return r;
        ps->with_sets = true;
        for (size_t j = 0; j < ELEMENTSOF(texts); j++) {
                free(ps->filter_text[j]);
                ps->filter_text[j] = texts[j] ? strdup(texts[j]) : NULL;
                if (texts[j] && !ps->filter_text[j])
                        return -ENOMEM;
        }
        return 0;
}

int perf_session_check_cpu(struct perf_session *ps, size_t i) {
        struct perf_cpu *pc = &ps->cpus[i];
        if (pc->life.state != CPU_TRACED)
                return 1;
        uint64_t enabled = 0;
        int r = live_enabled(pc, &enabled);
        if (r < 0)
                return r;
        if (enabled != pc->live_enabled || enabled == 0) {
                pc->live_enabled = enabled;
                return 0;
        }
        mark_stopped(pc);
        return 1;
}

int perf_session_revive_cpu(struct perf_session *ps, const struct event_table *t, size_t i, char *error,
                            size_t error_size) {
        struct perf_cpu *pc = &ps->cpus[i];
        int r, live;
        bool fresh = pc->owner_fd < 0; /* offline since the start: its ring first */
        if (fresh) {
                r = open_ring(ps, i, error, error_size);
                if (r < 0)
                        return r;
                live = pc->owner_fd;
        } else {
                /* A dead event still owns the ring: new events on the CPU write into it through SET_OUTPUT, and
                 * the owner's fd still wakes the loop. */
                live = open_event(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, pc->life.cpu, ps->wakeup_bytes);
                if (live < 0) {
                        if (live != -ENODEV)
                                explain_open_error(live, "software", "bpf-output", pc->life.cpu, error, error_size);
                        return live;
                }
        }
        /* Without a set (the capture writes through the live event alone) there is none to open again. */
        size_t n = ps->with_sets ? t->n_events : 0;
        _cleanup_(freep) int *fds = new_set(n ? n : 1);
        if (!fds) {
                if (!fresh)
                        close(live);
                return -ENOMEM;
        }
        r = fresh || ioctl(live, PERF_EVENT_IOC_SET_OUTPUT, pc->owner_fd) >= 0 ? 0 : -errno;
        if (r < 0)
                snprintf(error, error_size, "PERF_EVENT_IOC_SET_OUTPUT of a new bpf-output on CPU %d: %m", pc->life.cpu);
        else if (n)
                r = open_cpu_set(ps, t, i, (const char *const *) ps->filter_text, fds, error, error_size);
        for (size_t k = 0; k < n && r >= 0; k++)
                if (fds[k] >= 0 && ioctl(fds[k], PERF_EVENT_IOC_ENABLE, 0) < 0) {
                        r = -errno;
                        snprintf(error, error_size, "enabling %s:%s on CPU %d: %m", t->events[k].system,
                                 t->events[k].name, pc->life.cpu);
                }
        if (r >= 0 && !fresh && ioctl(live, PERF_EVENT_IOC_ENABLE, 0) < 0) {
                r = -errno;
                snprintf(error, error_size, "enabling a new bpf-output on CPU %d: %m", pc->life.cpu);
        }
        if (r < 0) {
                for (size_t k = 0; k < n; k++)
                        if (fds[k] >= 0)
                                close(fds[k]);
                if (!fresh)
                        close(live);
                return r; /* -ENODEV: offline again meanwhile */
        }
        /* The dead set's counts stopped with it; they stay in the account. */
        if (n) {
                pc->produced += set_count(pc->fds, n);
                close_set(pc->fds, n);
                pc->fds = TAKE_PTR(fds);
        }
        if (!fresh) {
                if (pc->live_fd != pc->owner_fd)
                        close(pc->live_fd);
                pc->live_fd = live;
                pc->life.live_since = now_ns();
                pc->live_enabled = 0;
        }
        pc->life.state = CPU_TRACED;
        return 0;
}

uint64_t perf_session_produced(const struct perf_session *ps, size_t i) {
        return ps->cpus[i].produced + set_count(ps->cpus[i].fds, ps->n_events);
}

int perf_session_disable(struct perf_session *ps) {
        int r = 0;
        for (size_t i = 0; i < ps->n_cpus; i++)
                for (size_t k = 0; ps->cpus[i].fds && k < ps->n_events; k++)
                        if (ps->cpus[i].fds[k] >= 0 && ioctl(ps->cpus[i].fds[k], PERF_EVENT_IOC_DISABLE, 0) < 0)
                                r = -errno;
        return r;
}

void perf_session_close(struct perf_session *ps) {
        for (size_t i = 0; ps->cpus && i < ps->n_cpus; i++) {
                struct perf_cpu *pc = &ps->cpus[i];
                close_set(pc->fds, ps->n_events);
                if (ps->rings)
                        ring_done(&ps->rings[i]);
                if (pc->map && pc->map != MAP_FAILED)
                        munmap(pc->map, pc->map_size);
                if (pc->live_fd >= 0 && pc->live_fd != pc->owner_fd)
                        close(pc->live_fd);
                if (pc->owner_fd >= 0)
                        close(pc->owner_fd);
        }
        for (size_t j = 0; j < ELEMENTSOF(ps->filter_text); j++)
                free(ps->filter_text[j]);
        free(ps->cpus);
        free(ps->rings);
        *ps = (struct perf_session) {};
}
