/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "watch_key.h"

#define CONFIG_DEFAULT_PATH SYSCONFDIR "/aiotraced/aiotraced.conf"
/* The group node_exporter runs as in Debian's package: the metrics file's, unless metrics.group says. */
#define METRICS_GROUP_DEFAULT "prometheus"
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
        RECORD_SUMMARY = 1 << 2,  /* every summary_interval, of what summary_by says */
};

/* What a summary is of: any combination (records names "summary" to write them). */
enum {
        SUMMARY_BY_PROCESS = 1 << 0, /* each process that did AIO */
        SUMMARY_BY_FILE = 1 << 1,    /* each of the summary_files files with the most requests, and the rest */
};

/* The output group: what a sink is made from.  Zeroed before it is filled, so two compare with memcmp. */
struct output_config {
        enum output_sink sink;
        enum output_format format;
        bool json_message; /* JSON: the text layout as "message" on calls, requests and summaries too */
        unsigned queue_kib; /* the journal sink's queue */
        char path[4096];    /* the file sink's */
        uint64_t max_size;
        unsigned keep;
        unsigned mode;
};

struct config {
        struct watch *watch;
        size_t n_watch; /* 0: every process */
        enum capture_mode capture;
        uint64_t ring_memory; /* bytes, all the CPUs' rings together */
        unsigned ring_pages;  /* a CPU's, when set: overrides ring_memory; 0: from ring_memory */
        unsigned max_iocbs_per_call;
        unsigned drain_interval_ms;
        unsigned max_inflight;
        unsigned max_inflight_per_process;
        unsigned priority_boost; /* lowered from the nice value it is started with */
        unsigned records;          /* RECORD_* */
        unsigned summary_interval; /* seconds */
        unsigned summary_by;       /* SUMMARY_BY_* */
        unsigned summary_files;    /* the files named apart in a file summary */
        unsigned stuck_after;      /* seconds a request may be in flight before it is said stuck; 0: never */
        bool io_uring;             /* trace io_uring's requests (with the capture) */
        struct output_config output;
        struct {
                char path[4096]; /* Prometheus text, rewritten every summary_interval; "": none */
                unsigned mode;
                char group[33];  /* as given; "" when not given */
                gid_t gid;       /* of group, or of "prometheus" when not given and there is one; else -1 */
        } metrics;
};

/* What a reload does with a key whose value changed. */
enum config_reload {
        RELOAD_LIVE,    /* applied to the running daemon at once, as its apply says */
        RELOAD_OUTPUT,  /* applied by opening the output anew */
        RELOAD_RESTART, /* kept as it was, and said: it takes effect at the next start */
};

/* How the running daemon applies a live key: each a step of the reload, taken when a key of it changed. */
enum {
        APPLY_WATCH = 1 << 0,   /* the selection (applied at every reload: a watched pid's threads change) */
        APPLY_RECORDS = 1 << 1, /* what is written and summarised, and the summaries' interval */
        APPLY_URING = 1 << 2,   /* io_uring traced or not */
        APPLY_DRAIN = 1 << 3,   /* the drain timer */
        APPLY_METRICS = 1 << 4, /* the metrics file (one no longer named is removed) */
};

enum config_key_type {
        KEY_WATCH,   /* the watch list */
        KEY_FLAGS,   /* a list of names[] (bit i: names[i]), at least min of them */
        KEY_UINT,    /* an integer within [min, max] (a power of two with pow2) */
        KEY_SIZE,    /* bytes, or a string with K, M or G, within [min, max] */
        KEY_BOOL,
        KEY_ENUM,    /* a string, one of names[] (by value) */
        KEY_MODE,    /* a file mode, octal, never writable by others */
        KEY_PATH,    /* an absolute path */
        KEY_GROUP,   /* the name of a group this host has */
};

/* One key of the config file: the one place that says how it is read, where it goes, its bounds and what a
 * reload does with it.  The parser, its "known keys" messages, --check-config, the reload and the test of the
 * man page all come from the table. */
struct config_key {
        const char *name; /* "ring_pages"; "output.path": a key of the output group */
        enum config_key_type type;
        size_t offset, size; /* of the value in struct config */
        uint64_t min, max;
        bool pow2;
        const char *unset;        /* KEY_UINT: what 0, the default, stands for ("from ring_memory") */
        const char *const *names; /* KEY_ENUM, KEY_FLAGS: NULL-terminated */
        enum config_reload reload;
        unsigned apply; /* RELOAD_LIVE: APPLY_* */
        uint64_t def;   /* the default of a scalar key (KEY_PATH, KEY_GROUP: ""; KEY_WATCH: every process) */
};

extern const struct config_key config_keys[];
extern const size_t config_n_keys;

/* Whether the key's value is the same in both. */
bool config_key_equal(const struct config_key *k, const struct config *a, const struct config *b);
/* The key's value as the config file writes it ("1024", "\"json\"", "\"0640\"", ...). */
void config_key_format(const struct config_key *k, const struct config *c, char *buf, size_t size);
/* Give `to` the key's value in `from` (a scalar key: not the watch list). */
void config_key_copy(const struct config_key *k, struct config *to, const struct config *from);

/* What a reload from `running` to `loaded` does, from the table: the steps its live keys' changes take, whether
 * the output is opened anew, and the keys only a restart can change that changed (kept, and said). */
#define CONFIG_KEYS_MAX 64
struct config_changes {
        unsigned apply; /* APPLY_* */
        bool new_output;
        const struct config_key *kept[CONFIG_KEYS_MAX];
        size_t n_kept;
};
void config_changes(const struct config *running, const struct config *loaded, struct config_changes *ret);

/* The smallest ring a CPU gets from ring_memory, and the largest: twice the smallest that lost nothing at the
 * highest record rate tests/bench-rings.sh makes (docs/scaling.md). */
#define RING_PAGES_FLOOR 16u
#define RING_PAGES_CEILING 512u

/* Each CPU's ring, in pages of page_size, for n_cpus: ring_pages when set, else ring_memory shared out, a power of
 * two between the floor and the ceiling.  -ENOSPC when ring_memory cannot give every CPU the floor. */
int config_ring_pages(const struct config *c, size_t n_cpus, size_t page_size, unsigned *ret_pages);

/* On failure error holds "FILE:LINE: what is wrong" (or "FILE: ..." when no line applies). */
int config_load(const char *path, struct config **ret, char *error, size_t error_size);
void config_free(struct config *c);
void config_freep(struct config **c);

/* Whether the requests of every watched process are only summarized, so that the capture can sum them in the
 * kernel: records = [ "summary" ], of processes alone. */
bool config_summed_in_kernel(const struct config *c);
