/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "call.h"
#include "file_summary.h"
#include "tracker.h"

/* What the engine hands to a sink.  Pointers are valid only during the emit call. */
enum entry_kind {
        ENTRY_CALL,
        ENTRY_LOST,    /* the kernel dropped records on one CPU */
        ENTRY_INFO,    /* a line from the daemon: started, stopped, following a thread */
        ENTRY_STATS,   /* the counters, at exit */
        ENTRY_REQUEST, /* one request, from its submit to its end */
        ENTRY_SUMMARY, /* one process over one interval */
        ENTRY_FILE_SUMMARY, /* one file (or the rest) over one interval */
        ENTRY_DROPPED, /* entries that could not be written (where, why), said where they are missing */
};

/* What an ENTRY_INFO says, for the journal's MESSAGE_ID. */
enum info_kind {
        INFO_NOTE,
        INFO_STARTED,
        INFO_STOPPED,
        INFO_RELOADED,
};

struct entry {
        enum entry_kind kind;
        uint64_t time; /* CLOCK_MONOTONIC ns */
        const struct aio_call *call;
        uint32_t cpu;
        uint64_t lost;
        bool lost_unwritten; /* lost: counted by the kernel or the capture, but never written to the ring (not
                              * a LOST record's ring full) */
        const char *message;
        enum info_kind info;
        int priority; /* of an ENTRY_INFO, syslog levels: 0 means 6 (info) */
        const struct trace_stats *stats;
        const struct request *request;
        const struct proc_summary *summary;
        const struct file_summary *file_summary;
        uint64_t dropped; /* ENTRY_DROPPED: how many, */
        int error;        /* the negative errno of the latest failure, */
        const char *where; /* and where they should have gone */
};
