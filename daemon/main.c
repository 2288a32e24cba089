/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "bpf_capture.h"
#include "engine.h"
#include "events.h"
#include "filter.h"
#include "perf.h"
#include "sink.h"
#include "tracefs.h"
#include "util.h"

/* Exit codes, documented in the README and --help. */
enum {
        EXIT_OK = 0,
        EXIT_RUNTIME = 1,
        EXIT_USAGE = 2,
        EXIT_CONFIG = 3,
        EXIT_PRIVILEGE = 4,
        EXIT_KERNEL = 5,
};

#define STATUS_INTERVAL_NS (5 * 1000000000ull)

/* How long the sink may take at exit to write what it holds. */
#define SINK_FINISH_MS 5000u

/* Records this close to now may still be in flight into another CPU's ring: wait for them before merging. */
#define MERGE_MARGIN_NS 2000000ull

struct daemon {
        struct config *config;
        const char *config_path;
        struct event_table *events;
        struct perf_session perf;
        struct engine engine;
        struct sink *sink;
        struct bpf_capture *capture; /* NULL: memory is read after each call with process_vm_readv */
        char no_capture_why[1024];
        unsigned max_iocbs; /* max_iocbs_per_call, capped by what the capture can take */
        uint32_t *tids; /* threads of watched pids: the kernel filter's common_pid list */
        size_t n_tids, cap_tids;
        uint64_t follow_failed;
        FILE *dump; /* --dump: every record read, for tests/bench-replay */
        struct rusage ready_usage; /* when tracing began: what starting cost is not what tracing costs */
        uint64_t dump_failed;
};

static void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_error(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        fputs("aiotraced: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
}

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

#define emit_info(d, ...) emit_event(d, INFO_NOTE, 6, __VA_ARGS__)

static int add_tid(struct daemon *d, uint32_t tid) {
        for (size_t i = 0; i < d->n_tids; i++)
                if (d->tids[i] == tid)
                        return 0;
        if (d->n_tids == d->cap_tids) {
                size_t cap = d->cap_tids ? 2 * d->cap_tids : 64;
                uint32_t *p = realloc(d->tids, cap * sizeof(*p));
                if (!p)
                        return -ENOMEM;
                d->tids = p;
                d->cap_tids = cap;
        }
        d->tids[d->n_tids++] = tid;
        return 1;
}

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

/* The threads a watched pid has now; those it creates later arrive through sched_process_fork. */
static int collect_threads(struct daemon *d, pid_t pid) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/task", pid);
        DIR *dir = opendir(path);
        if (!dir)
                return -errno;
        struct dirent *de;
        int r = 0;
        while (r >= 0 && (de = readdir(dir)))
                if (de->d_name[0] != '.')
                        r = add_tid(d, (uint32_t) strtoul(de->d_name, NULL, 10));
        closedir(dir);
        return r < 0 ? r : 0;
}

static bool has_pid_watch(const struct config *c) {
        for (size_t i = 0; i < c->n_watch; i++)
                if (c->watch[i].kind == WATCH_PID)
                        return true;
        return false;
}

static int apply_filters(struct daemon *d, char *error, size_t error_size) {
        _cleanup_(freep) char *filter = NULL, *fork_filter = NULL, *exit_filter = NULL;
        /* With the capture the programs select and write every record; the events only carry them (one each,
         * sampling nothing: perf_session_attach).  The filter that matches nothing is for an event without a
         * program, should the table ever have one. */
        if (d->capture)
                return perf_session_attach(&d->perf, d->events, &(struct perf_filters) { .syscalls = "common_pid < 0",
                                           .process_exit = "common_pid < 0" }, bpf_capture_prog_fds(d->capture),
                                           error, error_size);
        int r = filter_build(d->config, d->tids, d->n_tids, "common_pid", true, &filter);
        /* The fork event is always there, so that a reload can start watching pids; it matches nothing until. */
        if (r >= 0 && has_pid_watch(d->config))
                r = filter_build(d->config, d->tids, d->n_tids, "parent_pid", false, &fork_filter);
        else if (r >= 0 && !(fork_filter = strdup("common_pid < 0")))
                r = -ENOMEM;
        if (r == -E2BIG) {
                snprintf(error, error_size, "the kernel filter for %zu watched threads is longer than the %d bytes "
                         "the kernel takes", d->n_tids, FILTER_MAX);
                return r;
        }
        if (r < 0) {
                snprintf(error, error_size, "building the filter: %s", strerror(-r));
                return r;
        }
        /* A watched process's end: the exit of its last thread (the filter's fields are in that event too). */
        if (r >= 0 && asprintf(&exit_filter, filter ? "group_dead == 1 && (%s)" : "group_dead == 1", filter) < 0) {
                exit_filter = NULL;
                r = -ENOMEM;
        }
        if (r < 0) {
                snprintf(error, error_size, "building the filter: %s", strerror(-r));
                return r;
        }
        return perf_session_attach(&d->perf, d->events, &(struct perf_filters) {
                .syscalls = filter, .fork = fork_filter, .process_exit = exit_filter }, NULL, error, error_size);
}

static uint32_t tgid_of(uint32_t tid) {
        char path[64], buf[512];
        snprintf(path, sizeof(path), "/proc/%u/status", tid);
        FILE *f = fopen(path, "re");
        if (!f)
                return 0;
        uint32_t tgid = 0;
        while (fgets(buf, sizeof(buf), f))
                if (sscanf(buf, "Tgid: %u", &tgid) == 1)
                        break;
        fclose(f);
        return tgid;
}

static void on_fork(void *userdata, uint32_t parent, uint32_t child) {
        struct daemon *d = userdata;
        uint32_t tgid = tgid_of(child);
        bool watched = false;
        for (size_t i = 0; i < d->config->n_watch; i++)
                if (d->config->watch[i].kind == WATCH_PID && (uint32_t) d->config->watch[i].pid == tgid)
                        watched = true;
        if (!watched)
                return; /* a child process, not a thread, or a thread already gone */
        if (add_tid(d, child) <= 0)
                return;
        char error[512];
        if (apply_filters(d, error, sizeof(error)) < 0) {
                d->follow_failed++;
                emit_event(d, INFO_NOTE, 3, "cannot follow thread %u of pid %u: %s", child, tgid, error);
                return;
        }
        emit_info(d, "following thread %u of pid %u (created by %u)", child, tgid, parent);
}

static void on_record(void *userdata, const struct perf_event_header *h) {
        struct daemon *d = userdata;
        if (fwrite(h, h->size, 1, d->dump) != 1)
                d->dump_failed++;
}

/* The dump: a header naming the events by their ids on this kernel, so a replay can map them to its own
 * formats; then the records as the rings held them. */
static int dump_open(struct daemon *d, const char *path) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        d->dump = fdopen(fd, "w");
        if (!d->dump) {
                int r = -errno;
                close(fd);
                return r;
        }
        fprintf(d->dump, "AIOTDUMP 1\n");
        for (size_t i = 0; i < d->events->n_events; i++)
                fprintf(d->dump, "event %s %s %d\n", d->events->events[i].system, d->events->events[i].name,
                        d->events->events[i].tp_id);
        fprintf(d->dump, "records\n");
        return 0;
}

static void on_emit(void *userdata, const struct entry *e) {
        struct daemon *d = userdata;
        sink_write(d->sink, e);
}

static double tv_seconds(const struct timeval *tv) {
        return (double) tv->tv_sec + (double) tv->tv_usec / 1e6;
}

/* What tracing cost the daemon itself, said at exit: CPU time and peak memory, the rings apart. */
static void log_usage(const struct daemon *d) {
        struct rusage ru;
        if (getrusage(RUSAGE_SELF, &ru) < 0)
                return;
        size_t rings_kib = 0;
        for (size_t i = 0; i < d->perf.n_cpus; i++)
                rings_kib += d->perf.cpus[i].map_size / 1024;
        double user = tv_seconds(&ru.ru_utime), system = tv_seconds(&ru.ru_stime);
        double tracing_user = user - tv_seconds(&d->ready_usage.ru_utime);
        double tracing_system = system - tv_seconds(&d->ready_usage.ru_stime);
        log_error("cpu %.6f s user, %.6f s system, %.6f s of them while tracing (%.6f s user, %.6f s system); "
                  "peak RSS %ld KiB (the rings: %zu KiB)", user, system, tracing_user + tracing_system, tracing_user,
                  tracing_system, ru.ru_maxrss, rings_kib);
        /* The capture's share runs in the traced threads, not in the daemon: said beside it when the kernel
         * measured it. */
        uint64_t runs, ns;
        if (d->capture && bpf_capture_run_time(d->capture, &runs, &ns) >= 0 && runs > 0)
                log_error("the in-kernel capture: %" PRIu64 " program runs, %.6f s in the traced threads (%.0f ns a "
                          "run), measured while kernel.bpf_stats_enabled was 1",
                          runs, (double) ns / 1e9, (double) ns / (double) runs);
}

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

static int timer_arm(int fd, uint64_t first_ns, uint64_t interval_ns) {
        struct itimerspec its = {
                .it_value = { .tv_sec = (time_t) (first_ns / 1000000000ull), .tv_nsec = (long) (first_ns % 1000000000ull) },
                .it_interval = { .tv_sec = (time_t) (interval_ns / 1000000000ull),
                                 .tv_nsec = (long) (interval_ns % 1000000000ull) },
        };
        return timerfd_settime(fd, 0, &its, NULL) < 0 ? -errno : 0;
}

static bool drain(struct daemon *d, uint64_t until) {
        bool held = engine_drain(&d->engine, until);
        sink_flush(d->sink);
        return held;
}

/* The drain tick, kept under half the watchdog's period so that the loop turns often enough to ping it. */
static uint64_t tick_interval(const struct daemon *d, uint64_t watchdog_usec) {
        uint64_t interval = (uint64_t) d->config->drain_interval_ms * 1000000ull;
        if (watchdog_usec && interval > watchdog_usec * 1000 / 2)
                interval = watchdog_usec * 1000 / 2;
        return interval;
}

static void reload(struct daemon *d);
static void notify_status(struct daemon *d, const char *prefix);

/* How often the loop asks whether a CPU's events died with the CPU: each look interrupts every traced CPU. */
#define CPU_CHECK_INTERVAL_NS (1000000000ull)

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

/* A CPU taken offline takes its events with it, and they stay dead when it is back: say so, and open them
 * again as soon as the CPU is there, as for a CPU offline since the start (with the capture, what the programs
 * could not write meanwhile counts as lost at the end). */
static void check_cpus(struct daemon *d, int ep) {
        _cleanup_(freep) int *online = NULL;
        size_t n_online = 0;
        if (sysfs_cpus("online", NULL, &online, &n_online) < 0)
                n_online = 0;
        for (size_t i = 0; i < d->perf.n_cpus; i++) {
                struct perf_cpu *pc = &d->perf.cpus[i];
                char when[32], error[1024];
                if (!pc->stopped) {
                        int r = perf_session_check_cpu(&d->perf, i);
                        if (r <= 0)
                                continue;
                        format_clock(pc->stopped_at, when, sizeof(when));
                        emit_event(d, INFO_NOTE, 4,
                                   "CPU %d went offline at %s: its events went with it, and nothing on it is traced "
                                   "until it is back",
                                   pc->cpu, when);
                        pc->revive_failed = false;
                }
                bool is_online = false;
                for (size_t j = 0; j < n_online && !is_online; j++)
                        is_online = online[j] == pc->cpu;
                if (!is_online)
                        continue;
                bool fresh = pc->owner_fd < 0, first = pc->stopped_at == 0; /* offline since the start */
                int r = perf_session_revive_cpu(&d->perf, d->events, i, error, sizeof(error));
                if (fresh && pc->owner_fd >= 0) {
                        /* its ring is there now, even should its events have failed */
                        struct epoll_event ev = { .events = EPOLLIN, .data.u64 = i };
                        if (epoll_ctl(ep, EPOLL_CTL_ADD, pc->owner_fd, &ev) < 0)
                                emit_event(d, INFO_NOTE, 4, "CPU %d: epoll_ctl: %m; its ring is read at each tick only",
                                           pc->cpu);
                }
                if (r == -ENODEV)
                        continue;
                if (r >= 0 && d->capture && (r = bpf_capture_set_rings(d->capture, &d->perf, error, sizeof(error))) < 0)
                        pc->stopped = true; /* the programs cannot write there yet: tried again at the next look */
                if (r < 0) {
                        if (!pc->revive_failed)
                                emit_event(d, INFO_NOTE, 3, "CPU %d is online but cannot be traced: %s", pc->cpu,
                                           error);
                        pc->revive_failed = true; /* tried again at each look, said once */
                        continue;
                }
                if (first) {
                        emit_event(d, INFO_NOTE, 5, "CPU %d came online: traced from now on", pc->cpu);
                        continue;
                }
                format_clock(pc->stopped_at, when, sizeof(when));
                emit_event(d, INFO_NOTE, 5, "CPU %d is traced again: its calls from %s until now (%.3f s) were not",
                           pc->cpu, when, (double) (pc->live_since - pc->stopped_at) / 1e9);
        }
}

/* The signals the loop takes through its signalfd.  Blocked from the start of main: READY=1 goes out before
 * the loop runs, and a reload (SIGHUP) may follow at once. */
static void daemon_signals(sigset_t *ret) {
        sigemptyset(ret);
        sigaddset(ret, SIGINT);
        sigaddset(ret, SIGTERM);
        sigaddset(ret, SIGHUP);
        sigaddset(ret, SIGUSR1);
}

static int run(struct daemon *d) {
        sigset_t mask;
        daemon_signals(&mask);

        _cleanup_(closep) int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        _cleanup_(closep) int tick = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        _cleanup_(closep) int holdback = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        _cleanup_(closep) int ep = epoll_create1(EPOLL_CLOEXEC);
        if (sfd < 0 || tick < 0 || holdback < 0 || ep < 0) {
                log_error("setting up the event loop: %m");
                return EXIT_RUNTIME;
        }
        /* The manager's watchdog: pinged from the loop, at least every half period (the tick keeps it turning). */
        uint64_t watchdog_usec = 0, last_ping = 0, last_status = now_ns(), last_cpu_check = now_ns();
        if (sd_watchdog_enabled(false, &watchdog_usec) <= 0)
                watchdog_usec = 0;
        uint64_t interval = tick_interval(d, watchdog_usec);
        if (timer_arm(tick, interval, interval) < 0) {
                log_error("timerfd: %m");
                return EXIT_RUNTIME;
        }
        /* epoll data: -1 signals, -2 tick, -3 holdback, i >= 0 the ring of CPU index i */
        struct epoll_event ev = { .events = EPOLLIN };
        ev.data.u64 = (uint64_t) -1;
        epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
        ev.data.u64 = (uint64_t) -2;
        epoll_ctl(ep, EPOLL_CTL_ADD, tick, &ev);
        ev.data.u64 = (uint64_t) -3;
        epoll_ctl(ep, EPOLL_CTL_ADD, holdback, &ev);
        for (size_t i = 0; i < d->perf.n_cpus; i++) {
                ev.data.u64 = i;
                if (d->perf.cpus[i].owner_fd >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, d->perf.cpus[i].owner_fd, &ev) < 0) {
                        log_error("epoll_ctl: %m");
                        return EXIT_RUNTIME;
                }
        }

        bool holdback_armed = false;
        for (;;) {
                struct epoll_event events[64];
                int n = epoll_wait(ep, events, (int) ELEMENTSOF(events), -1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        log_error("epoll_wait: %m");
                        return EXIT_RUNTIME;
                }
                bool stop = false, wake = false, holdback_fired = false;
                for (int i = 0; i < n; i++) {
                        uint64_t which = events[i].data.u64, junk;
                        if (which == (uint64_t) -1) {
                                struct signalfd_siginfo si;
                                while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
                                        if (si.ssi_signo == SIGUSR1 || si.ssi_signo == SIGHUP) {
                                                /* an external logrotate moved the file away */
                                                int rr = sink_reopen(d->sink);
                                                if (rr < 0)
                                                        log_error("reopening the output: %s", strerror(-rr));
                                        }
                                        if (si.ssi_signo == SIGUSR1)
                                                continue;
                                        if (si.ssi_signo == SIGHUP) {
                                                unsigned before = d->config->drain_interval_ms;
                                                reload(d);
                                                if (d->config->drain_interval_ms != before) {
                                                        interval = tick_interval(d, watchdog_usec);
                                                        (void) timer_arm(tick, interval, interval);
                                                }
                                        } else
                                                stop = true;
                                }
                        } else if (which == (uint64_t) -2 || which == (uint64_t) -3) {
                                while (read(which == (uint64_t) -2 ? tick : holdback, &junk, sizeof(junk)) > 0)
                                        ;
                                if (which == (uint64_t) -3)
                                        holdback_armed = false, holdback_fired = true;
                                wake = true;
                        } else
                                wake = true;
                }
                if (stop)
                        break;
                if (watchdog_usec && now_ns() - last_ping >= watchdog_usec * 1000 / 2) {
                        sd_notify(0, "WATCHDOG=1");
                        last_ping = now_ns();
                }
                if (now_ns() - last_status >= STATUS_INTERVAL_NS) {
                        notify_status(d, "");
                        last_status = now_ns();
                }
                if (now_ns() - last_cpu_check >= CPU_CHECK_INTERVAL_NS) {
                        check_cpus(d, ep);
                        last_cpu_check = now_ns();
                }
                /* Come back for what was too recent to order, without waiting for the tick; but not again after
                 * that second look: under load there is always something newer, and re-arming would turn the loop
                 * every few milliseconds for a few hundred records at a time.  What it holds then waits for the
                 * watermark or the tick. */
                if (wake && drain(d, now_ns() - MERGE_MARGIN_NS) && !holdback_armed && !holdback_fired) {
                        if (timer_arm(holdback, MERGE_MARGIN_NS + 500000ull, 0) == 0)
                                holdback_armed = true;
                }
        }

        /* Stop the kernel writing, then take everything the rings still hold, then settle the account: what the
         * kernel counted and neither reached us nor was reported lost. */
        perf_session_disable(&d->perf);
        if (d->capture) {
                bpf_capture_stop(d->capture);
                /* A program that had already selected its thread finishes within microseconds. */
                usleep(10000);
        }
        drain(d, UINT64_MAX);
        for (size_t i = 0; i < d->perf.n_cpus; i++) {
                uint64_t produced = perf_session_produced(&d->perf, i);
                if (d->capture) /* the records the programs wrote (or failed to) */
                        produced += bpf_capture_counter(d->capture, d->perf.cpus[i].cpu, CAPTURE_CNT_RECORDS);
                engine_account_lost(&d->engine, i, produced);
        }
        engine_finish(&d->engine, now_ns());
        sink_flush(d->sink);
        return EXIT_OK;
}

static void format_watch(const struct config *c, char *buf, size_t size) {
        size_t n = 0;
        buf[0] = 0;
        if (c->n_watch == 0)
                snprintf(buf, size, "every process");
        for (size_t i = 0; i < c->n_watch && n < size; i++) {
                const struct watch *w = &c->watch[i];
                if (w->kind == WATCH_PID)
                        n += (size_t) snprintf(buf + n, size - n, "%spid %d", i ? ", " : "", w->pid);
                else
                        n += (size_t) snprintf(buf + n, size - n, "%scomm %s \"%s\"", i ? ", " : "",
                                               w->kind == WATCH_COMM ? "==" : "~", w->comm);
        }
}

static void format_started(struct daemon *d, char *buf, size_t size) {
        time_t t = time(NULL);
        char when[64], watching[2048];
        struct tm tm;
        strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", localtime_r(&t, &tm));
        format_watch(d->config, watching, sizeof(watching));
        size_t online = 0;
        for (size_t i = 0; i < d->perf.n_cpus; i++)
                online += d->perf.cpus[i].owner_fd >= 0;
        char offline[64] = "";
        if (online < d->perf.n_cpus)
                snprintf(offline, sizeof(offline), " (and %zu offline, traced once online)", d->perf.n_cpus - online);
        snprintf(buf, size, "tracking aio starts at %s: %zu CPUs%s, %s, watching %s", when, online, offline,
                 d->capture ? "memory captured in the kernel during each call"
                            : "memory read after each call (process_vm_readv)",
                 watching);
}

/* STATUS=: what is traced and, once running, how it goes. */
static void notify_status(struct daemon *d, const char *prefix) {
        char watching[2048];
        format_watch(d->config, watching, sizeof(watching));
        const struct trace_stats *st = &d->engine.stats;
        sd_notifyf(0, "%sSTATUS=tracing %s (%s): %" PRIu64 " calls, %" PRIu64 " records lost, %" PRIu64
                   " entries dropped",
                   prefix, watching, d->capture ? "captured in the kernel" : "read after each call", st->calls,
                   st->lost, d->sink ? d->sink->stats.dropped : 0);
}

static void notify_ready(struct daemon *d) {
        notify_status(d, "READY=1\n");
}

/* The threads of the config's watched pids, for the kernel filter. */
static void collect_watched_threads(struct daemon *d) {
        d->n_tids = 0;
        for (size_t i = 0; i < d->config->n_watch; i++) {
                const struct watch *w = &d->config->watch[i];
                if (w->kind != WATCH_PID)
                        continue;
                int r = collect_threads(d, w->pid);
                if (r < 0)
                        log_error("%s:%u: watched pid %d: %s; it is skipped", d->config_path, w->line, w->pid,
                                  r == -ENOENT ? "no such process" : strerror(-r));
        }
}

/* Keys the running daemon cannot change: said, and kept as they are. */
static void keep_restart_only(struct daemon *d, struct config *nc) {
        const struct config *old = d->config;
        if (nc->capture != old->capture)
                emit_info(d, "reload: capture = \"%s\" takes effect at restart; kept \"%s\"",
                          capture_mode_name(nc->capture), capture_mode_name(old->capture));
        if (nc->ring_pages != old->ring_pages)
                emit_info(d, "reload: ring_pages = %u takes effect at restart; kept %u", nc->ring_pages,
                          old->ring_pages);
        if (nc->max_iocbs_per_call != old->max_iocbs_per_call)
                emit_info(d, "reload: max_iocbs_per_call = %u takes effect at restart; kept %u",
                          nc->max_iocbs_per_call, old->max_iocbs_per_call);
        if (nc->max_inflight != old->max_inflight)
                emit_info(d, "reload: max_inflight = %u takes effect at restart; kept %u", nc->max_inflight,
                          old->max_inflight);
        if (nc->max_inflight_per_process != old->max_inflight_per_process)
                emit_info(d, "reload: max_inflight_per_process = %u takes effect at restart; kept %u",
                          nc->max_inflight_per_process, old->max_inflight_per_process);
        nc->capture = old->capture;
        nc->ring_pages = old->ring_pages;
        nc->max_iocbs_per_call = old->max_iocbs_per_call;
        nc->max_inflight = old->max_inflight;
        nc->max_inflight_per_process = old->max_inflight_per_process;
        nc->format = old->format;
        nc->json_message = old->json_message;
}

/* SIGHUP: read the config again and apply its selection to the open events, without a gap; a config that
 * does not load, or cannot be applied, changes nothing. */
static void reload(struct daemon *d) {
        char error[4096], watching[2048];
        sd_notify(0, "RELOADING=1\nSTATUS=reloading the configuration");
        struct config *nc = NULL;
        int r = config_load(d->config_path, &nc, error, sizeof(error));
        if (r < 0) {
                log_error("reload refused, the running configuration stays: %s", error);
                emit_event(d, INFO_NOTE, 3, "reload refused, the running configuration stays: %s", error);
                notify_ready(d);
                return;
        }
        keep_restart_only(d, nc);
        struct config *old = d->config;
        d->config = nc;
        if (d->capture)
                r = bpf_capture_set_watch(d->capture, nc, error, sizeof(error));
        else {
                collect_watched_threads(d);
                r = apply_filters(d, error, sizeof(error));
        }
        if (r < 0) {
                d->config = old;
                config_free(nc);
                if (d->capture)
                        (void) bpf_capture_set_watch(d->capture, old, watching, sizeof(watching));
                else
                        collect_watched_threads(d); /* the filter in force is still the old one */
                log_error("reload failed, the running configuration stays: %s", error);
                emit_event(d, INFO_NOTE, 3, "reload failed, the running configuration stays: %s", error);
                notify_ready(d);
                return;
        }
        config_free(old);
        engine_set_records(&d->engine, nc->records, (uint64_t) nc->summary_interval * 1000000000ull);
        format_watch(d->config, watching, sizeof(watching));
        emit_event(d, INFO_RELOADED, 6, "reloaded %s: watching %s", d->config_path, watching);
        notify_ready(d);
}

int main(int argc, char **argv) {
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
        sigset_t mask;
        daemon_signals(&mask);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        signal(SIGPIPE, SIG_IGN);
        struct daemon d = { .config_path = CONFIG_DEFAULT_PATH };
        bool check_only = false, foreground = false, to_stdout = false;
        const char *dump_path = NULL;
        int c;
        while ((c = getopt_long(argc, argv, "c:f", options, NULL)) != -1)
                switch (c) {
                case 'c':
                        d.config_path = optarg;
                        break;
                case 'f':
                        foreground = true;
                        break;
                case 'S':
                        to_stdout = true;
                        break;
                case 'D':
                        dump_path = optarg;
                        break;
                case 'C':
                        check_only = true;
                        break;
                case 'V':
                        printf("aiotraced %s\n", PACKAGE_VERSION);
                        return EXIT_OK;
                case 'h':
                        usage(stdout);
                        return EXIT_OK;
                default:
                        usage(stderr);
                        return EXIT_USAGE;
                }
        if (optind < argc) {
                log_error("unexpected argument '%s'", argv[optind]);
                usage(stderr);
                return EXIT_USAGE;
        }

        char error[4096];
        int r = config_load(d.config_path, &d.config, error, sizeof(error));
        if (r < 0) {
                log_error("%s", error);
                return EXIT_CONFIG;
        }
        if (check_only) {
                printf("%s: ok\n", d.config_path);
                config_free(d.config);
                return EXIT_OK;
        }

        int status = EXIT_RUNTIME;
        char tracefs[4096];
        int *cpus = NULL;
        size_t n_cpus = 0;

        r = tracefs_find("/proc/self/mounts", true, tracefs, sizeof(tracefs));
        if (r < 0) {
                log_error("tracefs is not mounted and could not be mounted at /sys/kernel/tracing: %s%s",
                          strerror(-r), r == -EPERM ? " (mounting needs root or CAP_SYS_ADMIN)" : "");
                status = r == -EPERM ? EXIT_PRIVILEGE : EXIT_KERNEL;
                goto out;
        }
        /* With the capture, the programs follow every thread of a watched pid themselves: no fork event. */
        bool want_capture = d.config->capture != CAPTURE_REMOTE_READ;
        r = event_table_load(tracefs, want_capture ? EVENTS_EXEC : EVENTS_FORK, &d.events, error, sizeof(error));
        if (r < 0) {
                log_error("%s", error);
                status = r == -EACCES || r == -EPERM ? EXIT_PRIVILEGE : EXIT_KERNEL;
                goto out;
        }
        d.max_iocbs = d.config->max_iocbs_per_call;
        if (want_capture) {
                r = bpf_capture_open(d.events, d.max_iocbs, &d.capture, d.no_capture_why, sizeof(d.no_capture_why));
                if (r >= 0)
                        r = bpf_capture_set_watch(d.capture, d.config, d.no_capture_why, sizeof(d.no_capture_why));
                if (r < 0) {
                        bpf_capture_free(d.capture);
                        d.capture = NULL;
                        if (d.config->capture == CAPTURE_BPF) {
                                log_error("capture = \"bpf\": %s", d.no_capture_why);
                                status = r == -EPERM || r == -EACCES ? EXIT_PRIVILEGE
                                         : r == -E2BIG               ? EXIT_CONFIG
                                                                     : EXIT_KERNEL;
                                goto out;
                        }
                        event_table_free(d.events);
                        d.events = NULL;
                        r = event_table_load(tracefs, EVENTS_FORK, &d.events, error, sizeof(error));
                        if (r < 0) {
                                log_error("%s", error);
                                status = EXIT_KERNEL;
                                goto out;
                        }
                } else if (d.max_iocbs > CAPTURE_MAX_ITEMS)
                        d.max_iocbs = CAPTURE_MAX_ITEMS;
        }
        collect_watched_threads(&d);
        /* AIOTRACED_CPUS: trace only these CPUs, for tests of other CPU counts; a process running elsewhere is
         * not seen */
        const char *only = getenv("AIOTRACED_CPUS");
        r = sysfs_cpus("online", only, &cpus, &n_cpus);
        if (r < 0) {
                log_error("cannot read the online CPUs%s%s: %s", only ? " of AIOTRACED_CPUS=" : "", only ? only : "",
                          r == -ENOENT ? "none of them is online" : strerror(-r));
                goto out;
        }
        /* every CPU there can be: one offline now is traced once it comes online */
        free(TAKE_PTR(cpus));
        r = sysfs_cpus("possible", only, &cpus, &n_cpus);
        if (r < 0) {
                log_error("cannot read the possible CPUs: %s", strerror(-r));
                goto out;
        }
        r = perf_session_open(&d.perf, d.events, cpus, n_cpus, d.config->ring_pages, !d.capture, error,
                              sizeof(error));
        if (r < 0) {
                log_error("%s", error);
                status = r == -EACCES || r == -EPERM ? EXIT_PRIVILEGE : r == -ENOENT ? EXIT_KERNEL : EXIT_RUNTIME;
                goto out;
        }
        if (d.capture) {
                r = bpf_capture_set_rings(d.capture, &d.perf, error, sizeof(error));
                if (r < 0) {
                        log_error("%s", error);
                        goto out;
                }
        }
        r = apply_filters(&d, error, sizeof(error));
        if (r < 0) {
                log_error("%s", error);
                goto out;
        }
        r = drop_capabilities(error, sizeof(error));
        if (r < 0) {
                log_error("dropping the capabilities tracing no longer needs: %s", error);
                goto out;
        }
        /* Under systemd the journal, unless the config says otherwise; in a terminal, standard output. */
        bool to_journal = !to_stdout && (d.config->sink == SINK_JOURNAL ||
                                         (d.config->sink == SINK_AUTO && getenv("INVOCATION_ID")));
        bool to_file = !to_stdout && d.config->sink == SINK_FILE;
        /* -f used to force standard output: whoever still relies on that hears of it (for one release). */
        if (foreground && (to_journal || to_file))
                log_error("note: -f no longer forces standard output (that is --stdout now); writing to the %s, as "
                          "output.sink says", to_file ? "file" : "journal");
        r = to_journal ? sink_journal_new(d.max_iocbs, (size_t) d.config->queue_kib * 1024, &d.sink)
            : to_file  ? sink_file_new(d.config, d.max_iocbs, &d.sink)
                       : sink_fd_new(STDOUT_FILENO, d.config, d.max_iocbs, &d.sink);
        if (r < 0) {
                if (to_file)
                        log_error("output.path %s: %s", d.config->path,
                                  r == -ELOOP    ? "is a symbolic link, which is refused, not followed"
                                  : r == -EINVAL ? "is not a regular file"
                                                 : strerror(-r));
                else
                        log_error("output: %s", strerror(-r));
                status = to_file ? EXIT_CONFIG : EXIT_RUNTIME;
                goto out;
        }
        struct engine_options eo = {
                .max_iocbs_per_call = d.max_iocbs,
                .max_inflight = d.config->max_inflight,
                .max_inflight_per_process = d.config->max_inflight_per_process,
                .records = d.config->records,
                .summary_interval_ns = (uint64_t) d.config->summary_interval * 1000000000ull,
                .read_memory = true,
                .replaced_sets = !d.capture,
        };
        if (dump_path) {
                r = dump_open(&d, dump_path);
                if (r < 0) {
                        log_error("--dump %s: %s", dump_path, strerror(-r));
                        status = EXIT_USAGE;
                        goto out;
                }
        }
        struct engine_callbacks cb = { .emit = on_emit, .fork = on_fork, .record = d.dump ? on_record : NULL,
                                       .userdata = &d };
        r = engine_init(&d.engine, d.perf.rings, d.perf.n_cpus, d.events, &eo, &cb);
        if (r < 0) {
                log_error("engine: %s", strerror(-r));
                goto out;
        }
        if (!d.capture && d.no_capture_why[0])
                emit_event(&d, INFO_NOTE, 4, "no in-kernel capture: %s. Memory is read after each call instead, and what may "
                              "have changed since is marked stale", d.no_capture_why);
        if (d.capture && d.max_iocbs < d.config->max_iocbs_per_call)
                emit_info(&d, "max_iocbs_per_call = %u is more than the in-kernel capture takes: %u per call",
                          d.config->max_iocbs_per_call, d.max_iocbs);
        format_started(&d, error, sizeof(error));
        emit_event(&d, INFO_STARTED, 6, "%s", error);
        sink_flush(d.sink);
        notify_ready(&d);
        (void) getrusage(RUSAGE_SELF, &d.ready_usage);

        status = run(&d);
        sd_notify(0, "STOPPING=1\nSTATUS=draining the rings");

        emit_event(&d, INFO_STOPPED, 6, "tracking aio stops");
        sink_write(d.sink, &(struct entry) { .kind = ENTRY_STATS, .time = now_ns(), .stats = &d.engine.stats });
        sink_finish(d.sink, SINK_FINISH_MS);
        if (d.sink->ops->rotations)
                log_error("%" PRIu64 " entries written to %s, %" PRIu64 " rotations", d.sink->stats.written,
                          d.config->path, d.sink->ops->rotations(d.sink));
        if (d.sink->stats.dropped) {
                char name[16];
                log_error("%" PRIu64 " entries could not be written: %s", d.sink->stats.dropped,
                          errno_name(-d.sink->stats.last_error, name));
        }
        if (d.follow_failed)
                log_error("%" PRIu64 " new threads of watched pids could not be followed", d.follow_failed);
        if (d.dump_failed)
                log_error("--dump %s: %" PRIu64 " records could not be written", dump_path, d.dump_failed);
        if (d.dump && fclose(d.dump) != 0)
                log_error("--dump %s: the last records could not be written: %m", dump_path);
        d.dump = NULL;
        log_usage(&d);
        for (size_t i = 0; d.capture && i < d.perf.n_cpus; i++) {
                int cpu = d.perf.cpus[i].cpu;
                uint64_t no_args = bpf_capture_counter(d.capture, cpu, CAPTURE_CNT_ARGS_FULL),
                         no_scratch = bpf_capture_counter(d.capture, cpu, CAPTURE_CNT_NO_SCRATCH);
                if (no_args || no_scratch)
                        log_error("CPU %d: %" PRIu64 " calls whose arguments the capture could not keep (marked "
                                  "not captured), %" PRIu64 " records it had no buffer for (counted lost)",
                                  cpu, no_args, no_scratch);
        }
        engine_done(&d.engine);
out:
        if (d.dump)
                fclose(d.dump);
        sink_free(d.sink);
        perf_session_close(&d.perf);
        bpf_capture_free(d.capture);
        event_table_free(d.events);
        free(cpus);
        free(d.tids);
        config_free(d.config);
        return status;
}
