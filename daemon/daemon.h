/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* What the daemon's files share: its state, its log and its steps (start, reload, the report at the end). */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <syslog.h>
#include <systemd/sd-event.h>

#include "bpf_capture.h"
#include "config.h"
#include "dump.h"
#include "engine.h"
#include "kernel_stuck.h"
#include "events.h"
#include "metrics.h"
#include "perf.h"
#include "sink.h"
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
/* How often the requests in flight of the processes summed in the kernel are looked at for those stuck */
#define STUCK_LOOK_INTERVAL_USEC USEC_PER_SEC
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
        struct kernel_stuck kernel_stuck; /* the summed requests said stuck */
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

/* ---- its log (daemon/output.c) ---- */

/* Under systemd, each line to standard error starts with its syslog level. */
void log_setup(void);
void log_at(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define log_error(...) log_at(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_at(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_at(LOG_INFO, __VA_ARGS__)

/* A line of the daemon's own: kind gives the journal its MESSAGE_ID, priority its level (syslog's). */
void emit_event(struct daemon *d, enum info_kind kind, int priority, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
#define emit_info(d, ...) emit_event(d, INFO_NOTE, LOG_INFO, __VA_ARGS__)

/* Under systemd the journal, unless the config says otherwise; in a terminal, standard output. */
bool sink_is_journal(const struct options *o, const struct output_config *out);
int open_sink(const struct daemon *d, const struct output_config *out, struct sink **ret, char *error,
              size_t error_size);
/* At exit, or for the sink a reload replaced: what it wrote and what it could not; how many entries it could not
 * write, in all. */
uint64_t close_sink(struct sink *s);
/* STATUS=: what is traced and, once running, how it goes. */
void notify_status(struct daemon *d, const char *prefix);
/* metrics.path, whole; and removed (the daemon stops, or a reload names another). */
void write_metrics(struct daemon *d);
void remove_metrics(struct daemon *d, const char *path);

/* ---- its steps (daemon/start.c, daemon/reload.c, daemon/report.c) ---- */

/* The config, and what start would refuse of it: -errno, said. */
int load_config(struct daemon *d);
int check_kernel(struct daemon *d);
/* Everything tracing needs, opened with privilege, then the privilege dropped: an exit status. */
int setup(struct daemon *d);
void daemon_done(struct daemon *d);
/* The selection in force: the capture's maps, or the tracepoints' filters (a new set of events). */
int apply_selection(struct daemon *d, const struct config *c, char *error, size_t error_size);
void report_watch_entry(void *userdata, const struct watch *w, const char *what);
/* SIGHUP: the config read again and applied; one that does not load changes nothing. */
void reload(struct daemon *d);
/* The last lines: the counters, and on standard error whatever could not be traced or written. */
void report(struct daemon *d);
