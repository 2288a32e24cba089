/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The end: the counters, what tracing cost, and what could not be traced or written. */
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


static double tv_seconds(const struct timeval *tv) {
        return (double) tv->tv_sec + (double) tv->tv_usec / 1e6;
}

static void log_prog_run_time(const char *name, uint64_t runs, uint64_t ns, void *userdata) {
        (void) userdata;
        log_info("the in-kernel capture's program %s: %" PRIu64 " runs, %.0f ns a run", name, runs,
                 (double) ns / (double) runs);
}

/* What tracing cost the daemon itself, said at exit: CPU time and peak memory, the rings apart; and the
 * capture's share, which runs in the traced threads, when the kernel measured it, program by program. */
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
        if (d->capture && bpf_capture_run_time(d->capture, log_prog_run_time, NULL, &runs, &ns) >= 0 && runs > 0)
                log_info("the in-kernel capture: %" PRIu64 " program runs, %.6f s in the traced threads (%.0f ns a "
                         "run), measured while kernel.bpf_stats_enabled was 1",
                         runs, (double) ns / 1e9, (double) ns / (double) runs);
}

/* The last lines: the counters, and on standard error whatever could not be traced or written. */
void report(struct daemon *d) {
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
                int cpu = d->perf.cpus[i].life.cpu;
                uint64_t no_args = bpf_capture_counter(d->capture, cpu, CAPTURE_CNT_ARGS_FULL),
                         no_scratch = bpf_capture_counter(d->capture, cpu, CAPTURE_CNT_NO_SCRATCH);
                if (no_args || no_scratch)
                        log_warning("CPU %d: %" PRIu64 " calls whose arguments the capture could not keep (marked "
                                    "not captured), %" PRIu64 " records it had no buffer for (counted lost)",
                                    cpu, no_args, no_scratch);
        }
        uint64_t follow_full = 0, sqe_unreadable = 0;
        for (size_t i = 0; d->capture && i < d->perf.n_cpus; i++) {
                follow_full += bpf_capture_counter(d->capture, d->perf.cpus[i].life.cpu, CAPTURE_CNT_FOLLOW_FULL);
                sqe_unreadable += bpf_capture_counter(d->capture, d->perf.cpus[i].life.cpu, CAPTURE_CNT_SQE_UNREADABLE);
        }
        if (sqe_unreadable)
                log_warning("%" PRIu64 " io_uring requests that failed at submit could not be written: their SQE "
                            "could not be read", sqe_unreadable);
        if (follow_full)
                log_warning("%" PRIu64 " new processes of pids watched with children = true could not be followed: "
                            "the capture's table of %d pids was full", follow_full, CAPTURE_MAX_IDS);
        const struct fdpath_cache *paths = &d->engine.tracker.paths;
        if (paths->learned || paths->lookups)
                log_info("file paths: %" PRIu64 " walked in the kernel, %" PRIu64 " read from /proc", paths->learned,
                         paths->lookups);
        unsigned looks = d->capture ? bpf_capture_cgroup_looks(d->capture) : 0;
        if (looks)
                log_info("cgroup entries: the cgroup tree was read %u times (at start, at reloads, and after cgroups "
                         "were made)", looks);
}
