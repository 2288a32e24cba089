/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* A watch entry and its keys: the one table (watch_keys[]) that says, for each key a watch entry may give, how
 * the config writes it, what value it takes and where it goes, how it is checked, which of the capture's
 * classes matches it in the kernel, how user space matches it (without the capture) and how it is said. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture.h"
#include "cgroup.h"

#define COMM_MAX 15 /* TASK_COMM_LEN - 1: what the kernel keeps of a command name */
#define GLOB_MAX 63

/* The keys a watch entry gives: it watches the threads that all of them match. */
enum {
        WATCH_KEY_COMM = 1 << 0,   /* comm, exact or a glob */
        WATCH_KEY_PID = 1 << 1,    /* every thread of a process; with children, of its descendants too */
        WATCH_KEY_UID = 1 << 2,    /* user or uid */
        WATCH_KEY_EXE = 1 << 3,    /* the executable, by its identity */
        WATCH_KEY_UNIT = 1 << 4,   /* a systemd unit's cgroup, and below */
        WATCH_KEY_CGROUP = 1 << 5, /* a cgroup v2 path or glob, and below */
};

#define WATCH_UNIT_MAX 127   /* what the capture compares a cgroup's name with */
#define WATCH_CGROUP_MAX 511
#define WATCH_EXE_MAX 511
#define WATCH_EXE_NAME_MAX 63 /* of the executable's file name */

struct watch {
        unsigned keys; /* WATCH_KEY_*, at least one */
        bool comm_glob;
        bool children;
        char comm[GLOB_MAX + 1];
        pid_t pid;
        uid_t uid;
        char user[33];                    /* as written, "" for uid = N */
        char unit[WATCH_UNIT_MAX + 1];     /* "mariadb.service" */
        char cgroup[WATCH_CGROUP_MAX + 1]; /* "/system.slice/docker-*.scope" */
        char exe[WATCH_EXE_MAX + 1];       /* "/usr/sbin/mariadbd", symbolic links resolved at load */
        char exe_link[WATCH_EXE_MAX + 1];  /* as written, when that went through a symbolic link; else "" */
        unsigned line;
};

/* The entry is nothing but a comm pattern, or nothing but a pid: what the kernel's tracepoint filter can say. */
static inline bool watch_is_comm_only(const struct watch *w) {
        return w->keys == WATCH_KEY_COMM;
}
static inline bool watch_is_pid_only(const struct watch *w) {
        return w->keys == WATCH_KEY_PID && !w->children;
}

/* Without the capture, what the kernel's filter cannot say (a unit, a cgroup, an executable, a user, or a comm or
 * pid together with them) is decided in user space, once per thread, from what /proc says of its process. */
struct proc_facts {
        uint32_t tgid;
        char comm[16];
        bool have_uid, have_exe, have_cgroup;
        uid_t uid; /* real */
        dev_t exe_dev, dir_dev;
        ino_t exe_ino, dir_ino;
        char exe_name[WATCH_EXE_NAME_MAX + 1];
        char cgroup[CGROUP_PATH_MAX]; /* from the cgroup v2 root ("0::" line), or systemd's on a hybrid layout */
        uint32_t followed_root; /* the watched pid it descends from, when followed as a child; 0: none */
};

/* A key of one of the capture's maps for an entry's value (each such map's keys begin with their set), to hold the
 * entry's bit. */
#define WATCH_CAPTURE_KEYS_MAX 2
#define WATCH_CAPTURE_KEY_MAX 136 /* the largest: a unit's, set and name */
struct watch_capture_key {
        const char *map; /* the BPF program's name for it: "watch_uids" */
        size_t size;
        _Alignas(8) unsigned char key[WATCH_CAPTURE_KEY_MAX];
};

enum watch_value {
        WATCH_VALUE_STRING, /* at most size - 1 bytes */
        WATCH_VALUE_UINT,   /* within [min, max] */
        WATCH_VALUE_BOOL,
};

struct watch_key {
        const char *name; /* as the config writes it */
        unsigned flag;    /* WATCH_KEY_*; 0: a modifier of another key (children) */
        enum watch_value value;
        size_t offset, size; /* of the value in struct watch */
        uint64_t min, max;
        /* what the value must be beyond its type; 0, or -EINVAL with why (the value is quoted by the caller) */
        int (*check)(struct watch *w, char *why, size_t size);
        enum capture_class class; /* the capture's map for it */
        /* The keys the capture's maps hold for the value, in ret_keys; how many (none: nothing to match now, as an
         * executable not there).  NULL: the daemon fills the class itself (a comm's globs, a pid's children,
         * cgroups found by a walk), or the row of another name for the same key does. */
        size_t (*capture_keys)(const struct watch *w, uint32_t set,
                               struct watch_capture_key ret_keys[WATCH_CAPTURE_KEYS_MAX]);
        /* user space's verdict, without the capture (NULL: the row of another name for the same key decides) */
        bool (*matches)(const struct watch *w, const struct proc_facts *f);
        /* "comm == \"x\"", as the daemon says what it watches (NULL: as above) */
        size_t (*describe)(const struct watch *w, char *buf, size_t size);
};

extern const struct watch_key watch_keys[];
extern const size_t watch_n_keys;

/* The row of a name, or NULL. */
const struct watch_key *watch_key_named(const char *name);
/* The row that matches and says flag (the first of the names that give it). */
const struct watch_key *watch_key_of(unsigned flag);
/* "comm, pid, children, ...": every key, for messages. */
void watch_key_names(char *buf, size_t size);
/* What the whole entry must be once its keys are read; 0, or -EINVAL with why. */
int watch_entry_check(const struct watch *w, char *why, size_t size);

/* Whether one entry selects the process (every key it gives matches), or any entry of a list does (an empty
 * list: every process). */
bool watch_entry_selects(const struct watch *w, const struct proc_facts *f);
bool watch_selects(const struct watch *entries, size_t n, const struct proc_facts *f);
/* One entry as the config writes it, keys joined by "and". */
size_t watch_entry_describe(const struct watch *w, char *buf, size_t size);

/* Whether a cgroup path is at, or below, a cgroup matching pattern (fnmatch with FNM_PATHNAME), or in the unit
 * (a cgroup of that name at some level). */
bool cgroup_path_matches(const char *path, const char *pattern);
bool cgroup_path_in_unit(const char *path, const char *unit);

/* Check a comm pattern as the kernel's filter will take it; NULL when fine, else why not. */
const char *comm_pattern_problem(const char *s, bool *ret_is_glob);

/* Whether an entry needs a bit of the capture's mask of its own (it combines keys, or follows children), and
 * how many entries of a list do. */
bool watch_entry_combined(const struct watch *w);
unsigned watch_combined_entries(const struct watch *entries, size_t n);
