/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "bpf_capture.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"
#include "util.h"

#if HAVE_BPF_CAPTURE
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "capture.skel.h"

struct bpf_capture {
        struct capture *skel;
        struct bpf_link *links[EVENTS_MAX]; /* per event of the table, once attached */
        size_t n_events;
        int n_possible;
        uint32_t generation;
        uint64_t *percpu; /* n_possible values, for reading one counter */
};

/* libbpf's own messages: kept, not printed, so a failure can be explained in one line. */
static char libbpf_last[512];

static int keep_libbpf_message(enum libbpf_print_level level, const char *fmt, va_list ap) {
        if (level == LIBBPF_DEBUG)
                return 0;
        char line[512];
        vsnprintf(line, sizeof(line), fmt, ap);
        line[strcspn(line, "\n")] = 0;
        if (line[0])
                snprintf(libbpf_last, sizeof(libbpf_last), "%s", line);
        return 0;
}

/* The program for an event: named for it in capture.bpf.c ("enter_io_submit", "proc_exit", ...); empty when
 * the event has none. */
static void program_name(const struct event_desc *d, char *buf, size_t size) {
        switch (d->kind) {
        case EVENT_SYS_ENTER:
                snprintf(buf, size, "enter_%s", aio_syscall_name(d->syscall));
                break;
        case EVENT_SYS_EXIT:
                snprintf(buf, size, "exit_%s", aio_syscall_name(d->syscall));
                break;
        case EVENT_PROC_EXIT:
                snprintf(buf, size, "proc_exit");
                break;
        case EVENT_PROC_EXEC:
                snprintf(buf, size, "proc_exec");
                break;
        default:
                buf[0] = 0;
        }
}

/* A program whose event the table lacks (a kernel without it, or not asked for) is not loaded. */
static bool program_wanted(const struct event_table *t, const char *name) {
        char want[64];
        for (size_t k = 0; k < t->n_events; k++) {
                program_name(&t->events[k], want, sizeof(want));
                if (strcmp(want, name) == 0)
                        return true;
        }
        return false;
}

/* The program writes the records itself: their layout must be what the format files say. */
static int check_layout(const struct event_table *t, char *error, size_t error_size) {
        for (size_t k = 0; k < t->n_events; k++) {
                const struct event_desc *d = &t->events[k];
                if (d->kind == EVENT_SYS_ENTER) {
                        bool ok = d->record_size == 16 + 8 * d->n_args;
                        for (unsigned i = 0; i < d->n_args; i++)
                                ok = ok && d->args[i].offset == 16 + 8 * i && d->args[i].size == 8;
                        if (!ok) {
                                snprintf(error, error_size, "the format of %s:%s is not the layout the in-kernel "
                                         "capture writes (8-byte arguments from offset 16)", d->system, d->name);
                                return -EPROTO;
                        }
                }
                if (d->kind == EVENT_PROC_EXIT &&
                    (d->record_size != 33 || d->args[0].offset != 24 || d->args[1].offset != 32)) {
                        snprintf(error, error_size, "the format of %s:%s is not the layout the in-kernel capture "
                                 "writes (pid at 24, group_dead at 32)", d->system, d->name);
                        return -EPROTO;
                }
                if (d->kind == EVENT_PROC_EXEC && (d->args[0].offset != 12 || d->args[1].offset != 16)) {
                        snprintf(error, error_size, "the format of %s:%s is not the layout the in-kernel capture "
                                 "writes (pid at 12, old_pid at 16)", d->system, d->name);
                        return -EPROTO;
                }
                if (d->kind != EVENT_SYS_EXIT)
                        continue;
                if (d->record_size != CAPTURE_EXIT_RAW_SIZE || d->args[0].offset != CAPTURE_EXIT_RET_OFFSET ||
                    d->args[0].size != 8 || t->common_type.offset != 0 || t->common_type.size != 2) {
                        snprintf(error, error_size,
                                 "the format of %s:%s (%u bytes, ret at %u) is not the layout the in-kernel capture "
                                 "writes (%d bytes, ret at %d)",
                                 d->system, d->name, d->record_size, d->args[0].offset, CAPTURE_EXIT_RAW_SIZE,
                                 CAPTURE_EXIT_RET_OFFSET);
                        return -EPROTO;
                }
        }
        return 0;
}

int bpf_capture_open(const struct event_table *t, unsigned max_items, struct bpf_capture **ret, char *error,
                     size_t error_size) {
        int r = check_layout(t, error, error_size);
        if (r < 0)
                return r;
        libbpf_set_print(keep_libbpf_message);
        libbpf_last[0] = 0;

        struct bpf_capture *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->n_events = t->n_events;
        c->n_possible = libbpf_num_possible_cpus();
        if (c->n_possible <= 0) {
                r = c->n_possible <= 0 ? c->n_possible : -ENOMEM;
                snprintf(error, error_size, "counting the possible CPUs: %s", strerror(-r));
                goto fail;
        }
        c->percpu = calloc((size_t) c->n_possible, sizeof(uint64_t));
        c->skel = capture__open();
        if (!c->percpu || !c->skel) {
                r = errno ? -errno : -ENOMEM;
                snprintf(error, error_size, "opening the BPF object: %s", strerror(-r));
                goto fail;
        }
        for (size_t k = 0; k < t->n_events; k++) {
                const struct event_desc *d = &t->events[k];
                if (d->kind == EVENT_SYS_EXIT)
                        c->skel->rodata->exit_tp_id[d->syscall] = (uint16_t) d->tp_id;
                else if (d->kind == EVENT_SYS_ENTER)
                        c->skel->rodata->enter_tp_id[d->syscall] = (uint16_t) d->tp_id;
                else if (d->kind == EVENT_PROC_EXIT)
                        c->skel->rodata->proc_exit_tp_id = (uint16_t) d->tp_id;
                else if (d->kind == EVENT_PROC_EXEC)
                        c->skel->rodata->proc_exec_tp_id = (uint16_t) d->tp_id;
        }
        c->skel->rodata->max_items = MIN(max_items, (unsigned) CAPTURE_MAX_ITEMS);
        bpf_map__set_max_entries(c->skel->maps.scratch, (uint32_t) c->n_possible);
        struct bpf_program *prog;
        bpf_object__for_each_program(prog, c->skel->obj)
                if (!program_wanted(t, bpf_program__name(prog)))
                        bpf_program__set_autoload(prog, false);

        r = capture__load(c->skel);
        if (r < 0) {
                if (r == -EPERM || r == -EACCES)
                        snprintf(error, error_size,
                                 "loading the BPF programs: %s (needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN; a "
                                 "seccomp filter must allow bpf())",
                                 strerror(-r));
                else
                        snprintf(error, error_size, "loading the BPF programs: %s%s%s", strerror(-r),
                                 libbpf_last[0] ? ": " : "", libbpf_last);
                goto fail;
        }

        for (size_t k = 0; k < t->n_events; k++) {
                const struct event_desc *d = &t->events[k];
                char name[64];
                program_name(d, name, sizeof(name));
                if ((d->kind == EVENT_SYS_ENTER || d->kind == EVENT_SYS_EXIT) &&
                    !bpf_object__find_program_by_name(c->skel->obj, name)) {
                        r = -ENOENT;
                        snprintf(error, error_size, "no BPF program for %s:%s", d->system, d->name);
                        goto fail;
                }
        }
        *ret = c;
        return 0;
fail:
        bpf_capture_free(c);
        return r;
}

void bpf_capture_free(struct bpf_capture *c) {
        if (!c)
                return;
        for (size_t k = 0; k < c->n_events; k++)
                bpf_link__destroy(c->links[k]);
        capture__destroy(c->skel);
        free(c->percpu);
        free(c);
}

int bpf_capture_attach(struct bpf_capture *c, const struct event_table *t, char *error, size_t error_size) {
        for (size_t k = 0; k < t->n_events; k++) {
                const struct event_desc *d = &t->events[k];
                char name[64];
                program_name(d, name, sizeof(name));
                struct bpf_program *prog = name[0] ? bpf_object__find_program_by_name(c->skel->obj, name) : NULL;
                if (!prog || c->links[k])
                        continue;
                /* A program belongs to the tracepoint, not to one CPU: it runs for every hit, on any CPU.  libbpf
                 * opens one event for it that samples nothing, and a BPF link where the kernel has them. */
                c->links[k] = bpf_program__attach_tracepoint(prog, d->system, d->name);
                if (!c->links[k]) {
                        int r = -errno;
                        snprintf(error, error_size, "attaching the BPF program to %s:%s: %s%s%s", d->system, d->name,
                                 strerror(-r), libbpf_last[0] ? ": " : "", libbpf_last);
                        return r;
                }
        }
        return 0;
}

int bpf_capture_set_rings(struct bpf_capture *c, const struct perf_session *ps, char *error, size_t error_size) {
        int fd = bpf_map__fd(c->skel->maps.rings);
        for (size_t i = 0; i < ps->n_cpus; i++) {
                if (ps->cpus[i].live_fd < 0)
                        continue; /* offline since the start: set once its ring is there */
                uint32_t cpu = (uint32_t) ps->cpus[i].cpu;
                uint32_t live = (uint32_t) ps->cpus[i].live_fd;
                if (bpf_map_update_elem(fd, &cpu, &live, BPF_ANY) < 0) {
                        int r = -errno;
                        snprintf(error, error_size, "connecting the ring of CPU %u to the BPF programs: %s", cpu,
                                 strerror(-r));
                        return r;
                }
        }
        return 0;
}

/* Whether the config (NULL: none) lists this key of the ids map (a pid) or of the names map (an exact comm). */
static bool config_lists(const struct config *cfg, bool names, const void *key) {
        for (size_t i = 0; cfg && i < cfg->n_watch; i++) {
                const struct watch *w = &cfg->watch[i];
                if (!names && w->kind == WATCH_PID && (uint32_t) w->pid == *(const uint32_t *) key)
                        return true;
                if (names && w->kind == WATCH_COMM &&
                    strncmp(w->comm, ((const struct capture_comm *) key)->comm, CAPTURE_COMM_SIZE) == 0)
                        return true;
        }
        return false;
}

/* Drop from a map every key the config does not list (all of them: NULL). */
static void drop_keys(int map, size_t key_size, bool names, const struct config *keep) {
        uint8_t key[CAPTURE_COMM_SIZE], cur[CAPTURE_COMM_SIZE], stale[64][CAPTURE_COMM_SIZE];
        size_t n_stale;
        do {
                n_stale = 0;
                void *prev = NULL;
                while (n_stale < ELEMENTSOF(stale) && bpf_map_get_next_key(map, prev, key) == 0) {
                        memcpy(cur, key, key_size);
                        prev = cur;
                        if (!config_lists(keep, names, key))
                                memcpy(stale[n_stale++], key, key_size);
                }
                for (size_t i = 0; i < n_stale; i++)
                        (void) bpf_map_delete_elem(map, stale[i]);
        } while (n_stale == ELEMENTSOF(stale));
}

int bpf_capture_set_watch(struct bpf_capture *c, const struct config *cfg, char *error, size_t error_size) {
        struct capture_watch w = { .all = cfg->n_watch == 0, .generation = ++c->generation };
        int ids = bpf_map__fd(c->skel->maps.watch_ids), names = bpf_map__fd(c->skel->maps.watch_names),
            globs = bpf_map__fd(c->skel->maps.watch_globs);
        for (size_t i = 0; i < cfg->n_watch; i++) {
                const struct watch *wa = &cfg->watch[i];
                uint8_t one = 1;
                int r = 0;
                if (wa->kind == WATCH_PID) {
                        uint32_t pid = (uint32_t) wa->pid;
                        r = w.n_ids < CAPTURE_MAX_IDS ? bpf_map_update_elem(ids, &pid, &one, BPF_ANY) : -E2BIG;
                        w.n_ids++;
                } else if (wa->kind == WATCH_COMM) {
                        struct capture_comm key = {};
                        memcpy(key.comm, wa->comm, strnlen(wa->comm, CAPTURE_COMM_SIZE - 1));
                        r = w.n_names < CAPTURE_MAX_NAMES ? bpf_map_update_elem(names, &key, &one, BPF_ANY) : -E2BIG;
                        w.n_names++;
                } else {
                        char pat[CAPTURE_GLOB_SIZE] = {};
                        snprintf(pat, sizeof(pat), "%s", wa->comm);
                        r = w.n_globs < CAPTURE_MAX_GLOBS ? bpf_map_update_elem(globs, &w.n_globs, pat, BPF_ANY) : -E2BIG;
                        w.n_globs++;
                }
                if (r == -1)
                        r = -errno;
                if (r == -E2BIG) {
                        /* config_load refuses such a list: only a caller that skipped it gets here */
                        snprintf(error, error_size, "the in-kernel capture takes at most %d pids, %d exact names "
                                 "and %d globs", CAPTURE_MAX_IDS, CAPTURE_MAX_NAMES, CAPTURE_MAX_GLOBS);
                        return r;
                }
                if (r < 0) {
                        snprintf(error, error_size, "setting the watch list of the BPF programs: %s", strerror(-r));
                        return r;
                }
        }
        uint32_t zero = 0;
        if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.watch), &zero, &w, BPF_ANY) < 0) {
                int r = -errno;
                snprintf(error, error_size, "setting the watch list of the BPF programs: %s", strerror(-r));
                return r;
        }
        /* Only now, so that what is watched before and after is never unwatched. */
        drop_keys(ids, sizeof(uint32_t), false, cfg);
        drop_keys(names, sizeof(struct capture_comm), true, cfg);
        return 0;
}

void bpf_capture_stop(struct bpf_capture *c) {
        struct capture_watch none = { .generation = ++c->generation };
        uint32_t zero = 0;
        (void) bpf_map_update_elem(bpf_map__fd(c->skel->maps.watch), &zero, &none, BPF_ANY);
        drop_keys(bpf_map__fd(c->skel->maps.watch_ids), sizeof(uint32_t), false, NULL);
        drop_keys(bpf_map__fd(c->skel->maps.watch_names), sizeof(struct capture_comm), true, NULL);
}

uint64_t bpf_capture_counter(const struct bpf_capture *c, int cpu, enum capture_counter which) {
        uint32_t key = which;
        if (cpu < 0 || cpu >= c->n_possible ||
            bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.counters), &key, c->percpu) < 0)
                return 0;
        return c->percpu[cpu];
}

const uint64_t *bpf_capture_counters(const struct bpf_capture *c, enum capture_counter which) {
        uint32_t key = which;
        if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.counters), &key, c->percpu) < 0)
                memset(c->percpu, 0, (size_t) c->n_possible * sizeof(uint64_t));
        return c->percpu;
}

int bpf_capture_run_time(const struct bpf_capture *c, uint64_t *ret_runs, uint64_t *ret_ns) {
        uint64_t runs = 0, ns = 0;
        struct bpf_program *prog;
        bpf_object__for_each_program(prog, c->skel->obj) {
                int fd = bpf_program__fd(prog);
                if (fd < 0)
                        continue; /* not loaded: a tracepoint this kernel lacks */
                struct bpf_prog_info info = {};
                uint32_t len = sizeof(info);
                if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
                        return -errno;
                runs += info.run_cnt;
                ns += info.run_time_ns;
        }
        *ret_runs = runs;
        *ret_ns = ns;
        return 0;
}

#else /* !HAVE_BPF_CAPTURE */

int bpf_capture_open(const struct event_table *t, unsigned max_items, struct bpf_capture **ret, char *error,
                     size_t error_size) {
        snprintf(error, error_size, "this aiotraced was built without the in-kernel capture (configure found no "
                                    "clang, bpftool or libbpf)");
        return -EOPNOTSUPP;
}

void bpf_capture_free(struct bpf_capture *c) {
}

int bpf_capture_attach(struct bpf_capture *c, const struct event_table *t, char *error, size_t error_size) {
        return -EOPNOTSUPP;
}

int bpf_capture_set_rings(struct bpf_capture *c, const struct perf_session *ps, char *error, size_t error_size) {
        return -EOPNOTSUPP;
}

int bpf_capture_set_watch(struct bpf_capture *c, const struct config *cfg, char *error, size_t error_size) {
        return -EOPNOTSUPP;
}

void bpf_capture_stop(struct bpf_capture *c) {
}

uint64_t bpf_capture_counter(const struct bpf_capture *c, int cpu, enum capture_counter which) {
        return 0;
}

const uint64_t *bpf_capture_counters(const struct bpf_capture *c, enum capture_counter which) {
        return NULL;
}

int bpf_capture_run_time(const struct bpf_capture *c, uint64_t *ret_runs, uint64_t *ret_ns) {
        return -EOPNOTSUPP;
}
#endif
