/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon: options, the privileged opens, and the event loop that wires the rings to the engine and the
 * engine to the sink.  What can be decided without privilege lives in lib/. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "bpf_capture.h"
#include "cpulist.h"
#include "dump.h"
#include "engine.h"
#include "events.h"
#include "fileio.h"
#include "metrics.h"
#include "perf.h"
#include "safefile.h"
#include "sink.h"
#include "tracefs.h"
#include "unit_sandbox.h"
#include "util.h"
#include "select.h"
#include "watch.h"

/* Exit codes, documented in the README and --help. */
enum {
        EXIT_OK = 0,
        EXIT_RUNTIME = 1,
        EXIT_USAGE = 2,
        EXIT_CONFIG = 3,
        EXIT_PRIVILEGE = 4,
        EXIT_KERNEL = 5,
};

#define USEC_PER_MSEC 1000ull
#define USEC_PER_SEC 1000000ull
#define STATUS_INTERVAL_USEC (5 * USEC_PER_SEC)
/* How often the loop asks whether a CPU's events died with the CPU: each look interrupts every traced CPU. */
#define CPU_CHECK_INTERVAL_USEC USEC_PER_SEC
#define CGROUP_LOOK_INTERVAL_USEC USEC_PER_SEC /* the README's known limits say it */
/* How long the sink may take at exit to write what it holds; at a reload, the old sink. */
#define SINK_FINISH_MS 5000u
/* Records this close to now may still be in flight into another CPU's ring: wait for them before merging. */
#define MERGE_MARGIN_NS 2000000ull
#define SYSFS_CPUS "/sys/devices/system/cpu"
/* The output, dump, journal, signals, timers, the capture's programs and maps, libraries': a generous count. */
#define FDS_BESIDES_RINGS 128

struct options {
        const char *config_path;
        const char *dump_path;
        bool check_only;
        bool foreground; /* -f: changes nothing but a note (it used to mean --stdout) */
        bool to_stdout;
};

struct daemon {
        struct options opt;
        struct config *config;
        struct event_table *events;
        struct perf_session perf;
        struct engine engine;
        bool engine_ready;
        struct sink *sink;
        struct bpf_capture *capture; /* NULL: memory is read after each call with process_vm_readv */
        char no_capture_why[1024];
        unsigned max_iocbs; /* max_iocbs_per_call, capped by what the capture can take */
        struct watch_threads threads; /* without the capture: the watched pids' threads, for the filter */
        uint64_t follow_failed;
        struct dump *dump;
        struct metrics *metrics;   /* counted always: a reload that sets metrics.path shows them from the start */
        bool metrics_failing;      /* the last write of metrics.path failed: said when it works again */
        uint64_t dropped_by_closed; /* entries the outputs a reload replaced could not write */
        struct rusage ready_usage; /* when tracing began: what starting cost is not what tracing costs */
        bool traced;               /* the loop ran: there is a report to make */

        sd_event *event;
        sd_event_source *tick, *holdback;
        bool wake;           /* a ring or a timer asked for a drain in this turn of the loop */
        bool holdback_armed; /* a second look at what was too recent to order is due */
        bool holdback_fired;
};

/* Under systemd, stderr is a stream to the journal: each line then starts with its syslog level. */
static bool log_levels;

static void log_setup(void) {
        const char *stream = getenv("JOURNAL_STREAM");
        struct stat st;
        unsigned long long dev, ino;
        log_levels = stream && sscanf(stream, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
                     (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

static void log_at(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_at(int level, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        flockfile(stderr); /* one line whole: the journal sink's thread logs too */
        if (log_levels)
                fprintf(stderr, "<%d>", level);
        fputs("aiotraced: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        funlockfile(stderr);
        va_end(ap);
}

#define log_error(...) log_at(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_at(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_at(LOG_INFO, __VA_ARGS__)

/* A line of the daemon's own: kind gives the journal its MESSAGE_ID, priority its level (syslog's). */
static void emit_event(struct daemon *d, enum info_kind kind, int priority, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void emit_event(struct daemon *d, enum info_kind kind, int priority, const char *fmt, ...) {
        char msg[4096];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        sink_write(d->sink, &(struct entry) {
                .kind = ENTRY_INFO, .time = now_ns(), .message = msg, .info = kind, .priority = priority });
}

#define emit_info(d, ...) emit_event(d, INFO_NOTE, LOG_INFO, __VA_ARGS__)

/* ---- options ---- */

static void usage(FILE *f) {
        fprintf(f,
                "Usage: aiotraced [-c FILE] [--stdout] [-f] [--check-config] [--dump FILE] [--version] [--help]\n"
                "Trace the Linux native AIO system calls of the processes the config selects.\n\n"
                "  -c, --config FILE   configuration (default " CONFIG_DEFAULT_PATH ")\n"
                "      --stdout        write to standard output, in the config's output.format, whatever its\n"
                "                      output.sink\n"
                "  -f, --foreground    stay in the foreground (aiotraced never forks: accepted for scripts)\n"
                "      --dump FILE     also write every record read from the rings to FILE (tests/bench-replay)\n"
                "      --check-config  validate the configuration and exit\n"
                "      --version       print the version and exit\n"
                "      --help          print this help and exit\n\n"
                "Exit status: 0 success, 1 failure while tracing, 2 bad command line, 3 bad configuration,\n"
                "4 missing privilege, 5 the kernel lacks tracefs or the syscall tracepoints.\n");
}

/* 1: run with ret; 0: done (help, version); -EINVAL: bad command line (said). */
static int parse_argv(int argc, char **argv, struct options *ret) {
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "foreground", no_argument, NULL, 'f' },
                { "stdout", no_argument, NULL, 'S' },
                { "check-config", no_argument, NULL, 'C' },
                { "dump", required_argument, NULL, 'D' },
                { "version", no_argument, NULL, 'V' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct options o = { .config_path = CONFIG_DEFAULT_PATH };
        int c;
        while ((c = getopt_long(argc, argv, "c:f", options, NULL)) != -1)
                switch (c) {
                case 'c':
                        o.config_path = optarg;
                        break;
                case 'f':
                        o.foreground = true;
                        break;
                case 'S':
                        o.to_stdout = true;
                        break;
                case 'D':
                        o.dump_path = optarg;
                        break;
                case 'C':
                        o.check_only = true;
                        break;
                case 'V':
                        printf("aiotraced %s\n", PACKAGE_VERSION);
                        return 0;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return -EINVAL;
                }
        if (optind < argc) {
                log_error("unexpected argument '%s'", argv[optind]);
                usage(stderr);
                return -EINVAL;
        }
        *ret = o;
        return 1;
}

/* ---- what is traced ---- */

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

static void report_unlisted_pid(void *userdata, const struct watch *w, int error) {
        const struct daemon *d = userdata;
        log_warning("%s:%u: watched pid %d: %s; it is skipped", d->opt.config_path, w->line, w->pid,
                    error == -ENOENT ? "no such process" : strerror(-error));
}

static void report_watch_entry(void *userdata, const struct watch *w, const char *what) {
        const struct daemon *d = userdata;
        char entry[1024];
        watch_entry_describe(w, entry, sizeof(entry));
        log_warning("%s:%u: watch %s: %s", d->opt.config_path, w->line, entry, what);
}

/* The selection in force: the capture's maps, or the tracepoints' filters (a new set of events). */
static int apply_selection(struct daemon *d, const struct config *c, char *error, size_t error_size) {
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

static void on_record(void *userdata, const struct perf_event_header *h) {
        struct daemon *d = userdata;
        dump_record(d->dump, h);
}

static void on_emit(void *userdata, const struct entry *e) {
        struct daemon *d = userdata;
        sink_write(d->sink, e);
}

/* ---- the output ---- */

/* What a sink says of itself while it runs (perhaps from its own thread): to standard error at once. */
static void sink_log(void *userdata, int level, const char *message) {
        log_at(level, "%s", message);
}

static bool sink_is_journal(const struct options *o, const struct output_config *out) {
        /* Under systemd the journal, unless the config says otherwise; in a terminal, standard output. */
        return !o->to_stdout && (out->sink == SINK_JOURNAL || (out->sink == SINK_AUTO && getenv("INVOCATION_ID")));
}

static int open_sink(const struct daemon *d, const struct output_config *out, struct sink **ret, char *error,
                     size_t error_size) {
        int r;
        if (sink_is_journal(&d->opt, out))
                r = sink_journal_new(d->max_iocbs, (size_t) out->queue_kib * 1024, ret);
        else if (!d->opt.to_stdout && out->sink == SINK_FILE) {
                r = sink_file_new(out, d->max_iocbs, ret, error, error_size);
                if (r < 0)
                        return r;
        } else
                r = sink_fd_new(STDOUT_FILENO, out, d->max_iocbs, ret);
        if (r < 0) {
                snprintf(error, error_size, "output: %s", strerror(-r));
                return r;
        }
        (*ret)->log = sink_log;
        (*ret)->log_userdata = NULL;
        return r;
}

/* At exit, or for the sink a reload replaced: what it wrote and what it could not. */
/* Returns how many entries it could not write, in all. */
static uint64_t close_sink(struct sink *s) {
        char line[4400];
        sink_finish(s, SINK_FINISH_MS);
        sink_report(s, line, sizeof(line));
        if (line[0])
                log_info("%s", line);
        if (s->stats.dropped) {
                char name[16];
                log_warning("%" PRIu64 " entries could not be written: %s", s->stats.dropped,
                            errno_name(-s->stats.last_error, name));
        }
        uint64_t dropped = s->stats.dropped;
        sink_free(s);
        return dropped;
}

/* ---- start ---- */

/* The tracepoints and, where allowed, the capture; without it (when the config allows), the events that let
 * the kernel's filters select.  Returns an exit status, EXIT_OK when done. */
static int open_events(struct daemon *d, char *error, size_t error_size) {
        char tracefs[4096];
        /* Under a seccomp filter (the unit's SystemCallFilter=) mount() would kill the daemon, not fail. */
        bool may_mount = !seccomp_filtered();
        int r = tracefs_find("/proc/self/mounts", may_mount, tracefs, sizeof(tracefs));
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
        /* With the capture, the programs follow every thread of a watched pid themselves: no fork event. */
        bool want_capture = d->config->capture != CAPTURE_REMOTE_READ;
        r = event_table_load(tracefs, want_capture ? EVENTS_EXEC | EVENTS_URING : EVENTS_FORK, &d->events, error,
                             error_size);
        if (r < 0)
                return r == -EACCES || r == -EPERM ? EXIT_PRIVILEGE : EXIT_KERNEL;
        d->max_iocbs = d->config->max_iocbs_per_call;
        if (!want_capture)
                return EXIT_OK;
        r = bpf_capture_open(d->events, d->max_iocbs, &d->capture, d->no_capture_why, sizeof(d->no_capture_why));
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

/* metrics.path, whole: the programs' counts so far and the daemon's own.  Said at each interval while it fails:
 * node_exporter serves the old file meanwhile, or none. */
static void write_metrics(struct daemon *d) {
        const char *path = d->config->metrics.path;
        if (!path[0])
                return;
        const struct trace_stats *st = &d->engine.stats;
        struct metrics_daemon md = {
                .records = st->records, .lost = st->lost, .dropped = d->dropped_by_closed + (d->sink ? d->sink->stats.dropped : 0),
                .stale = st->stale, .unreadable = st->unreadable, .skipped_reads = st->skipped_reads,
                .ring_bytes = d->perf.n_cpus * d->perf.ring_bytes,
        };
        metrics_set_in_flight(d->metrics, &d->engine.tracker);
        _cleanup_(outbuf_free) struct outbuf b = {};
        metrics_format(d->metrics, &md, &b);
        gid_t gid = d->config->metrics.gid;
        int r = b.failed ? -ENOMEM : file_replace(path, b.data, b.len, d->config->metrics.mode, gid);
        if (r < 0) {
                char group[64] = "";
                if (r == -EPERM && gid != (gid_t) -1)
                        snprintf(group, sizeof(group), " (giving it group %u)", (unsigned) gid);
                /* ReadWritePaths= names the directory only if it was there when the unit started */
                bool hint = getenv("INVOCATION_ID") && (r == -EROFS || r == -ENOENT);
                emit_event(d, INFO_NOTE, LOG_WARNING, "metrics.path %s cannot be written: %s%s; tried again every "
                           "summary_interval%s", path,
                           r == -EXDEV ? "its directory is reached through a symbolic link that another user could "
                                         "have made" : strerror(-r), group,
                           hint ? "; under the unit, a directory made after the start is writable only after "
                                  "systemctl restart aiotraced" : "");
        } else if (d->metrics_failing)
                emit_info(d, "metrics.path %s is written again", path);
        d->metrics_failing = r < 0;
}

/* The series of a daemon that has stopped are not exported as if it ran (nor after the package is purged). */
static void remove_metrics(struct daemon *d, const char *path) {
        int r = path[0] ? file_remove_owned(path) : 0;
        if (r < 0)
                log_warning("metrics.path %s could not be removed: %s", path, strerror(-r));
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
                .read_memory = true,
                .replaced_sets = !d->capture,
                .captured = d->capture != NULL,
                .uring_off = !c->io_uring,
        };
        struct engine_callbacks cb = { .emit = on_emit, .fork = on_fork, .record = d->dump ? on_record : NULL,
                                       .summary = on_summary, .select = d->capture ? NULL : on_select,
                                       .userdata = d };
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

/* STATUS=: what is traced and, once running, how it goes. */
static void notify_status(struct daemon *d, const char *prefix) {
        char watching[2048];
        watch_describe(d->config->watch, d->config->n_watch, watching, sizeof(watching));
        const struct trace_stats *st = &d->engine.stats;
        sd_notifyf(0, "%sSTATUS=tracing %s (%s): %" PRIu64 " calls, %" PRIu64 " records lost, %" PRIu64
                   " entries dropped",
                   prefix, watching, d->capture ? "captured in the kernel" : "read after each call", st->calls,
                   st->lost, d->sink ? d->sink->stats.dropped : 0);
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
static int setup(struct daemon *d) {
        char error[4096];
        int status = open_events(d, error, sizeof(error));
        if (status == EXIT_OK)
                status = open_rings(d, error, sizeof(error));
        if (status == EXIT_OK) {
                boost_priority(d);
                join_metrics_group(d);
        }
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

/* ---- reload ---- */

/* The output a reload asks for, in place of the running one; on failure the running one stays, and nc says so. */
static void reload_output(struct daemon *d, struct config *nc) {
        char error[4200];
        struct sink *s;
        if (open_sink(d, &nc->output, &s, error, sizeof(error)) < 0) {
                emit_event(d, INFO_NOTE, LOG_ERR, "reload: %s; the output stays as it was", error);
                nc->output = d->config->output;
                return;
        }
        struct sink *old = d->sink;
        d->sink = s;
        d->dropped_by_closed += close_sink(old); /* the metrics' count goes on across outputs */
}

/* SIGHUP: read the config again and apply it: the selection at once, on the open events, without a gap; the
 * output opened anew; what only a restart can change said, and kept.  A config that does not load, or whose
 * selection cannot be applied, changes nothing. */
static void reload(struct daemon *d) {
        char error[4096], value[4200], running[4200];
        sd_notify(0, "RELOADING=1\nSTATUS=reloading the configuration");
        _cleanup_(config_freep) struct config *nc = NULL;
        int r = config_load(d->opt.config_path, &nc, error, sizeof(error));
        if (r >= 0)
                watch_note_absent(nc->watch, nc->n_watch, "/proc/self/mountinfo",
                                  &(struct watch_report) { report_watch_entry, d });
        if (r >= 0 && !d->capture) {
                /* what came before is judged by the list it came under */
                engine_drain(&d->engine, now_ns() - MERGE_MARGIN_NS);
                (void) watch_threads_find_children(&d->threads, nc->watch, nc->n_watch);
        }
        if (r >= 0 && (r = apply_selection(d, nc, error, sizeof(error))) < 0) {
                /* What the old config selected is still in force: the filters of the set still open; the
                 * capture's maps, set again. */
                char ignored[512];
                if (d->capture)
                        (void) bpf_capture_set_watch(d->capture, d->config, ignored, sizeof(ignored));
                else
                        watch_threads_collect(&d->threads, d->config->watch, d->config->n_watch, NULL, NULL);
        }
        if (r < 0) {
                log_error("reload refused, the running configuration stays: %s", error);
                emit_event(d, INFO_NOTE, LOG_ERR, "reload refused, the running configuration stays: %s", error);
                notify_status(d, "READY=1\n");
                return;
        }
        struct config_changes ch;
        config_changes(d->config, nc, &ch);
        for (size_t i = 0; i < ch.n_kept; i++) {
                config_key_format(ch.kept[i], nc, value, sizeof(value));
                config_key_format(ch.kept[i], d->config, running, sizeof(running));
                emit_info(d, "reload: %s = %s takes effect at restart; kept %s", ch.kept[i]->name, value, running);
                config_key_copy(ch.kept[i], nc, d->config);
        }
        if (ch.new_output) {
                /* what was traced before the reload goes where the config said then */
                engine_drain(&d->engine, now_ns() - MERGE_MARGIN_NS);
                reload_output(d, nc);
        }
        if ((ch.apply & APPLY_METRICS) && strcmp(nc->metrics.path, d->config->metrics.path) != 0)
                remove_metrics(d, d->config->metrics.path);
        config_free(d->config);
        d->config = TAKE_PTR(nc);
        if (ch.apply & APPLY_WATCH)
                engine_reselect(&d->engine);
        if (ch.apply & APPLY_URING)
                engine_set_uring(&d->engine, d->config->io_uring);
        if ((ch.apply & APPLY_RECORDS) &&
            engine_set_records(&d->engine, d->config->records, d->config->summary_by, d->config->summary_files,
                               (uint64_t) d->config->summary_interval * 1000000000ull) < 0)
                emit_info(d, "reload: no memory for the file summaries: none are made");
        if (ch.apply & APPLY_DRAIN)
                (void) sd_event_source_set_time_relative(d->tick, d->config->drain_interval_ms * USEC_PER_MSEC);
        watch_describe(d->config->watch, d->config->n_watch, value, sizeof(value));
        emit_event(d, INFO_RELOADED, LOG_INFO, "reloaded %s: watching %s", d->opt.config_path, value);
        notify_status(d, "READY=1\n");
}

/* ---- the loop ---- */

static void format_clock(uint64_t monotonic, char *buf, size_t size) {
        struct timespec real;
        clock_gettime(CLOCK_REALTIME, &real);
        uint64_t now = now_ns(), ago = now > monotonic ? now - monotonic : 0;
        uint64_t at = (uint64_t) real.tv_sec * 1000000000ull + (uint64_t) real.tv_nsec - ago;
        time_t t = (time_t) (at / 1000000000ull);
        struct tm tm;
        size_t n = strftime(buf, size, "%H:%M:%S", localtime_r(&t, &tm));
        snprintf(buf + n, size - n, ".%03u", (unsigned) (at / 1000000ull % 1000));
}

static int on_ring(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct daemon *d = userdata;
        d->wake = true;
        return 0;
}

/* A CPU's events die with it and stay dead when it is back: say so, and open them again as soon as the CPU is
 * there, as for a CPU offline since the start (with the capture, what the programs could not write meanwhile
 * counts as lost at the end). */
static void check_cpus(struct daemon *d) {
        _cleanup_(freep) int *online = NULL;
        size_t n_online = 0;
        if (sysfs_cpus(SYSFS_CPUS, "online", NULL, &online, &n_online) < 0)
                n_online = 0;
        for (size_t i = 0; i < d->perf.n_cpus; i++) {
                struct perf_cpu *pc = &d->perf.cpus[i];
                char when[32], error[1024];
                if (pc->state == CPU_TRACED) {
                        if (perf_session_check_cpu(&d->perf, i) <= 0)
                                continue;
                        format_clock(pc->stopped_at, when, sizeof(when));
                        emit_event(d, INFO_NOTE, LOG_WARNING, "CPU %d went offline at %s: its events went with it, "
                                   "and nothing on it is traced until it is back", pc->cpu, when);
                }
                bool is_online = false;
                for (size_t j = 0; j < n_online && !is_online; j++)
                        is_online = online[j] == pc->cpu;
                if (!is_online)
                        continue;
                enum cpu_state was = pc->state;
                bool had_ring = pc->owner_fd >= 0;
                int r = perf_session_revive_cpu(&d->perf, d->events, i, error, sizeof(error));
                if (!had_ring && pc->owner_fd >= 0 &&
                    sd_event_add_io(d->event, NULL, pc->owner_fd, EPOLLIN, on_ring, d) < 0)
                        emit_event(d, INFO_NOTE, LOG_WARNING, "CPU %d: its ring is read at each tick only", pc->cpu);
                if (r == -ENODEV)
                        continue;
                if (r >= 0 && d->capture && (r = bpf_capture_set_rings(d->capture, &d->perf, error, sizeof(error))) < 0)
                        pc->state = CPU_REVIVE_FAILED; /* the programs cannot write there yet: again next look */
                if (r < 0) {
                        if (was != CPU_REVIVE_FAILED)
                                emit_event(d, INFO_NOTE, LOG_ERR, "CPU %d is online but cannot be traced: %s", pc->cpu,
                                           error);
                        pc->state = CPU_REVIVE_FAILED; /* tried again at each look, said once */
                        continue;
                }
                if (pc->stopped_at == 0) {
                        emit_event(d, INFO_NOTE, LOG_NOTICE, "CPU %d came online: traced from now on", pc->cpu);
                        continue;
                }
                format_clock(pc->stopped_at, when, sizeof(when));
                emit_event(d, INFO_NOTE, LOG_NOTICE, "CPU %d is traced again: its calls from %s until now (%.3f s) "
                           "were not", pc->cpu, when, (double) (pc->live_since - pc->stopped_at) / 1e9);
        }
}

/* A timer that fires again after usec, for the periodic ones. */
static int timer_again(sd_event_source *s, uint64_t usec) {
        int r = sd_event_source_set_time_relative(s, usec);
        return r < 0 ? r : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        struct daemon *d = userdata;
        d->wake = true;
        return timer_again(s, d->config->drain_interval_ms * USEC_PER_MSEC);
}

static int on_holdback(sd_event_source *s, uint64_t usec, void *userdata) {
        struct daemon *d = userdata;
        d->wake = true;
        d->holdback_armed = false;
        d->holdback_fired = true;
        return 0;
}

static int on_cpu_check(sd_event_source *s, uint64_t usec, void *userdata) {
        check_cpus(userdata);
        return timer_again(s, CPU_CHECK_INTERVAL_USEC);
}

/* cgroups made since the last look that the watch list's cgroup patterns match. */
static int on_cgroup_look(sd_event_source *s, uint64_t usec, void *userdata) {
        struct daemon *d = userdata;
        if (d->capture) {
                int r = bpf_capture_refresh_cgroups(d->capture, d->config);
                if (r > 0)
                        emit_info(d, "%d new cgroups watched", r);
        }
        return timer_again(s, CGROUP_LOOK_INTERVAL_USEC);
}

static int on_status(sd_event_source *s, uint64_t usec, void *userdata) {
        notify_status(userdata, "");
        return timer_again(s, STATUS_INTERVAL_USEC);
}

static int on_metrics(sd_event_source *s, uint64_t usec, void *userdata) {
        struct daemon *d = userdata;
        write_metrics(d);
        return timer_again(s, (uint64_t) d->config->summary_interval * USEC_PER_SEC);
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct daemon *d = userdata;
        if (si->ssi_signo == SIGINT || si->ssi_signo == SIGTERM)
                return sd_event_exit(d->event, EXIT_OK);
        /* SIGUSR1, and SIGHUP too: an external logrotate moved the file away */
        int r = sink_reopen(d->sink);
        if (r < 0)
                log_warning("reopening the output: %s", strerror(-r));
        if (si->ssi_signo == SIGHUP)
                reload(d);
        return 0;
}

/* After every turn of the loop that woke for a ring or a timer: drain what is old enough to be ordered. */
static int on_turn(sd_event_source *s, void *userdata) {
        struct daemon *d = userdata;
        if (!d->wake)
                return 0;
        if (d->capture) {
                /* what the programs could not write: known now, where the kernel's LOST record comes late */
                const uint64_t *failed = bpf_capture_counters(d->capture, CAPTURE_CNT_OUTPUT_FAILED);
                for (size_t i = 0; i < d->perf.n_cpus; i++)
                        engine_note_dropped(&d->engine, i, failed[d->perf.cpus[i].cpu]);
        }
        bool held = engine_drain(&d->engine, now_ns() - MERGE_MARGIN_NS);
        sink_flush(d->sink);
        if (d->dump)
                dump_flush(d->dump);
        if (d->sink->closed) {
                log_error("the output is closed for good (%s): stopping", strerror(-d->sink->stats.last_error));
                return sd_event_exit(d->event, EXIT_RUNTIME);
        }
        /* Come back for what was too recent to order, without waiting for the tick; but not again after that
         * second look: under load there is always something newer, and re-arming would turn the loop every few
         * milliseconds for a few hundred records at a time.  What it holds then waits for the watermark or the
         * tick. */
        if (held && !d->holdback_armed && !d->holdback_fired &&
            timer_again(d->holdback, MERGE_MARGIN_NS / 1000 + 500) >= 0)
                d->holdback_armed = true;
        d->wake = false;
        d->holdback_fired = false;
        return 0;
}

/* The signals the loop takes.  Blocked from the start of main: READY=1 goes out before the loop runs, and a
 * reload (SIGHUP) may follow at once. */
static const int daemon_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1 };

static int add_timer(struct daemon *d, sd_event_source **ret, uint64_t usec, uint64_t accuracy,
                     sd_event_time_handler_t handler) {
        return sd_event_add_time_relative(d->event, ret, CLOCK_MONOTONIC, usec, accuracy, handler, d);
}

/* The loop's sources: the signals, every ring, the drain tick, and, on turns the loop makes anyway (their
 * accuracy lets them wait for the tick), the look at the CPUs and the STATUS= update; the manager's watchdog. */
static int loop_setup(struct daemon *d) {
        int r = sd_event_new(&d->event);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(daemon_signals); i++)
                r = sd_event_add_signal(d->event, NULL, daemon_signals[i], on_signal, d);
        for (size_t i = 0; r >= 0 && i < d->perf.n_cpus; i++)
                if (d->perf.cpus[i].owner_fd >= 0)
                        r = sd_event_add_io(d->event, NULL, d->perf.cpus[i].owner_fd, EPOLLIN, on_ring, d);
        if (r >= 0)
                r = add_timer(d, &d->tick, d->config->drain_interval_ms * USEC_PER_MSEC, USEC_PER_MSEC, on_tick);
        if (r >= 0)
                r = add_timer(d, &d->holdback, 0, 100, on_holdback);
        if (r >= 0)
                r = sd_event_source_set_enabled(d->holdback, SD_EVENT_OFF);
        if (r >= 0)
                r = add_timer(d, NULL, CPU_CHECK_INTERVAL_USEC, CPU_CHECK_INTERVAL_USEC, on_cpu_check);
        if (r >= 0)
                r = add_timer(d, NULL, STATUS_INTERVAL_USEC, USEC_PER_SEC, on_status);
        if (r >= 0)
                r = add_timer(d, NULL, CGROUP_LOOK_INTERVAL_USEC, USEC_PER_SEC / 10, on_cgroup_look);
        if (r >= 0)
                r = add_timer(d, NULL, (uint64_t) d->config->summary_interval * USEC_PER_SEC, USEC_PER_SEC / 10,
                              on_metrics);
        if (r >= 0)
                r = sd_event_add_post(d->event, NULL, on_turn, d);
        if (r >= 0)
                r = sd_event_set_watchdog(d->event, true);
        return r;
}

/* Trace until SIGINT or SIGTERM, then stop the kernel writing, take everything the rings still hold, and
 * settle the account: what the kernel counted and neither reached us nor was reported lost. */
static int run(struct daemon *d) {
        int r = loop_setup(d);
        if (r < 0) {
                log_error("setting up the event loop: %s", strerror(-r));
                return EXIT_RUNTIME;
        }
        notify_status(d, "READY=1\n");
        (void) getrusage(RUSAGE_SELF, &d->ready_usage);
        r = sd_event_loop(d->event);
        sd_notify(0, "STOPPING=1\nSTATUS=draining the rings");
        if (r < 0) {
                log_error("the event loop: %s", strerror(-r));
                r = EXIT_RUNTIME;
        }
        d->traced = true;
        perf_session_disable(&d->perf);
        if (d->capture) {
                bpf_capture_stop(d->capture);
                /* A program that had already selected its thread finishes within microseconds. */
                usleep(10000);
        }
        engine_drain(&d->engine, UINT64_MAX);
        for (size_t i = 0; i < d->perf.n_cpus; i++) {
                uint64_t produced = perf_session_produced(&d->perf, i);
                if (d->capture) /* the records the programs wrote (or failed to) */
                        produced += bpf_capture_counter(d->capture, d->perf.cpus[i].cpu, CAPTURE_CNT_RECORDS);
                engine_account_lost(&d->engine, i, produced);
        }
        engine_finish(&d->engine, now_ns());
        remove_metrics(d, d->config->metrics.path);
        return r;
}

/* ---- the end ---- */

static double tv_seconds(const struct timeval *tv) {
        return (double) tv->tv_sec + (double) tv->tv_usec / 1e6;
}

/* What tracing cost the daemon itself, said at exit: CPU time and peak memory, the rings apart; and the
 * capture's share, which runs in the traced threads, when the kernel measured it. */
static void report_usage(const struct daemon *d) {
        struct rusage ru;
        if (getrusage(RUSAGE_SELF, &ru) < 0)
                return;
        size_t rings_kib = 0;
        for (size_t i = 0; i < d->perf.n_cpus; i++)
                rings_kib += d->perf.cpus[i].map_size / 1024;
        double user = tv_seconds(&ru.ru_utime), system = tv_seconds(&ru.ru_stime);
        double tracing_user = user - tv_seconds(&d->ready_usage.ru_utime);
        double tracing_system = system - tv_seconds(&d->ready_usage.ru_stime);
        log_info("cpu %.6f s user, %.6f s system, %.6f s of them while tracing (%.6f s user, %.6f s system); "
                 "peak RSS %ld KiB (the rings: %zu KiB)", user, system, tracing_user + tracing_system, tracing_user,
                 tracing_system, ru.ru_maxrss, rings_kib);
        uint64_t runs, ns;
        if (d->capture && bpf_capture_run_time(d->capture, &runs, &ns) >= 0 && runs > 0)
                log_info("the in-kernel capture: %" PRIu64 " program runs, %.6f s in the traced threads (%.0f ns a "
                         "run), measured while kernel.bpf_stats_enabled was 1",
                         runs, (double) ns / 1e9, (double) ns / (double) runs);
}

/* The last lines: the counters, and on standard error whatever could not be traced or written. */
static void report(struct daemon *d) {
        emit_event(d, INFO_STOPPED, LOG_INFO, "tracking aio stops");
        sink_write(d->sink, &(struct entry) { .kind = ENTRY_STATS, .time = now_ns(), .stats = &d->engine.stats });
        close_sink(TAKE_PTR(d->sink));
        if (d->follow_failed)
                log_warning("%" PRIu64 " new threads of watched pids could not be followed", d->follow_failed);
        uint64_t unwritten = dump_close(TAKE_PTR(d->dump));
        if (unwritten)
                log_warning("--dump %s: %" PRIu64 " records could not be written", d->opt.dump_path, unwritten);
        report_usage(d);
        for (size_t i = 0; d->capture && i < d->perf.n_cpus; i++) {
                int cpu = d->perf.cpus[i].cpu;
                uint64_t no_args = bpf_capture_counter(d->capture, cpu, CAPTURE_CNT_ARGS_FULL),
                         no_scratch = bpf_capture_counter(d->capture, cpu, CAPTURE_CNT_NO_SCRATCH);
                if (no_args || no_scratch)
                        log_warning("CPU %d: %" PRIu64 " calls whose arguments the capture could not keep (marked "
                                    "not captured), %" PRIu64 " records it had no buffer for (counted lost)",
                                    cpu, no_args, no_scratch);
        }
        uint64_t follow_full = 0;
        for (size_t i = 0; d->capture && i < d->perf.n_cpus; i++)
                follow_full += bpf_capture_counter(d->capture, d->perf.cpus[i].cpu, CAPTURE_CNT_FOLLOW_FULL);
        if (follow_full)
                log_warning("%" PRIu64 " new processes of pids watched with children = true could not be followed: "
                            "the capture's table of %d pids was full", follow_full, CAPTURE_MAX_IDS);
        unsigned looks = d->capture ? bpf_capture_cgroup_looks(d->capture) : 0;
        if (looks)
                log_info("cgroup entries: the cgroup tree was read %u times (at start, at reloads, and after cgroups "
                         "were made)", looks);
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

/* metrics.path: what can never be written is refused; a directory not there yet is said (node_exporter may
 * come later). */
static int check_metrics_path(const struct daemon *d, char *error, size_t error_size) {
        const char *path = d->config->metrics.path;
        _cleanup_(closep) int dirfd = -1;
        const char *name;
        struct stat st;
        if (!path[0])
                return 0;
        int r = safe_dir_open(path, &dirfd, &name);
        if (r == -ENOENT) {
                log_warning("metrics.path %s: its directory does not exist: nothing is written until it does (under "
                            "the unit, until a restart after it is made)", path);
                return 0;
        }
        if (r >= 0 && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
                r = -EINVAL;
        if (r == -EINVAL)
                snprintf(error, error_size, "metrics.path %s: is not a regular file", path);
        else if (r < 0)
                snprintf(error, error_size, "metrics.path %s: its directory: %s", path,
                         r == -EXDEV ? "is reached through a symbolic link that another user could have made"
                                     : strerror(-r));
        return r;
}

/* The config, and what start would refuse of it that can be known without tracing: --check-config says the same.
 * What start would take, but an operator should hear of, is said too. */
static int load_config(struct daemon *d) {
        char error[8400];
        int r = config_load(d->opt.config_path, &d->config, error, sizeof(error));
        if (r >= 0 && !d->opt.to_stdout)
                r = sink_file_check(&d->config->output, error, sizeof(error));
        if (r >= 0)
                r = check_metrics_path(d, error, sizeof(error));
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

static void daemon_done(struct daemon *d) {
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
        event_table_free(d->events);
        watch_threads_done(&d->threads);
        config_free(d->config);
}

int main(int argc, char **argv) {
        sigset_t mask;
        sigemptyset(&mask);
        for (size_t i = 0; i < ELEMENTSOF(daemon_signals); i++)
                sigaddset(&mask, daemon_signals[i]);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        signal(SIGPIPE, SIG_IGN);
        log_setup();

        struct daemon d = { .threads.proc_root = "/proc" };
        int r = parse_argv(argc, argv, &d.opt);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : EXIT_OK;
        /* Before anything is opened (libbpf opens its maps and programs by the dozen): the soft limit up to the
         * hard one.  Whether that is enough for the rings is known, and said, once the CPUs are counted. */
        size_t fd_limit;
        (void) fd_limit_raise(0, &fd_limit);
        if (load_config(&d) < 0) {
                config_free(d.config);
                return EXIT_CONFIG;
        }
        if (d.opt.check_only) {
                printf("%s: ok\n", d.opt.config_path);
                config_free(d.config);
                return EXIT_OK;
        }
        int status = setup(&d);
        if (status == EXIT_OK)
                status = run(&d);
        if (d.traced)
                report(&d);
        daemon_done(&d);
        return status;
}
