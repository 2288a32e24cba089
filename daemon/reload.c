/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reload (SIGHUP): the config read again and applied, the selection at once, without a gap. */
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
void reload(struct daemon *d) {
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
        if (ch.apply & APPLY_RECORDS)
                engine_set_stuck_after(&d->engine, (uint64_t) d->config->stuck_after * 1000000000ull);
        if (ch.apply & APPLY_DRAIN)
                (void) sd_event_source_set_time_relative(d->tick, d->config->drain_interval_ms * USEC_PER_MSEC);
        watch_describe(d->config->watch, d->config->n_watch, value, sizeof(value));
        emit_event(d, INFO_RELOADED, LOG_INFO, "reloaded %s: watching %s", d->opt.config_path, value);
        notify_status(d, "READY=1\n");
}
