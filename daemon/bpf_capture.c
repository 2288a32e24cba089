/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "bpf_capture.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cgroup.h"
#include "pidns.h"
#include "perf.h"
#include "util.h"
#include "watch.h"

#if HAVE_BPF_CAPTURE
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "capture.skel.h"

struct bpf_capture {
        struct capture *skel;
        struct bpf_link *links[EVENTS_MAX]; /* per event of the table, once attached */
        struct bpf_link *fork_link;         /* follows children */
        struct bpf_link *exit_group_link;   /* the AIO rings' last completions */
        struct bpf_link *cgroup_link;       /* counts cgroups made: NULL, the tree is looked at every time */
        struct bpf_link *dio_link;          /* the kernel's own view of an iocb on direct I/O (iomap): NULL, none */
        struct bpf_link *uring_create_link; /* a ring made forgets the owner of one before it at its address */
        struct capture_sum *sum_values;     /* SUM_BATCH of them, for the interval's summed counts */
        struct capture_sum one_sum;
        uint64_t cgroups_seen;              /* made when the tree was last looked at */
        unsigned cgroup_looks;
        size_t n_events;
        int n_possible;
        const struct event_table *table;    /* the events' table */
        const struct event_table *attached; /* the same, once attached */
        bool uring_calls; /* io_uring's calls are written (records = "syscalls"): their programs attached */
        bool summed_only; /* loaded for summaries alone: no record of a call or a request can be written */
        unsigned max_items;
        /* With summed_only: the programs with records, loaded beside them while the trace runs (with the
         * privilege the daemon drops once it is done), for a reload that asks for records to put in force. */
        struct bpf_capture *with_records;
        pthread_t records_loader;
        bool records_loading;
        int records_r;
        char records_why[512];
        uint32_t generation; /* of the watch list: 0 before the first */
        uint32_t set;        /* the maps' set in force */
        uint64_t *percpu; /* n_possible values, for reading one counter */
        char uring_off[256]; /* why io_uring's programs could not be loaded: "" when they were */
};

/* libbpf's own messages: kept, not printed, so a failure can be explained in one line (each thread's own: the
 * programs with records load in one of their own). */
static __thread char libbpf_last[512];

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

/* Whether the kernel has the bpf_rdonly_cast kfunc (6.2 and later), which io_submit's exit and io_uring's
 * programs read files through (without it, their "_probed" twins); looked up once. */
static bool kernel_has_rdonly_cast(void) {
        static int has = -1;
        if (has < 0)
                has = libbpf_find_vmlinux_btf_id("bpf_rdonly_cast", BPF_TRACE_FENTRY) >= 0;
        return has;
}

static bool object_has_program(const char *name, void *userdata) {
        const struct capture *skel = userdata;
        return bpf_object__find_program_by_name(skel->obj, name) != NULL;
}

/* The program for an event, as the tracepoints' table names it; empty when the event has none. */
static void program_name(const struct capture *skel, const struct event_desc *d, char *buf, size_t size) {
        bool of_syscall = d->kind == EVENT_SYS_ENTER || d->kind == EVENT_SYS_EXIT;
        tracepoint_program(d->kind, of_syscall ? aio_syscall_name(d->syscall) : NULL, !kernel_has_rdonly_cast(),
                           object_has_program, (void *) skel, buf, size);
}

/* Whether a program of the object is loaded: its records are asked for (the event table has them), or the
 * tracepoints' table loads it with the capture whatever is asked.  -ENOENT: no row of the table names it. */
static int program_wanted(const struct capture *skel, const struct event_table *t, const char *name) {
        char want[64];
        for (size_t k = 0; k < t->n_events; k++) {
                program_name(skel, &t->events[k], want, sizeof(want));
                if (strcmp(want, name) == 0)
                        return 1;
        }
        bool named = false;
        for (enum event_kind kind = 0; kind < _EVENT_KIND_MAX; kind++) {
                const struct tracepoint *tp = tracepoint_of(kind);
                if (!tp->program)
                        continue;
                if (strchr(tp->program, '%')) {
                        /* the syscalls': of those the table lacks (io_uring's calls on a kernel without them) */
                        for (enum aio_syscall sc = 0; sc < _AIO_SYSCALL_MAX && !named; sc++) {
                                tracepoint_expand(tp->program, aio_syscall_name(sc), want, sizeof(want));
                                named = strcmp(want, name) == 0;
                                if (!named && tp->program_probed) {
                                        tracepoint_expand(tp->program_probed, aio_syscall_name(sc), want, sizeof(want));
                                        named = strcmp(want, name) == 0;
                                }
                        }
                        continue;
                }
                if (strcmp(tp->program, name) == 0 || (tp->program_probed && strcmp(tp->program_probed, name) == 0)) {
                        if (tp->program_when == PROGRAM_ALWAYS)
                                return 1;
                        if (tp->program_when == PROGRAM_IF_KERNEL)
                                return libbpf_find_vmlinux_btf_id(tp->name, BPF_TRACE_RAW_TP) >= 0;
                        named = true;
                }
        }
        return named ? 0 : -ENOENT;
}

/* The program writes the records itself: their layout must be what the format files say. */
static int check_layout(const struct event_table *t, char *error, size_t error_size) {
        for (size_t k = 0; k < t->n_events; k++) {
                int r = tracepoint_check_layout(&t->events[k], &t->common_type, error, error_size);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The maps of a load in force, for another load's programs to share (all but the constants). */
static int share_maps(struct capture *skel, const struct capture *from) {
        struct bpf_map *map;
        bpf_object__for_each_map(map, skel->obj) {
                const struct bpf_map *in_force = bpf_object__find_map_by_name(from->obj, bpf_map__name(map));
                if (map == skel->maps.rodata || !in_force)
                        continue;
                int r = bpf_map__reuse_fd(map, bpf_map__fd(in_force));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Open and load the skeleton: the programs of the table's events, io_uring's only `with_uring`; those that
 * write records of calls and requests left to the verifier to drop when the config asks for summaries alone.
 * Beside a load in force (`from`): on its maps, to take over from it. */
static int load(struct bpf_capture *c, const struct event_table *t, unsigned max_items, bool with_uring,
                const struct capture *from, char *error, size_t error_size) {
        libbpf_last[0] = 0;
        c->skel = capture__open();
        if (!c->skel) {
                int r = errno ? -errno : -ENOMEM;
                snprintf(error, error_size, "opening the BPF object: %s", strerror(-r));
                return r;
        }
        c->skel->rodata->summed_only = c->summed_only;
        c->skel->rodata->program_set = from ? !from->rodata->program_set : 0;
        if (from) {
                int r = share_maps(c->skel, from);
                if (r < 0) {
                        snprintf(error, error_size, "sharing the BPF maps: %s", strerror(-r));
                        capture__destroy(TAKE_PTR(c->skel));
                        return r;
                }
        }
        for (size_t k = 0; k < t->n_events; k++) {
                const struct event_desc *d = &t->events[k];
                if (d->kind == EVENT_SYS_EXIT)
                        c->skel->rodata->exit_tp_id[d->syscall] = (uint16_t) d->tp_id;
                else if (d->kind == EVENT_SYS_ENTER)
                        c->skel->rodata->enter_tp_id[d->syscall] = (uint16_t) d->tp_id;
                else
                        c->skel->rodata->tp_id_of[d->kind] = (uint16_t) d->tp_id;
        }
        c->skel->rodata->max_items = MIN(max_items, (unsigned) CAPTURE_MAX_ITEMS);
        /* In a container, the records' pids are the container's, as perf's samples are. */
        struct pidns ns;
        if (pidns_of_self("/proc", &ns) >= 0 && ns.ino != PIDNS_INIT_INO) {
                c->skel->rodata->pidns_dev = kernel_dev(ns.dev);
                c->skel->rodata->pidns_ino = ns.ino;
                c->skel->rodata->pidns_level = ns.level;
        }
        /* Cgroup paths walked in the kernel end at the top of the daemon's cgroup v2 mount, as /proc/PID/cgroup's
         * do (in a cgroup namespace, its root's); with none mounted, at the hierarchy's root. */
        char cgroot[4096];
        struct stat cg;
        if (cgroup2_mount_point("/proc/self/mountinfo", cgroot, sizeof(cgroot)) == 0 && stat(cgroot, &cg) == 0)
                c->skel->rodata->cgroup_root_id = cg.st_ino;
        /* Paths walked in the kernel end at the daemon's root, as those /proc gives it do. */
        struct statx root;
        if (statx(AT_FDCWD, "/", 0, STATX_INO | STATX_MNT_ID, &root) == 0 && (root.stx_mask & STATX_MNT_ID)) {
                c->skel->rodata->root_mnt_id = (uint32_t) root.stx_mnt_id;
                c->skel->rodata->root_ino = root.stx_ino;
        }
        bpf_map__set_max_entries(c->skel->maps.scratch, (uint32_t) c->n_possible);
        struct bpf_program *prog;
        bpf_object__for_each_program(prog, c->skel->obj) {
                const char *name = bpf_program__name(prog);
                int wanted = program_wanted(c->skel, t, name);
                if (wanted < 0) {
                        snprintf(error, error_size, "the BPF program %s has no row in the tracepoints' table", name);
                        capture__destroy(TAKE_PTR(c->skel));
                        return -EPROTO;
                }
                /* For summaries alone, neither the direct reads' kernel view nor io_uring's calls (written only
                 * with records = "syscalls"): a reload that asks for them puts the whole set in force first. */
                if (!wanted || (!with_uring && strncmp(name, "uring_", 6) == 0) ||
                    (c->summed_only && (prog == c->skel->progs.aio_dio_begin || strstr(name, "_io_uring_"))))
                        bpf_program__set_autoload(prog, false);
        }
        int r = capture__load(c->skel);
        if (r < 0) {
                /* EACCES is also the verifier's refusal: libbpf's message then says which program */
                if (r == -EPERM || (r == -EACCES && !libbpf_last[0]))
                        snprintf(error, error_size,
                                 "loading the BPF programs: %s (needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN; a "
                                 "seccomp filter must allow bpf())",
                                 strerror(-r));
                else
                        snprintf(error, error_size, "loading the BPF programs: %s%s%s", strerror(-r),
                                 libbpf_last[0] ? ": " : "", libbpf_last);
                capture__destroy(TAKE_PTR(c->skel));
        }
        return r;
}

static bool table_has_uring(const struct event_table *t) {
        for (size_t k = 0; k < t->n_events; k++)
                if (t->events[k].kind == EVENT_URING_SUBMIT)
                        return true;
        return false;
}

int bpf_capture_open(const struct event_table *t, unsigned max_items, bool summed_only, struct bpf_capture **ret,
                     char *error, size_t error_size) {
        int r = check_layout(t, error, error_size);
        if (r < 0)
                return r;
        libbpf_set_print(keep_libbpf_message);

        struct bpf_capture *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->n_events = t->n_events;
        c->summed_only = summed_only;
        c->max_items = max_items;
        c->table = t;
        c->n_possible = libbpf_num_possible_cpus();
        if (c->n_possible <= 0) {
                r = c->n_possible <= 0 ? c->n_possible : -ENOMEM;
                snprintf(error, error_size, "counting the possible CPUs: %s", strerror(-r));
                goto fail;
        }
        c->percpu = calloc((size_t) c->n_possible, sizeof(uint64_t));
        if (!c->percpu) {
                r = -ENOMEM;
                snprintf(error, error_size, "opening the BPF object: %s", strerror(-r));
                goto fail;
        }
        bool with_uring = table_has_uring(t);
        if (!with_uring)
                snprintf(c->uring_off, sizeof(c->uring_off), "the kernel has no io_uring tracepoints");
        r = load(c, t, max_items, with_uring, NULL, error, error_size);
        if (r < 0 && with_uring && r != -EPERM) {
                /* io_uring's programs read the kernel's own structures: without them AIO is still traced */
                snprintf(c->uring_off, sizeof(c->uring_off), "%s", error);
                r = load(c, t, max_items, false, NULL, error, error_size);
        }
        if (r < 0)
                goto fail;

        /* the tracepoints' table and the object agree: every program it names is there */
        for (size_t k = 0; k < t->n_events; k++) {
                const struct event_desc *d = &t->events[k];
                char name[64];
                program_name(c->skel, d, name, sizeof(name));
                if (name[0] && !object_has_program(name, c->skel)) {
                        r = -ENOENT;
                        snprintf(error, error_size, "no BPF program %s for %s:%s", name, d->system, d->name);
                        goto fail;
                }
        }
        for (enum event_kind kind = 0; kind < _EVENT_KIND_MAX; kind++) {
                const struct tracepoint *tp = tracepoint_of(kind);
                if (tp->program && !strchr(tp->program, '%') && !object_has_program(tp->program, c->skel)) {
                        r = -ENOENT;
                        snprintf(error, error_size, "no BPF program %s for %s:%s", tp->program, tp->system, tp->name);
                        goto fail;
                }
        }
        *ret = c;
        return 0;
fail:
        bpf_capture_free(c);
        return r;
}

const char *bpf_capture_uring_off(const struct bpf_capture *c) {
        return c->uring_off[0] ? c->uring_off : NULL;
}

static void *link_destroy(void *link) {
        bpf_link__destroy(link);
        return NULL;
}

/* Each link's end waits for an RCU grace period in the kernel (tens of ms in a VM; 1.2 s for the lot one after
 * the other, at every stop): they end in threads of their own, and the waits overlap. */
static void links_destroy(struct bpf_link **links, size_t n) {
        pthread_t threads[EVENTS_MAX + 5];
        bool started[EVENTS_MAX + 5] = {};
        for (size_t i = 0; i < n && i < ELEMENTSOF(threads); i++)
                if (links[i])
                        started[i] = pthread_create(&threads[i], NULL, link_destroy, links[i]) == 0;
        for (size_t i = 0; i < n; i++) {
                if (i < ELEMENTSOF(threads) && started[i])
                        pthread_join(threads[i], NULL);
                else
                        bpf_link__destroy(links[i]);
                links[i] = NULL;
        }
}

/* The programs detached; unloaded, and the maps go with the last load that holds them. */
static void detach(struct bpf_capture *c) {
        struct bpf_link *links[EVENTS_MAX + 5];
        size_t n = 0;
        for (size_t k = 0; k < c->n_events; k++)
                links[n++] = c->links[k];
        links[n++] = c->fork_link;
        links[n++] = c->exit_group_link;
        links[n++] = c->cgroup_link;
        links[n++] = c->dio_link;
        links[n++] = c->uring_create_link;
        links_destroy(links, n);
        c->fork_link = c->exit_group_link = c->cgroup_link = c->dio_link = c->uring_create_link = NULL;
}

static void unload(struct bpf_capture *c) {
        detach(c);
        capture__destroy(TAKE_PTR(c->skel));
}

static void *load_records(void *userdata) {
        struct bpf_capture *c = userdata;
        struct bpf_capture *n = calloc(1, sizeof(*n));
        if (!n) {
                c->records_r = -ENOMEM;
                snprintf(c->records_why, sizeof(c->records_why), "%s", strerror(ENOMEM));
                return NULL;
        }
        *n = (struct bpf_capture) { .n_events = c->n_events, .n_possible = c->n_possible, .max_items = c->max_items,
                                    .table = c->table };
        c->records_r = load(n, c->table, c->max_items, !c->uring_off[0], c->skel, c->records_why,
                            sizeof(c->records_why));
        if (c->records_r < 0)
                free(n);
        else
                c->with_records = n;
        return NULL;
}

int bpf_capture_prepare_records(struct bpf_capture *c) {
        if (!c->summed_only || c->records_loading || c->with_records)
                return 0;
        int r = -pthread_create(&c->records_loader, NULL, load_records, c);
        c->records_loading = r == 0;
        if (r < 0) {
                c->records_r = r;
                snprintf(c->records_why, sizeof(c->records_why), "starting its thread: %s", strerror(-r));
        }
        return r;
}

static void records_loaded(struct bpf_capture *c) {
        if (c->records_loading)
                pthread_join(c->records_loader, NULL);
        c->records_loading = false;
}

void bpf_capture_free(struct bpf_capture *c) {
        if (!c)
                return;
        records_loaded(c);
        if (c->with_records) {
                unload(c->with_records);
                free(c->with_records);
        }
        unload(c);
        free(c->sum_values);
        free(c->percpu);
        free(c);
}

/* io_uring_setup, _enter and _register: written only as calls, so their programs are attached only while
 * calls are (each costs every io_uring_enter of every process a program run). */
static bool uring_call_event(const struct event_desc *d) {
        return (d->kind == EVENT_SYS_ENTER || d->kind == EVENT_SYS_EXIT) && d->syscall >= AIO_URING_SYSCALL_FIRST;
}

static int attach_event(struct bpf_capture *c, size_t k, const struct event_desc *d, char *error, size_t error_size) {
        char name[64];
        program_name(c->skel, d, name, sizeof(name));
        struct bpf_program *prog = name[0] ? bpf_object__find_program_by_name(c->skel->obj, name) : NULL;
        if (!prog || c->links[k] || !bpf_program__autoload(prog))
                return 0;
        /* A program belongs to the tracepoint, not to one CPU: it runs for every hit, on any CPU.  libbpf opens one
         * event for it that samples nothing, and a BPF link where the kernel has them. */
        c->links[k] = bpf_program__type(prog) == BPF_PROG_TYPE_TRACING
                              ? bpf_program__attach(prog) /* tp_btf: the tracepoint's own arguments */
                              : bpf_program__attach_tracepoint(prog, d->system, d->name);
        if (!c->links[k]) {
                int r = -errno;
                snprintf(error, error_size, "attaching the BPF program to %s:%s: %s%s%s", d->system, d->name,
                         strerror(-r), libbpf_last[0] ? ": " : "", libbpf_last);
                return r;
        }
        return 0;
}

/* io_uring's call programs attached or detached as c->uring_calls says. */
static int sync_uring_calls(struct bpf_capture *c, char *error, size_t error_size) {
        const struct event_table *t = c->attached;
        for (size_t k = 0; t && k < t->n_events; k++) {
                if (!uring_call_event(&t->events[k]))
                        continue;
                if (!c->uring_calls) {
                        bpf_link__destroy(c->links[k]);
                        c->links[k] = NULL;
                        continue;
                }
                int r = attach_event(c, k, &t->events[k], error, error_size);
                if (r < 0)
                        return r;
        }
        return 0;
}

int bpf_capture_attach(struct bpf_capture *c, const struct event_table *t, char *error, size_t error_size) {
        for (size_t k = 0; k < t->n_events; k++) {
                if (uring_call_event(&t->events[k]))
                        continue;
                int r = attach_event(c, k, &t->events[k], error, error_size);
                if (r < 0)
                        return r;
        }
        c->attached = t;
        int r = sync_uring_calls(c, error, error_size);
        if (r < 0)
                return r;
        struct {
                struct bpf_link **link;
                struct bpf_program *prog;
                const char *where;
        } extra[] = {
                { &c->fork_link, c->skel->progs.proc_fork, "sched:sched_process_fork" },
                { &c->exit_group_link, c->skel->progs.proc_exit_group, "syscalls:sys_enter_exit_group" },
        };
        for (size_t i = 0; i < ELEMENTSOF(extra); i++) {
                if (*extra[i].link)
                        continue;
                *extra[i].link = bpf_program__attach(extra[i].prog);
                if (!*extra[i].link) {
                        r = -errno;
                        snprintf(error, error_size, "attaching the BPF program to %s: %s%s%s", extra[i].where,
                                 strerror(-r), libbpf_last[0] ? ": " : "", libbpf_last);
                        return r;
                }
        }
        /* Without it (an old kernel) cgroups made later are looked for at every look, a second apart. */
        if (!c->cgroup_link)
                c->cgroup_link = bpf_program__attach(c->skel->progs.cgroup_made);
        /* Without it, an iocb written during its call by another thread goes unseen on direct I/O too. */
        if (!c->dio_link && bpf_program__autoload(c->skel->progs.aio_dio_begin))
                c->dio_link = bpf_program__attach(c->skel->progs.aio_dio_begin);
        /* Without it, the completions keep to the ring their owner submitted to all the same (its memory). */
        if (!c->uring_create_link && bpf_program__autoload(c->skel->progs.uring_created))
                c->uring_create_link = bpf_program__attach(c->skel->progs.uring_created);
        return 0;
}

unsigned bpf_capture_cgroup_looks(const struct bpf_capture *c) {
        return c->cgroup_looks;
}

int bpf_capture_set_rings(struct bpf_capture *c, const struct perf_session *ps, char *error, size_t error_size) {
        int fd = bpf_map__fd(c->skel->maps.rings);
        for (size_t i = 0; i < ps->n_cpus; i++) {
                if (ps->cpus[i].live_fd < 0)
                        continue; /* offline since the start: set once its ring is there */
                uint32_t cpu = (uint32_t) ps->cpus[i].life.cpu;
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

/* OR bit into the mask a map keeps for key. */
static int or_mask(int map, const void *key, uint64_t bit) {
        uint64_t mask = 0;
        (void) bpf_map_lookup_elem(map, key, &mask);
        mask |= bit;
        return bpf_map_update_elem(map, key, &mask, BPF_ANY) < 0 ? -errno : 0;
}


struct cgroup_fill {
        int map;
        uint32_t set;
        uint64_t bits[CGROUP_PATTERNS_MAX]; /* of each pattern's entry */
        unsigned added;                     /* keys that were not in the map */
};

static int add_cgroup(void *userdata, size_t which, const char *path, uint64_t id) {
        struct cgroup_fill *f = userdata;
        (void) path;
        struct capture_cgroup_key key = { .set = f->set, .id = id };
        uint64_t mask;
        if (bpf_map_lookup_elem(f->map, &key, &mask) < 0 || !(mask & f->bits[which]))
                f->added++;
        return or_mask(f->map, &key, f->bits[which]);
}

/* The cgroups every cgroup entry matches now, in one walk of the tree: how many keys were new, or a negative
 * errno.  The count of cgroups made is read first: one made during the walk is looked for again. */
static int fill_cgroups(struct bpf_capture *c, const struct config *cfg, const struct watch_plan *plan, uint32_t set) {
        const char *patterns[CGROUP_PATTERNS_MAX];
        struct cgroup_fill f = { .map = bpf_map__fd(c->skel->maps.watch_cgroups), .set = set };
        size_t n = 0;
        for (size_t i = 0; i < cfg->n_watch && n < CGROUP_PATTERNS_MAX; i++)
                if (cfg->watch[i].keys & WATCH_KEY_CGROUP) {
                        f.bits[n] = plan->bits[i];
                        patterns[n++] = cfg->watch[i].cgroup;
                }
        c->cgroups_seen = __atomic_load_n(&c->skel->bss->cgroups_made, __ATOMIC_ACQUIRE);
        char root[4096];
        if (!n || cgroup2_mount_point("/proc/self/mountinfo", root, sizeof(root)) < 0)
                return 0;
        c->cgroup_looks++;
        int r = cgroup_find_all(root, patterns, n, add_cgroup, &f, NULL);
        return r < 0 && r != -ENOENT ? r : (int) f.added;
}

/* The keys of one entry, in set `set`. */
static int fill_entry(struct bpf_capture *c, const struct watch *wa, uint64_t bit, uint32_t set,
                      struct capture_watch *w) {
        int r = 0;
        if (wa->keys & WATCH_KEY_COMM) {
                if (wa->comm_glob) {
                        struct capture_glob g = { .mask = bit };
                        snprintf(g.pat, sizeof(g.pat), "%s", wa->comm);
                        uint32_t index = set * CAPTURE_MAX_GLOBS + w->n_globs++;
                        if (w->n_globs > CAPTURE_MAX_GLOBS)
                                return -E2BIG;
                        r = bpf_map_update_elem(bpf_map__fd(c->skel->maps.watch_globs), &index, &g, BPF_ANY) < 0 ? -errno : 0;
                } else {
                        struct capture_comm key = { .set = set };
                        memcpy(key.comm, wa->comm, strnlen(wa->comm, CAPTURE_COMM_SIZE - 1));
                        r = or_mask(bpf_map__fd(c->skel->maps.watch_names), &key, bit);
                        w->n_names++;
                }
        }
        if (r >= 0 && (wa->keys & WATCH_KEY_PID)) {
                struct capture_id_key key = { .set = set, .id = (uint32_t) wa->pid };
                struct capture_id v = {};
                int map = bpf_map__fd(c->skel->maps.watch_ids);
                (void) bpf_map_lookup_elem(map, &key, &v);
                v.mask |= bit;
                v.follow |= wa->children ? bit : 0;
                v.followed = 0;
                r = bpf_map_update_elem(map, &key, &v, BPF_ANY) < 0 ? -errno : 0;
        }
        /* the keys whose row gives the capture's keys for their value */
        for (size_t k = 0; r >= 0 && k < watch_n_keys; k++) {
                const struct watch_key *row = &watch_keys[k];
                if (!row->capture_keys || !(wa->keys & row->flag))
                        continue;
                struct watch_capture_key keys[WATCH_CAPTURE_KEYS_MAX];
                size_t n = row->capture_keys(wa, set, keys);
                for (size_t i = 0; r >= 0 && i < n; i++) {
                        const struct bpf_map *map = bpf_object__find_map_by_name(c->skel->obj, keys[i].map);
                        if (!map || bpf_map__key_size(map) != keys[i].size)
                                r = -EPROTO; /* the row and the BPF program disagree: a build's mistake */
                        else
                                r = or_mask(bpf_map__fd(map), keys[i].key, bit);
                }
        }
        return r;
}

/* Remove every key of set `set` from a map whose keys begin with their set. */
static void drop_set(int map, size_t key_size, uint32_t set) {
        _cleanup_(freep) uint8_t *keys = malloc(64 * key_size), *cur = malloc(key_size), *key = malloc(key_size);
        if (!keys || !cur || !key)
                return;
        size_t n_stale;
        do {
                n_stale = 0;
                void *prev = NULL;
                while (n_stale < 64 && bpf_map_get_next_key(map, prev, key) == 0) {
                        memcpy(cur, key, key_size);
                        prev = cur;
                        uint32_t key_set;
                        memcpy(&key_set, key, sizeof(key_set));
                        if (key_set == set)
                                memcpy(keys + key_size * n_stale++, key, key_size);
                }
                for (size_t i = 0; i < n_stale; i++)
                        (void) bpf_map_delete_elem(map, keys + key_size * i);
        } while (n_stale == 64);
}

/* Every watch map keyed by set (a hash whose keys begin with it): the set's keys removed. */
static void drop_sets(struct bpf_capture *c, uint32_t set) {
        const struct bpf_map *map;
        bpf_object__for_each_map(map, c->skel->obj)
                if (strncmp(bpf_map__name(map), "watch_", 6) == 0 && bpf_map__type(map) == BPF_MAP_TYPE_HASH)
                        drop_set(bpf_map__fd(map), bpf_map__key_size(map), set);
}

/* The processes followed as children in set `from` that the new config still follows, into set `to`. */
static void carry_followed(struct bpf_capture *c, const struct config *cfg, const struct watch_plan *plan,
                           uint32_t from, uint32_t to) {
        int map = bpf_map__fd(c->skel->maps.watch_ids);
        struct capture_id_key key, cur, *prev = NULL;
        while (bpf_map_get_next_key(map, prev, &key) == 0) {
                cur = key;
                prev = &cur;
                struct capture_id v;
                if (key.set != from || bpf_map_lookup_elem(map, &key, &v) < 0 || !v.followed)
                        continue;
                uint64_t bits = watch_plan_follow_of(plan, cfg->watch, cfg->n_watch, (pid_t) v.root);
                if (!bits)
                        continue;
                struct capture_id_key to_key = { .set = to, .id = key.id };
                struct capture_id nv = { .mask = bits, .follow = bits, .followed = 1, .root = v.root };
                (void) bpf_map_update_elem(map, &to_key, &nv, BPF_NOEXIST);
        }
}

/* The programs with records, loaded beside the running ones and on their maps, attached, then in force in their
 * place: nothing is traced twice or missed meanwhile.  On failure the running ones stay. */
static int put_records_in_force(struct bpf_capture *c, char *error, size_t error_size) {
        records_loaded(c);
        struct bpf_capture *next = c->with_records;
        char why[512];
        int r = next ? 0 : c->records_r ? c->records_r : -ENOENT;
        if (!next)
                snprintf(why, sizeof(why), "%s", c->records_r ? c->records_why : "they were not loaded at start");
        if (r >= 0) {
                next->uring_calls = c->uring_calls;
                r = bpf_capture_attach(next, c->attached, why, sizeof(why));
        }
        if (r < 0) {
                snprintf(error, error_size, "the records it asks for need the capture's programs with records: %s",
                         why);
                if (next)
                        detach(next); /* the programs stay loaded, for the next reload */
                return r;
        }
        __atomic_store_n(&next->skel->bss->programs_in_force, next->skel->rodata->program_set, __ATOMIC_SEQ_CST);
        unload(c);
        c->skel = TAKE_PTR(next->skel);
        memcpy(c->links, next->links, sizeof(c->links));
        c->fork_link = next->fork_link;
        c->exit_group_link = next->exit_group_link;
        c->cgroup_link = next->cgroup_link;
        c->dio_link = next->dio_link;
        c->uring_create_link = next->uring_create_link;
        free(TAKE_PTR(c->with_records));
        c->summed_only = false;
        return 0;
}

int bpf_capture_set_watch(struct bpf_capture *c, const struct config *cfg, char *error, size_t error_size) {
        if (c->summed_only && !config_summed_in_kernel(cfg)) {
                int r = put_records_in_force(c, error, error_size);
                if (r < 0)
                        return r;
        }
        struct watch_plan plan;
        int r = watch_plan_build(cfg->watch, cfg->n_watch, &plan);
        if (r < 0) {
                /* config_load refuses such a list: only a caller that skipped it gets here */
                snprintf(error, error_size, "the in-kernel capture takes at most %d entries that combine keys",
                         CAPTURE_MAX_COMBINED);
                return r;
        }
        uint32_t old_set = c->set, set = c->generation ? !c->set : 0;
        drop_sets(c, set); /* what a failed reload may have left */
        bool summed = config_summed_in_kernel(cfg);
        struct capture_watch w = { .all = cfg->n_watch == 0, .generation = c->generation + 1, .set = set,
                                   .uring = cfg->io_uring,
                                   .uring_calls = cfg->io_uring && (cfg->records & RECORD_SYSCALLS),
                                   .all_summed = summed, .summed = summed ? plan.all : 0,
                                   .bits = plan.all, .follow = plan.follow };
        memcpy(w.need, plan.need, sizeof(w.need));
        for (size_t i = 0; r >= 0 && i < cfg->n_watch; i++)
                r = fill_entry(c, &cfg->watch[i], plan.bits[i], set, &w);
        if (r >= 0)
                r = fill_cgroups(c, cfg, &plan, set);
        if (r >= 0 && c->generation)
                carry_followed(c, cfg, &plan, old_set, set);
        uint32_t zero = 0;
        if (r >= 0 && bpf_map_update_elem(bpf_map__fd(c->skel->maps.watch), &zero, &w, BPF_ANY) < 0)
                r = -errno;
        if (r < 0) {
                if (r == -E2BIG)
                        snprintf(error, error_size, "the in-kernel capture takes at most %d pids, %d exact names "
                                 "and %d globs", CAPTURE_MAX_IDS, CAPTURE_MAX_NAMES, CAPTURE_MAX_GLOBS);
                else
                        snprintf(error, error_size, "setting the watch list of the BPF programs: %s", strerror(-r));
                drop_sets(c, set);
                watch_plan_done(&plan);
                return r;
        }
        c->generation++;
        c->set = set;
        /* Only now, so that what is watched before and after is never unwatched; children forked meanwhile
         * went into the old set. */
        if (c->generation > 1) {
                carry_followed(c, cfg, &plan, old_set, set);
                drop_sets(c, old_set);
        }
        watch_plan_done(&plan);
        if (c->uring_calls == (bool) w.uring_calls)
                return 0;
        c->uring_calls = w.uring_calls;
        return sync_uring_calls(c, error, error_size); /* before the attach, only noted */
}

int bpf_capture_refresh_cgroups(struct bpf_capture *c, const struct config *cfg) {
        bool any = false;
        for (size_t i = 0; i < cfg->n_watch; i++)
                any = any || (cfg->watch[i].keys & WATCH_KEY_CGROUP);
        /* nothing made since the last look: nothing to look for */
        if (!any || (c->cgroup_link && __atomic_load_n(&c->skel->bss->cgroups_made, __ATOMIC_ACQUIRE) == c->cgroups_seen))
                return 0;
        struct watch_plan plan;
        int r = watch_plan_build(cfg->watch, cfg->n_watch, &plan);
        if (r < 0)
                return r;
        int added = fill_cgroups(c, cfg, &plan, c->set);
        watch_plan_done(&plan);
        if (added <= 0)
                return added;
        /* threads whose verdict was made without the new cgroups make it again */
        uint32_t zero = 0;
        struct capture_watch w;
        if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.watch), &zero, &w) < 0)
                return -errno;
        w.generation = ++c->generation;
        return bpf_map_update_elem(bpf_map__fd(c->skel->maps.watch), &zero, &w, BPF_ANY) < 0 ? -errno : added;
}

void bpf_capture_stop(struct bpf_capture *c) {
        struct capture_watch none = { .generation = ++c->generation };
        uint32_t zero = 0;
        (void) bpf_map_update_elem(bpf_map__fd(c->skel->maps.watch), &zero, &none, BPF_ANY);
        drop_sets(c, 0);
        drop_sets(c, 1);
}

/* One map's entries, read and deleted in batches (its keys and values copied out, KEYS a batch). */
#define SUM_BATCH 32
static int take_all(struct bpf_capture *c, int fd, bpf_capture_each_sum each, void *userdata) {
        if (!c->sum_values) {
                c->sum_values = malloc(SUM_BATCH * sizeof(struct capture_sum));
                if (!c->sum_values)
                        return -ENOMEM;
        }
        struct capture_sum_key keys[SUM_BATCH];
        uint32_t batch = 0;
        int taken = 0;
        for (bool first = true;; first = false) {
                __u32 count = SUM_BATCH;
                int r = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &batch, &batch, keys, c->sum_values, &count,
                                                        NULL);
                if (r < 0 && errno != ENOENT)
                        return -errno;
                for (__u32 i = 0; i < count; i++, taken++)
                        each(userdata, &keys[i], &c->sum_values[i]);
                if (r < 0) /* ENOENT: no more */
                        return taken;
        }
}

/* One process's entries of one map: by key, or, its start not known, by pid alone. */
static int take_one(struct bpf_capture *c, int fd, uint32_t pid, uint64_t start_time, bpf_capture_each_sum each,
                    void *userdata) {
        struct capture_sum_key key = { .pid = pid, .start_time = start_time }, next;
        int taken = 0;
        if (start_time) {
                if (bpf_map_lookup_and_delete_elem(fd, &key, &c->one_sum) == 0) {
                        each(userdata, &key, &c->one_sum);
                        taken++;
                }
                return taken;
        }
        for (const void *prev = NULL; bpf_map_get_next_key(fd, prev, &next) == 0; prev = &key) {
                key = next;
                if (key.pid == pid && bpf_map_lookup_and_delete_elem(fd, &key, &c->one_sum) == 0) {
                        each(userdata, &key, &c->one_sum);
                        taken++;
                        prev = NULL; /* the walk starts again: the key it was at is gone */
                }
        }
        return taken;
}

int bpf_capture_take_sums(struct bpf_capture *c, uint32_t pid, uint64_t start_time, bpf_capture_each_sum each,
                          void *userdata) {
        int fds[2] = { bpf_map__fd(c->skel->maps.proc_sums_0), bpf_map__fd(c->skel->maps.proc_sums_1) };
        if (pid) {
                int a = take_one(c, fds[0], pid, start_time, each, userdata);
                int b = take_one(c, fds[1], pid, start_time, each, userdata);
                return a + b;
        }
        /* the programs count into the other map from now on; one that read the old generation a moment ago
         * finishes its update within microseconds (its tracepoint runs with preemption off) */
        uint32_t old = __atomic_fetch_xor(&c->skel->bss->sum_gen, 1, __ATOMIC_SEQ_CST) & 1;
        usleep(1000);
        return take_all(c, fds[old], each, userdata);
}

/* Key by key: where the kernel cannot look up a hash map's elements in batches. */
static int inflight_one_by_one(int fd, bpf_capture_each_inflight each, void *userdata) {
        struct sum_key key, next;
        struct sum_req r;
        for (const struct sum_key *at = NULL; bpf_map_get_next_key(fd, at, &next) == 0; at = &key) {
                if (bpf_map_lookup_elem(fd, &next, &r) == 0)
                        each(userdata, &next, &r);
                key = next;
        }
        return errno == ENOENT ? 0 : -errno;
}

int bpf_capture_inflight(struct bpf_capture *c, bpf_capture_each_inflight each, void *userdata) {
        enum { BATCH = 256 };
        int fd = bpf_map__fd(c->skel->maps.sum_inflight);
        _cleanup_(freep) struct sum_key *keys = malloc(BATCH * sizeof(*keys));
        _cleanup_(freep) struct sum_req *reqs = malloc(BATCH * sizeof(*reqs));
        if (!keys || !reqs)
                return -ENOMEM;
        uint32_t token = 0;
        for (bool first = true;; first = false) {
                uint32_t n = BATCH;
                LIBBPF_OPTS(bpf_map_batch_opts, opts);
                int r = bpf_map_lookup_batch(fd, first ? NULL : &token, &token, keys, reqs, &n, &opts);
                int err = r < 0 ? errno : 0;
                if (r < 0 && err != ENOENT) {
                        /* a bucket of more than BATCH (ENOSPC), or no batches here: from where it stood */
                        return first ? inflight_one_by_one(fd, each, userdata) : -err;
                }
                for (uint32_t i = 0; i < n; i++)
                        each(userdata, &keys[i], &reqs[i]);
                if (err == ENOENT)
                        return 0; /* the last batch */
        }
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

int bpf_capture_run_time(const struct bpf_capture *c, bpf_capture_each_prog each, void *userdata, uint64_t *ret_runs,
                         uint64_t *ret_ns) {
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
                if (each && info.run_cnt > 0)
                        each(bpf_program__name(prog), info.run_cnt, info.run_time_ns, userdata);
        }
        *ret_runs = runs;
        *ret_ns = ns;
        return 0;
}

#else /* !HAVE_BPF_CAPTURE */

int bpf_capture_open(const struct event_table *t, unsigned max_items, bool summed_only, struct bpf_capture **ret,
                     char *error, size_t error_size) {
        snprintf(error, error_size, "this aiotraced was built without the in-kernel capture (configure found no "
                                    "clang, bpftool or libbpf)");
        return -EOPNOTSUPP;
}

const char *bpf_capture_uring_off(const struct bpf_capture *c) {
        (void) c;
        return "built without the capture";
}

void bpf_capture_free(struct bpf_capture *c) {
}

int bpf_capture_inflight(struct bpf_capture *c, bpf_capture_each_inflight each, void *userdata) {
        (void) c, (void) each, (void) userdata;
        return 0;
}

int bpf_capture_prepare_records(struct bpf_capture *c) {
        (void) c;
        return 0;
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

int bpf_capture_take_sums(struct bpf_capture *c, uint32_t pid, uint64_t start_time, bpf_capture_each_sum each,
                          void *userdata) {
        (void) c, (void) pid, (void) start_time, (void) each, (void) userdata;
        return 0;
}

int bpf_capture_refresh_cgroups(struct bpf_capture *c, const struct config *cfg) {
        (void) c, (void) cfg;
        return 0;
}

void bpf_capture_stop(struct bpf_capture *c) {
}

unsigned bpf_capture_cgroup_looks(const struct bpf_capture *c) {
        return 0;
}

uint64_t bpf_capture_counter(const struct bpf_capture *c, int cpu, enum capture_counter which) {
        return 0;
}

const uint64_t *bpf_capture_counters(const struct bpf_capture *c, enum capture_counter which) {
        return NULL;
}

int bpf_capture_run_time(const struct bpf_capture *c, bpf_capture_each_prog each, void *userdata, uint64_t *ret_runs,
                         uint64_t *ret_ns) {
        return -EOPNOTSUPP;
}
#endif
