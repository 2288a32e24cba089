/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's own words and its outputs: its log on standard error, its entries to the sink, STATUS=, the
 * metrics file. */
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

/* Under systemd, stderr is a stream to the journal: each line then starts with its syslog level. */
static bool log_levels;

void log_setup(void) {
        const char *stream = getenv("JOURNAL_STREAM");
        struct stat st;
        unsigned long long dev, ino;
        log_levels = stream && sscanf(stream, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
                     (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

void log_at(int level, const char *fmt, ...) {
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

/* A line of the daemon's own: kind gives the journal its MESSAGE_ID, priority its level (syslog's). */
void emit_event(struct daemon *d, enum info_kind kind, int priority, const char *fmt, ...) {
        char msg[4096];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        sink_write(d->sink, &(struct entry) {
                .kind = ENTRY_INFO, .time = now_ns(), .message = msg, .info = kind, .priority = priority });
}

/* What a sink says of itself while it runs (perhaps from its own thread): to standard error at once. */
static void sink_log(void *userdata, int level, const char *message) {
        log_at(level, "%s", message);
}

bool sink_is_journal(const struct options *o, const struct output_config *out) {
        /* Under systemd the journal, unless the config says otherwise; in a terminal, standard output. */
        return !o->to_stdout && (out->sink == SINK_JOURNAL || (out->sink == SINK_AUTO && getenv("INVOCATION_ID")));
}

int open_sink(const struct daemon *d, const struct output_config *out, struct sink **ret, char *error,
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

/* At exit, or for the sink a reload replaced: what it wrote and what it could not; how many entries it could
 * not write, in all. */
uint64_t close_sink(struct sink *s) {
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

void notify_status(struct daemon *d, const char *prefix) {
        char watching[2048];
        watch_describe(d->config->watch, d->config->n_watch, watching, sizeof(watching));
        const struct trace_stats *st = &d->engine.stats;
        /* io_uring's requests come with no call: both are counted */
        uint64_t requests = st->completed + st->abandoned + st->unknown + st->stale + st->unmatched;
        sd_notifyf(0, "%sSTATUS=tracing %s (%s): %" PRIu64 " calls, %" PRIu64 " requests ended, %" PRIu64
                   " in flight, %" PRIu64 " records lost, %" PRIu64 " entries dropped",
                   prefix, watching, d->capture ? "captured in the kernel" : "read after each call", st->calls,
                   requests, d->engine_ready ? (uint64_t) tracker_inflight_total(&d->engine.tracker) : 0, st->lost,
                   d->sink ? d->sink->stats.dropped : 0);
}

/* metrics.path, whole: the programs' counts so far and the daemon's own.  Said at each interval while it fails:
 * node_exporter serves the old file meanwhile, or none. */
void write_metrics(struct daemon *d) {
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
        (void) metrics_written(d->metrics);
        gid_t gid = d->config->metrics.gid;
        int r = b.failed ? -ENOMEM : file_replace(path, b.data, b.len, d->config->metrics.mode, gid);
        if (r < 0) {
                char group[64] = "";
                if (r == -EPERM && gid != (gid_t) -1)
                        snprintf(group, sizeof(group), " (giving it group %u)", (unsigned) gid);
                /* ReadWritePaths= names the directory only if it was there when the unit started */
                bool hint = getenv("INVOCATION_ID") && (r == -EROFS || r == -ENOENT);
                /* what keeps it from being replaced, when something is there: whose it is */
                char found[256] = "";
                struct stat there;
                if (r != -ENOENT && r != -EXDEV && lstat(path, &there) == 0 &&
                    (!S_ISREG(there.st_mode) || there.st_uid != geteuid())) {
                        char what[192];
                        snprintf(found, sizeof(found), " (%s is there)", file_found_describe(&there, what, sizeof(what)));
                }
                emit_event(d, INFO_NOTE, LOG_WARNING, "metrics.path %s cannot be written: %s%s%s; tried again every "
                           "summary_interval%s", path,
                           r == -EXDEV ? "its directory is reached through a symbolic link that another user could "
                                         "have made" : strerror(-r), group, found,
                           hint ? "; under the unit, a directory made after the start is writable only after "
                                  "systemctl restart aiotraced" : "");
        } else if (d->metrics_failing)
                emit_info(d, "metrics.path %s is written again", path);
        d->metrics_failing = r < 0;
}

/* The series of a daemon that has stopped are not exported as if it ran (nor after the package is purged). */
void remove_metrics(struct daemon *d, const char *path) {
        int r = path[0] ? file_remove_owned(path) : 0;
        if (r < 0)
                log_warning("metrics.path %s could not be removed: %s", path, strerror(-r));
}
