/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Start: the config and what start would refuse of it, the privileged opens (tracefs, the capture, the rings),
 * the privilege dropped, the engine wired to the sink. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "cpulist.h"
#include "fileio.h"
#include "safefile.h"
#include "select.h"
#include "tracefs.h"
#include "unit_sandbox.h"
#include "util.h"

/* Once its events are open, the daemon keeps only what tracing needs from then on: reading the traced
 * processes' memory and /proc entries (CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH) and opening events again
 * (CAP_PERFMON): a new set when the filter changes, without the capture, and a CPU's set when the CPU is back
 * from offline.  The bounding set too, so nothing can come back.  Called before any other thread exists:
 * capabilities are per thread. */
static int drop_capabilities(char *error, size_t error_size) {
        uint64_t keep = (1ull << CAP_SYS_PTRACE) | (1ull << CAP_DAC_READ_SEARCH) | (1ull << CAP_PERFMON);
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
                snprintf(error, error_size, "PR_SET_NO_NEW_PRIVS: %m");
                return -errno;
        }
        for (int cap = 0; cap <= 63; cap++)
                if (!(keep & (1ull << cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL &&
                    errno != EPERM) /* EPERM: no CAP_SETPCAP, as under the unit, whose bounding set is set */
                        break;
        struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[2];
        if (syscall(SYS_capget, &header, data) < 0) {
                snprintf(error, error_size, "capget: %m");
                return -errno;
        }
        for (int i = 0; i < 2; i++) {
                uint32_t mask = (uint32_t) (keep >> (32 * i));
                data[i].effective &= mask;
                data[i].permitted &= mask;
                data[i].inheritable = 0;
        }
        if (syscall(SYS_capset, &header, data) < 0) {
                snprintf(error, error_size, "capset: %m");
                return -errno;
        }
        return 0;
}

static bool has_capability(int cap) {
        struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[2];
        return syscall(SYS_capget, &header, data) == 0 && (data[cap / 32].effective & (1u << (cap % 32)));
}

static void report_unlisted_pid(void *userdata, const struct watch *w, int error) {
        const struct daemon *d = userdata;
        log_warning("%s:%u: watched pid %d: %s; it is skipped", d->opt.config_path, w->line, w->pid,
                    error == -ENOENT ? "no such process" : strerror(-error));
}

void report_watch_entry(void *userdata, const struct watch *w, const char *what) {
        const struct daemon *d = userdata;
        char entry[1024];
        watch_entry_describe(w, entry, sizeof(entry));
        log_warning("%s:%u: watch %s: %s", d->opt.config_path, w->line, entry, what);
}

/* The selection in force: the capture's maps, or the tracepoints' filters (a new set of events). */
int apply_selection(struct daemon *d, const struct config *c, char *error, size_t error_size) {
        if (d->capture)
                return bpf_capture_set_watch(d->capture, c, error, error_size);
        watch_threads_collect(&d->threads, c->watch, c->n_watch, report_unlisted_pid, d);
        struct watch_filters f;
        int r = watch_filters_build(c->watch, c->n_watch, &d->threads, &f);
        if (r == -E2BIG) {
                snprintf(error, error_size, "the kernel filter for this watch list (its comm patterns and the %zu "
                         "threads of its pids) is longer than the %d bytes the kernel takes", d->threads.n, FILTER_MAX);
                return r;
        }
        if (r < 0) {
                snprintf(error, error_size, "building the filter: %s", strerror(-r));
                return r;
        }
        r = perf_session_attach(&d->perf, d->events, &(struct perf_filters) {
                .syscalls = f.syscalls, .fork = f.fork, .process_exit = f.process_exit }, error, error_size);
        watch_filters_done(&f);
        return r;
}

static void on_fork(void *userdata, uint32_t parent, uint32_t child) {
        struct daemon *d = userdata;
        int followed = watch_threads_fork(&d->threads, d->config->watch, d->config->n_watch, parent, child);
        if (followed <= 0)
                return; /* a child process not followed, or a thread already gone */
        char error[512];
        int r = apply_selection(d, d->config, error, sizeof(error));
        if (r < 0) {
                d->follow_failed++;
                emit_event(d, INFO_NOTE, LOG_ERR, "cannot follow thread %u (created by %u): %s", child, parent,
                           error);
                return;
        }
        if (followed == 2)
                emit_info(d, "following process %u (created by %u), a descendant of watched pid %u", child, parent,
                          watch_threads_root_of(&d->threads, child));
        else
                emit_info(d, "following thread %u of a watched pid (created by %u)", child, parent);
}

/* Without the capture: whether a thread is watched, where the kernel's filter cannot tell. */
static int on_select(void *userdata, uint32_t pid, uint32_t tid, const char *comm) {
        struct daemon *d = userdata;
        (void) tid;
        if (!watch_needs_user_space(d->config->watch, d->config->n_watch))
                return 1; /* the kernel's filter said it all */
        struct proc_facts f;
        int r = proc_facts_read(d->threads.proc_root, pid, &f);
        if (r < 0)
                return r;
        snprintf(f.comm, sizeof(f.comm), "%s", comm);
        f.followed_root = watch_threads_root_of(&d->threads, pid);
        return watch_selects(d->config->watch, d->config->n_watch, &f);
}

static void take_sum(void *userdata, const struct capture_sum_key *key, const struct capture_sum *sum) {
        struct daemon *d = userdata;
        tracker_kernel_sum(&d->engine.tracker, key->pid, key->start_time, sum, d->engine.processed_up_to);
}

/* What the capture summed in the kernel, to the tracker: before an interval's summaries, or a process's last. */
static void on_collect(void *userdata, uint32_t pid, uint64_t start_time) {
        struct daemon *d = userdata;
        int r = bpf_capture_take_sums(d->capture, pid, start_time, take_sum, d);
        if (r < 0)
                emit_event(d, INFO_NOTE, LOG_ERR, "the counts summed in the kernel could not be read: %s", strerror(-r));
}

static void on_record(void *userdata, const struct perf_event_header *h) {
        struct daemon *d = userdata;
        dump_record(d->dump, h);
}

static void on_emit(void *userdata, const struct entry *e) {
        struct daemon *d = userdata;
        sink_write(d->sink, e);
}

/* Where tracefs is, mounted there if it was not and may_mount (then said).  dry_run (--check-config): nothing
 * mounted, whether start would is said.  Returns an exit status. */
static int find_tracefs(bool may_mount, bool dry_run, char *tracefs, size_t size, char *error, size_t error_size) {
        int r = tracefs_find("/proc/self/mounts", may_mount && !dry_run, tracefs, size);
        if (r == -ENOENT && may_mount && dry_run) {
                if (has_capability(CAP_SYS_ADMIN)) {
                        log_warning("tracefs is not mounted: started by hand, the daemon mounts it at " TRACEFS_DEFAULT
                                    "; under the unit, whose system call filter forbids mounting, it would exit 5");
                        tracefs[0] = 0;
                        return EXIT_OK;
                }
                r = -EPERM; /* what mount(2) would say */
        }
        if (r == -EACCES) {
                snprintf(error, error_size, "tracefs is mounted, but may not be read by this user: tracing needs root "
                         "(or CAP_PERFMON with CAP_DAC_READ_SEARCH)");
                return EXIT_PRIVILEGE;
        }
        if (r < 0) {
                char why[128] = "";
                if (may_mount)
                        snprintf(why, sizeof(why), " and could not be mounted at " TRACEFS_DEFAULT " (%s)",
                                 r == -EPERM ? "mounting needs root or CAP_SYS_ADMIN" : strerror(-r));
                snprintf(error, error_size, "tracefs is not mounted%s: make it available (mount -t tracefs nodev "
                         TRACEFS_DEFAULT "; in a container, the host's bound in, as systemd-nspawn --bind-ro="
                         TRACEFS_DEFAULT " does) and start again",
                         may_mount ? why : ", and under a seccomp filter (the unit's SystemCallFilter=) the daemon "
                                           "does not mount it");
                return r == -EPERM ? EXIT_PRIVILEGE : EXIT_KERNEL;
        }
        if (r > 0)
                log_warning("tracefs was not mounted: mounted it at %s, where it stays", tracefs);
        return EXIT_OK;
}

/* The tracepoints and, where allowed, the capture; without it (when the config allows), the events that let
 * the kernel's filters select.  Returns an exit status, EXIT_OK when done. */
static int open_events(struct daemon *d, char *error, size_t error_size) {
        char tracefs[4096];
        /* Under a seccomp filter (the unit's SystemCallFilter=) mount() would kill the daemon, not fail. */
        int status = find_tracefs(!seccomp_filtered(), false, tracefs, sizeof(tracefs), error, error_size);
        if (status != EXIT_OK)
                return status;
        /* With the capture, the programs follow every thread of a watched pid themselves: no fork event. */
        bool want_capture = d->config->capture != CAPTURE_REMOTE_READ;
        int r = event_table_load(tracefs, want_capture ? EVENTS_EXEC | EVENTS_URING : EVENTS_FORK, &d->events,
                                 error, error_size);
        if (r < 0)
                return r == -EACCES || r == -EPERM ? EXIT_PRIVILEGE : EXIT_KERNEL;
        d->max_iocbs = d->config->max_iocbs_per_call;
        if (!want_capture)
                return EXIT_OK;
        r = bpf_capture_open(d->events, d->max_iocbs, config_summed_in_kernel(d->config), &d->capture,
                             d->no_capture_why, sizeof(d->no_capture_why));
        if (r >= 0)
                r = bpf_capture_set_watch(d->capture, d->config, d->no_capture_why, sizeof(d->no_capture_why));
        if (r >= 0) {
                d->max_iocbs = MIN(d->max_iocbs, (unsigned) CAPTURE_MAX_ITEMS);
                return EXIT_OK;
        }
        bpf_capture_free(TAKE_PTR(d->capture));
        if (d->config->capture == CAPTURE_BPF) {
                snprintf(error, error_size, "capture = \"bpf\": %s", d->no_capture_why);
                return r == -EPERM || r == -EACCES ? EXIT_PRIVILEGE : r == -E2BIG ? EXIT_CONFIG : EXIT_KERNEL;
        }
        event_table_free(TAKE_PTR(d->events));
        r = event_table_load(tracefs, EVENTS_FORK, &d->events, error, error_size);
        return r < 0 ? EXIT_KERNEL : EXIT_OK;
}

static int ring_pages_for(const struct config *c, size_t n_cpus, unsigned *ret_pages, char *error,
                          size_t error_size) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        int r = config_ring_pages(c, n_cpus, page, ret_pages);
        if (r < 0)
                snprintf(error, error_size, "ring_memory = %" PRIu64 " KiB gives each of %zu CPUs less than the "
                         "smallest ring, %zu KiB: make it %zu KiB or more, or set ring_pages",
                         c->ring_memory >> 10, n_cpus, RING_PAGES_FLOOR * page >> 10,
                         n_cpus * RING_PAGES_FLOOR * page >> 10);
        return r;
}

/* Every CPU takes a file descriptor for its ring and, without the capture, one per tracepoint, twice over while
 * a reload replaces the set: thousands on a large host, where the soft limit is 1024. */
static int raise_fd_limit(struct daemon *d, size_t n_cpus, char *error, size_t error_size) {
        size_t per_cpu = 1 + (d->capture ? 0 : 2 * d->events->n_events);
        size_t want = n_cpus * per_cpu + FDS_BESIDES_RINGS, limit;
        int r = fd_limit_raise(want, &limit);
        if (r < 0) {
                snprintf(error, error_size, "the limit on open files: %s", strerror(-r));
                return r;
        }
        if (limit < want) {
                snprintf(error, error_size, "tracing %zu CPUs takes up to %zu open files, and the limit is %zu: "
                         "raise it (LimitNOFILE= in the unit, ulimit -n in a shell)", n_cpus, want, limit);
                return -EMFILE;
        }
        return 0;
}

/* A ring for every CPU there can be (one offline now is traced once it comes online), the capture's output
 * into them, and the selection.  AIOTRACED_CPUS: only these CPUs, for tests of other CPU counts (a process
 * running elsewhere is not seen). */
static int open_rings(struct daemon *d, char *error, size_t error_size) {
        const char *only = getenv("AIOTRACED_CPUS");
        _cleanup_(freep) int *cpus = NULL;
        size_t n_cpus = 0;
        int r = sysfs_cpus(SYSFS_CPUS, "online", only, &cpus, &n_cpus);
        if (r >= 0) {
                free(TAKE_PTR(cpus));
                r = sysfs_cpus(SYSFS_CPUS, "possible", only, &cpus, &n_cpus);
        }
        if (r < 0) {
                snprintf(error, error_size, "cannot read the CPUs%s%s: %s", only ? " of AIOTRACED_CPUS=" : "",
                         only ? only : "", r == -ENOENT ? "none of them is online" : strerror(-r));
                return EXIT_RUNTIME;
        }
        r = raise_fd_limit(d, n_cpus, error, error_size);
        if (r < 0)
                return EXIT_RUNTIME;
        unsigned ring_pages;
        if (ring_pages_for(d->config, n_cpus, &ring_pages, error, error_size) < 0)
                return EXIT_CONFIG;
        r = perf_session_open(&d->perf, d->events, cpus, n_cpus, ring_pages, !d->capture, error, error_size);
        if (r < 0)
                return r == -EACCES || r == -EPERM ? EXIT_PRIVILEGE : r == -ENOENT ? EXIT_KERNEL : EXIT_RUNTIME;
        if (d->capture && bpf_capture_set_rings(d->capture, &d->perf, error, error_size) < 0)
                return EXIT_RUNTIME;
        /* With the capture the programs select and write every record themselves. */
        if (d->capture)
                r = bpf_capture_attach(d->capture, d->events, error, error_size);
        else {
                (void) watch_threads_find_children(&d->threads, d->config->watch, d->config->n_watch);
                r = apply_selection(d, d->config, error, error_size);
        }
        return r < 0 ? EXIT_RUNTIME : EXIT_OK;
}

static void on_summary(void *userdata, const struct proc_summary *sum) {
        struct daemon *d = userdata;
        metrics_add_summary(d->metrics, sum);
}

static int start_engine(struct daemon *d, char *error, size_t error_size) {
        const struct config *c = d->config;
        if (d->opt.dump_path) {
                pid_t holder = 0;
                int r = dump_open(d->opt.dump_path, d->events, &d->dump, &holder);
                if (r < 0) {
                        char who[64] = "";
                        if (r == -EBUSY)
                                describe_holder(holder, who, sizeof(who));
                        snprintf(error, error_size, "--dump %s: %s%s", d->opt.dump_path,
                                 r == -EBUSY ? "is being written by " : strerror(-r), who);
                        return EXIT_USAGE;
                }
        }
        struct engine_options eo = {
                .max_iocbs_per_call = d->max_iocbs,
                .max_inflight = c->max_inflight,
                .max_inflight_per_process = c->max_inflight_per_process,
                .records = c->records,
                .summary_by = c->summary_by,
                .summary_files = c->summary_files,
                .summary_interval_ns = (uint64_t) c->summary_interval * 1000000000ull,
                .stuck_after_ns = (uint64_t) c->stuck_after * 1000000000ull,
                .read_memory = true,
                .replaced_sets = !d->capture,
                .captured = d->capture != NULL,
                .uring_off = !c->io_uring,
        };
        struct engine_callbacks cb = { .emit = on_emit, .fork = on_fork, .record = d->dump ? on_record : NULL,
                                       .summary = on_summary, .select = d->capture ? NULL : on_select,
                                       .collect = d->capture ? on_collect : NULL, .userdata = d };
        d->metrics = malloc(sizeof(*d->metrics));
        if (!d->metrics) {
                snprintf(error, error_size, "metrics: %s", strerror(ENOMEM));
                return EXIT_RUNTIME;
        }
        metrics_init(d->metrics);
        int r = engine_init(&d->engine, d->perf.rings, d->perf.n_cpus, d->events, &eo, &cb);
        if (r < 0) {
                snprintf(error, error_size, "engine: %s", strerror(-r));
                return EXIT_RUNTIME;
        }
        d->engine_ready = true;
        return EXIT_OK;
}

static void format_started(const struct daemon *d, char *buf, size_t size) {
        time_t t = time(NULL);
        char when[64], watching[2048];
        struct tm tm;
        strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", localtime_r(&t, &tm));
        watch_describe(d->config->watch, d->config->n_watch, watching, sizeof(watching));
        size_t online = 0;
        for (size_t i = 0; i < d->perf.n_cpus; i++)
                online += d->perf.cpus[i].owner_fd >= 0;
        char offline[64] = "";
        if (online < d->perf.n_cpus)
                snprintf(offline, sizeof(offline), " (and %zu offline, traced once online)", d->perf.n_cpus - online);
        /* what tracing takes of the host, as an operator budgets it */
        size_t files = 0, rss = 0;
        (void) count_open_files(&files);
        (void) resident_kib(&rss);
        char rings[160];
        size_t all = d->perf.n_cpus * d->perf.ring_bytes;
        snprintf(rings, sizeof(rings), "rings of %zu KiB a CPU (%zu %s in all), %zu files open, RSS %zu MiB",
                 d->perf.ring_bytes >> 10, all >= 16u << 20 ? all >> 20 : all >> 10, all >= 16u << 20 ? "MiB" : "KiB",
                 files, rss >> 10);
        snprintf(buf, size, "tracking aio starts at %s: %zu CPUs%s, %zu tracepoints, %s, %s, watching %s", when,
                 online, offline, d->events->n_events, rings,
                 d->capture ? "memory captured in the kernel during each call"
                            : "memory read after each call (process_vm_readv)",
                 watching);
}

/* A tracer that falls behind loses records, and beside CPU-bound programs a daemon at their nice value waits
 * its turn while its rings fill; as auditd's priority_boost.  With CAP_SYS_NICE, so before it is dropped; and
 * before the journal's thread is started, which inherits it (a nice value is a thread's). */
static void boost_priority(const struct daemon *d) {
        unsigned boost = d->config->priority_boost;
        if (boost == 0)
                return;
        errno = 0;
        int nice_now = getpriority(PRIO_PROCESS, 0);
        if (nice_now == -1 && errno != 0)
                return;
        if (setpriority(PRIO_PROCESS, 0, MAX(nice_now - (int) boost, -20)) < 0)
                log_warning("priority_boost = %u: cannot lower the nice value from %d: %s; at high rates the rings "
                            "fill sooner", boost, nice_now, strerror(errno));
}

/* The metrics file is given its group (metrics.group) after the privilege is dropped, which takes being in the
 * group: joined here, with CAP_SETGID, while the daemon has it. */
static void join_metrics_group(const struct daemon *d) {
        gid_t gid = d->config->metrics.gid, groups[256];
        if (gid == (gid_t) -1 || gid == getegid())
                return;
        int n = getgroups((int) ELEMENTSOF(groups) - 1, groups);
        for (int i = 0; i < n; i++)
                if (groups[i] == gid)
                        return;
        groups[MAX(n, 0)] = gid;
        if (n < 0 || setgroups((size_t) n + 1, groups) < 0)
                log_warning("metrics.group: cannot join group %u (%s): the metrics file will have root's group, "
                            "which node_exporter may not read", (unsigned) gid, strerror(errno));
}

/* Everything tracing needs, opened with privilege, then the privilege dropped.  Returns an exit status. */
int setup(struct daemon *d) {
        char error[4096];
        int status = open_events(d, error, sizeof(error));
        if (status == EXIT_OK)
                status = open_rings(d, error, sizeof(error));
        if (status == EXIT_OK) {
                boost_priority(d);
                join_metrics_group(d);
        }
        /* a failure is said at the reload that needs them */
        if (status == EXIT_OK && d->capture)
                (void) bpf_capture_prepare_records(d->capture);
        if (status == EXIT_OK && drop_capabilities(error, sizeof(error)) < 0)
                status = EXIT_RUNTIME;
        if (status == EXIT_OK && open_sink(d, &d->config->output, &d->sink, error, sizeof(error)) < 0)
                status = d->config->output.sink == SINK_FILE ? EXIT_CONFIG : EXIT_RUNTIME;
        if (status == EXIT_OK)
                status = start_engine(d, error, sizeof(error));
        if (status != EXIT_OK) {
                log_error("%s", error);
                return status;
        }
        if (d->opt.foreground && !d->opt.to_stdout &&
            (d->config->output.sink == SINK_FILE || sink_is_journal(&d->opt, &d->config->output)))
                log_info("note: -f no longer forces standard output (that is --stdout now); writing to the %s, as "
                         "output.sink says", d->config->output.sink == SINK_FILE ? "file" : "journal");
        if (!d->capture && d->no_capture_why[0])
                emit_event(d, INFO_NOTE, LOG_WARNING, "no in-kernel capture: %s. Memory is read after each call "
                           "instead, and what may have changed since is marked stale", d->no_capture_why);
        if (!d->config->io_uring)
                emit_info(d, "io_uring = false: io_uring requests are not traced (a watched process's first one is "
                          "said)");
        else if (!d->capture)
                emit_event(d, INFO_NOTE, LOG_WARNING, "io_uring requests are not traced: they need the in-kernel "
                           "capture");
        else if (bpf_capture_uring_off(d->capture))
                emit_event(d, INFO_NOTE, LOG_WARNING, "io_uring requests are not traced: %s",
                           bpf_capture_uring_off(d->capture));
        if (d->capture && d->max_iocbs < d->config->max_iocbs_per_call)
                emit_info(d, "max_iocbs_per_call = %u is more than the in-kernel capture takes: %u per call",
                          d->config->max_iocbs_per_call, d->max_iocbs);
        format_started(d, error, sizeof(error));
        emit_event(d, INFO_STARTED, LOG_INFO, "%s", error);
        sink_flush(d->sink);
        return EXIT_OK;
}

/* --check-config: what start would find of the kernel before it opens anything, tracefs and the syscall
 * tracepoints, with nothing mounted.  Returns start's exit status, with its message. */
int check_kernel(struct daemon *d) {
        char tracefs[4096], error[4096];
        int status = find_tracefs(!seccomp_filtered(), true, tracefs, sizeof(tracefs), error, sizeof(error));
        if (status == EXIT_OK && tracefs[0]) {
                struct event_table *events = NULL;
                int r = event_table_load(tracefs, EVENTS_FORK, &events, error, sizeof(error));
                if (r < 0)
                        status = r == -EACCES || r == -EPERM ? EXIT_PRIVILEGE : EXIT_KERNEL;
                event_table_free(events);
        }
        if (status != EXIT_OK)
                log_error("%s: start would refuse: %s", d->opt.config_path, error);
        return status;
}

/* Run from a shell, for the config the installed unit reads: what the unit's sandbox would not let the daemon
 * write, as start under the unit would find it. */
static int check_under_unit(const struct daemon *d, char *error, size_t error_size) {
        static const char *const unit_dirs[] = { "/etc/systemd/system", "/run/systemd/system", SYSTEMDSYSTEMUNITDIR,
                                                 "/usr/lib/systemd/system", "/lib/systemd/system", NULL };
        struct unit_sandbox u;
        if (getenv("INVOCATION_ID") || unit_sandbox_load(unit_dirs, "aiotraced.service", &u) < 0 ||
            strcmp(u.config_path[0] ? u.config_path : CONFIG_DEFAULT_PATH, d->opt.config_path) != 0)
                return 0;
        const struct config *c = d->config;
        const char *paths[][2] = { { "output.path", c->output.sink == SINK_FILE ? c->output.path : "" },
                                   { "metrics.path", c->metrics.path } };
        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                const char *path = paths[i][1];
                if (!path[0])
                        continue;
                char dir[4096], real[PATH_MAX], why[2048];
                snprintf(dir, sizeof(dir), "%.*s", (int) MAX(strrchr(path, '/') - path, 1), path);
                const char *problem = unit_sandbox_dir_problem(&u, realpath(dir, real) ? real : dir, why, sizeof(why));
                if (problem) {
                        snprintf(error, error_size, "%s %s: %s", paths[i][0], path, problem);
                        return -EROFS;
                }
        }
        return 0;
}

/* metrics.path: the metrics are not worth losing the trace for, so what keeps them from being written is said,
 * never refused: they are written (tried every summary_interval) once it is gone.  What another user planted at
 * the path is replaced whole, never written through. */
static void check_metrics_path(const struct daemon *d) {
        const char *path = d->config->metrics.path;
        _cleanup_(closep) int dirfd = -1;
        const char *name;
        struct stat st;
        char found[192];
        if (!path[0])
                return;
        int r = safe_dir_open(path, &dirfd, &name);
        if (r == -ENOENT)
                log_warning("metrics.path %s: its directory does not exist: nothing is written until it does (under "
                            "the unit, until a restart after it is made)", path);
        else if (r < 0)
                log_warning("metrics.path %s: its directory %s: the metrics are not written while it is so (tried "
                            "every summary_interval)", path,
                            r == -EXDEV ? "is reached through a symbolic link that another user could have made"
                                        : strerror(-r));
        else if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return; /* made by the first write */
        else if (S_ISDIR(st.st_mode))
                log_warning("metrics.path %s: is %s: the metrics are not written while it is there (tried every "
                            "summary_interval)", path, file_found_describe(&st, found, sizeof(found)));
        else if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
                log_warning("metrics.path %s: is %s: it is replaced whole by the first write, never written through",
                            path, file_found_describe(&st, found, sizeof(found)));
}

/* The config, and what start would refuse of it that can be known without tracing: --check-config says the same.
 * What start would take, but an operator should hear of, is said too. */
int load_config(struct daemon *d) {
        char error[8400];
        int r = config_load(d->opt.config_path, &d->config, error, sizeof(error));
        if (r >= 0 && !d->opt.to_stdout)
                r = sink_file_check(&d->config->output, error, sizeof(error));
        if (r >= 0 && d->opt.check_only)
                r = check_under_unit(d, error, sizeof(error));
        /* the rings' share, over the CPUs there can be: refused here as start would refuse it */
        _cleanup_(freep) int *cpus = NULL;
        size_t n_cpus;
        unsigned pages;
        if (r >= 0 && sysfs_cpus(SYSFS_CPUS, "possible", getenv("AIOTRACED_CPUS"), &cpus, &n_cpus) >= 0)
                r = ring_pages_for(d->config, n_cpus, &pages, error, sizeof(error));
        if (r < 0) {
                log_error("%s", error);
                return r;
        }
        check_metrics_path(d);
        if (!cached_lookup_available())
                log_warning("openat2 cannot be had here (a kernel before 5.12, or a seccomp filter such as systemd's "
                            "RestrictSUIDSGID=): a file's path and a watched executable are looked up as any program "
                            "does, and a file system that does not answer (a stalled FUSE server, a hung NFS mount) "
                            "would hold the trace up");
        if (d->config->n_watch == 0)
                log_warning("%s: no watch list: every process on the host is traced", d->opt.config_path);
        watch_note_absent(d->config->watch, d->config->n_watch, "/proc/self/mountinfo",
                          &(struct watch_report) { report_watch_entry, d });
        if (d->config->capture == CAPTURE_AUTO && !watch_comms_fit_filter(d->config->watch, d->config->n_watch))
                log_warning("%s: the watch list's comm patterns are more than a kernel filter takes: without the "
                            "in-kernel capture (no CAP_BPF, a seccomp filter) tracing would not start",
                            d->opt.config_path);
        return 0;
}

void daemon_done(struct daemon *d) {
        if (d->engine_ready)
                engine_done(&d->engine);
        free(d->metrics);
        sink_free(d->sink);
        (void) dump_close(d->dump);
        sd_event_source_unref(d->tick);
        sd_event_source_unref(d->holdback);
        sd_event_unref(d->event);
        perf_session_close(&d->perf);
        bpf_capture_free(d->capture);
        kernel_stuck_done(&d->kernel_stuck);
        event_table_free(d->events);
        watch_threads_done(&d->threads);
        config_free(d->config);
}
