/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "idtable.h"
#include "request.h"

/* Requests by the file they were for, over one summary interval, whichever process made them: a DBA asks which
 * tablespace is slow.  Each request is counted as it ends, as the process summaries count it; at the interval's
 * end the files with the most requests are named, and the rest are summed in one line. */

/* The distinct files kept apart in one interval; the requests of files past them go to the other line. */
#define FILE_TALLIES_MAX 1024

struct file_summary {
        const char *path; /* NULL: the other line */
        size_t path_len;
        uint32_t other_files;  /* the other line's: files summed in it */
        uint64_t without_path; /* the other line's: requests whose file is not known (no path, or not checked) */
        uint64_t requests;     /* that ended in the interval */
        uint64_t unverified;   /* of them: named by a path looked up after the call, not checked against it */
        uint64_t start, end;
        const struct proc_interval *iv; /* its submitted and in-flight counts are not kept */
        const struct histogram *latency;
        bool last;             /* tracing ended */
        uint64_t records_lost; /* on any CPU, during the interval: its counts may be short */
};

struct file_tally;

struct file_tallies {
        struct id_table files; /* struct file_tally by its path */
        struct file_tally *other;
        struct file_tally **order;  /* room to sort them */
        struct histogram **pool;    /* the histograms of an interval's files, for the next one's */
        size_t n_pool;
        uint64_t without_path;
        bool active;             /* a request ended in the interval */
        struct file_tally *last; /* the last file counted: requests come in runs on one file */
};

int file_tallies_init(struct file_tallies *f);
void file_tallies_done(struct file_tallies *f);

/* A request that ended: counted for its file when its path is known to be its (ok, or unverified). */
void file_tallies_add(struct file_tallies *f, const struct request *r);

/* The interval [start, end] ends: a summary for each of the `top` files with the most requests (most first, by
 * path when they tie), then one for the others if any, each handed to fn; then every count starts again. */
void file_tallies_emit(struct file_tallies *f, unsigned top, uint64_t start, uint64_t end, bool last,
                       uint64_t records_lost, void (*fn)(void *userdata, const struct file_summary *s), void *userdata);
