/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon: options, the privileged opens, and the event loop that wires the rings to the engine and the
 * engine to the sink.  What can be decided without privilege lives in lib/. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "cpulist.h"
#include "daemon.h"
#include "fileio.h"
#include "util.h"

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

/* ---- the loop ---- */


static int on_ring(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        struct daemon *d = userdata;
        d->wake = true;
        return 0;
}

/* The look at the CPUs (lib/hotplug.c) on the rings: whether a CPU's events died, and its events opened again
 * (a new ring read at each wake-up, and the capture writing into it). */
static int cpu_check(void *userdata, size_t i) {
        struct daemon *d = userdata;
        return perf_session_check_cpu(&d->perf, i);
}

static int cpu_revive(void *userdata, size_t i, char *error, size_t error_size) {
        struct daemon *d = userdata;
        struct perf_cpu *pc = &d->perf.cpus[i];
        bool had_ring = pc->owner_fd >= 0;
        int r = perf_session_revive_cpu(&d->perf, d->events, i, error, error_size);
        if (!had_ring && pc->owner_fd >= 0 && sd_event_add_io(d->event, NULL, pc->owner_fd, EPOLLIN, on_ring, d) < 0)
                emit_event(d, INFO_NOTE, LOG_WARNING, "CPU %d: its ring is read at each tick only", pc->life.cpu);
        /* the programs cannot write there yet: again at the next look */
        if (r >= 0 && d->capture)
                r = bpf_capture_set_rings(d->capture, &d->perf, error, error_size);
        return r;
}

static void cpu_say(void *userdata, int priority, const char *message) {
        emit_event(userdata, INFO_NOTE, priority, "%s", message);
}

static void check_cpus(struct daemon *d) {
        static const struct hotplug_ops ops = { .check = cpu_check, .revive = cpu_revive, .say = cpu_say };
        _cleanup_(freep) int *online = NULL;
        _cleanup_(freep) struct cpu_life **lives = calloc(d->perf.n_cpus, sizeof(*lives));
        size_t n_online = 0;
        if (!lives)
                return; /* again at the next look */
        if (sysfs_cpus(SYSFS_CPUS, "online", NULL, &online, &n_online) < 0)
                n_online = 0;
        for (size_t i = 0; i < d->perf.n_cpus; i++)
                lives[i] = &d->perf.cpus[i].life;
        struct timespec real;
        clock_gettime(CLOCK_REALTIME, &real);
        hotplug_look(lives, d->perf.n_cpus, online, n_online, &ops, d,
                     (uint64_t) real.tv_sec * 1000000000ull + (uint64_t) real.tv_nsec, now_ns());
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

static void add_inflight(void *userdata, const struct sum_key *key, const struct sum_req *r) {
        struct daemon *d = userdata;
        if (kernel_stuck_add(&d->kernel_stuck, &d->engine.tracker, key, r) < 0)
                d->engine.stats.no_memory++;
}

/* The requests in flight of the processes summed in the kernel: those stuck said so, once each.  With
 * stuck_after 0, none (and those told before forgotten). */
static int on_stuck_look(sd_event_source *s, uint64_t usec, void *userdata) {
        struct daemon *d = userdata;
        uint64_t after = (uint64_t) d->config->stuck_after * 1000000000ull;
        if (d->capture && (after || d->kernel_stuck.n_told)) {
                kernel_stuck_begin(&d->kernel_stuck, &d->engine.tracker, after, now_ns());
                int r = after ? bpf_capture_inflight(d->capture, add_inflight, d) : 0;
                if (r < 0)
                        log_warning("looking at the summed requests in flight: %s", strerror(-r));
                kernel_stuck_end(&d->kernel_stuck, &d->engine.tracker);
        }
        return timer_again(s, STUCK_LOOK_INTERVAL_USEC);
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
                        engine_note_dropped(&d->engine, i, failed[d->perf.cpus[i].life.cpu]);
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
                r = add_timer(d, NULL, STUCK_LOOK_INTERVAL_USEC, USEC_PER_SEC / 10, on_stuck_look);
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
                        produced += bpf_capture_counter(d->capture, d->perf.cpus[i].life.cpu, CAPTURE_CNT_RECORDS);
                engine_account_lost(&d->engine, i, produced);
        }
        engine_finish(&d->engine, now_ns());
        remove_metrics(d, d->config->metrics.path);
        return r;
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
                int status = check_kernel(&d);
                if (status == EXIT_OK)
                        printf("%s: ok\n", d.opt.config_path);
                config_free(d.config);
                return status;
        }
        int status = setup(&d);
        if (status == EXIT_OK)
                status = run(&d);
        if (d.traced)
                report(&d);
        daemon_done(&d);
        return status;
}
