/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CONFIG_DEFAULT_PATH SYSCONFDIR "/aiotraced/aiotraced.conf"
#define COMM_MAX 15 /* TASK_COMM_LEN - 1: what the kernel keeps of a command name */
#define GLOB_MAX 63

enum watch_kind {
        WATCH_COMM,      /* comm == "x" */
        WATCH_COMM_GLOB, /* comm ~ "x*" */
        WATCH_PID,       /* every thread of a process */
};

struct watch {
        enum watch_kind kind;
        char comm[GLOB_MAX + 1];
        pid_t pid;
        unsigned line;
};

enum output_format {
        OUTPUT_TEXT,
        OUTPUT_JSON, /* one object per line */
};

enum output_sink {
        SINK_AUTO,    /* the journal when started by systemd, else standard output */
        SINK_STDOUT,
        SINK_JOURNAL,
        SINK_FILE, /* a file that rotates itself */
};

/* Where the iocbs and io_events come from. */
enum capture_mode {
        CAPTURE_AUTO,        /* in the kernel during the call where allowed, else remote-read */
        CAPTURE_BPF,         /* in the kernel, or refuse to start */
        CAPTURE_REMOTE_READ, /* process_vm_readv after the call: may be stale, and marked so */
};

const char *capture_mode_name(enum capture_mode m);

/* What is written: any combination. */
enum {
        RECORD_SYSCALLS = 1 << 0, /* one entry per call, with its iocbs or events */
        RECORD_REQUESTS = 1 << 1, /* one entry per request, submit to end */
        RECORD_SUMMARY = 1 << 2,  /* per process, every summary_interval */
};

struct config {
        struct watch *watch;
        enum capture_mode capture;
        size_t n_watch; /* 0: every process */
        unsigned ring_pages;
        unsigned max_iocbs_per_call;
        unsigned drain_interval_ms;
        unsigned max_inflight;
        unsigned max_inflight_per_process;
        unsigned records;          /* RECORD_* */
        unsigned summary_interval; /* seconds */
        enum output_format format;
        bool json_message; /* JSON: the text layout as "message" on calls, requests and summaries too */
        enum output_sink sink;
        unsigned queue_kib; /* the journal sink's queue */
        char path[4096];    /* the file sink's */
        uint64_t max_size;
        unsigned keep;
        unsigned mode;
};

/* On failure error holds "FILE:LINE: what is wrong" (or "FILE: ..." when no line applies). */
int config_load(const char *path, struct config **ret, char *error, size_t error_size);
void config_free(struct config *c);
void config_freep(struct config **c);

/* Check a comm pattern as the kernel's filter will take it; NULL when fine, else why not. */
const char *comm_pattern_problem(const char *s, bool *ret_is_glob);
